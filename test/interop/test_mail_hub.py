"""Issue 21, proof 2: agents built from the reference SDK alone (its
MailClient, its card and packet functions) against the Agent Mail relay of a
real `apconnect hub`, every endpoint, valid and invalid. Each request goes
both to the hub and to the SDK's own relay model (MailRelayStore, fed the
same bytes and tokens); the hub must answer what the model answers — the
same code, with the status the SDK's test relay gives that code
(crate tests/local_connector_services.rs) — and what the model accepts the
SDK's MailClient must accept from the hub.
"""

from __future__ import annotations

import copy
import json
import os

import pytest
import requests

from agent_protocols import AgentProtocolError, unix_ms
from agent_protocols.http_client import HttpResponseError, MailClient
from agent_protocols.mail import (
    MailEncryptionKey, create_mail_message, encrypt_mail, mail_part, mailbox_publish_event, validate_mail_card_record,
    validate_mail_delivery_result, validate_mail_mailbox_list, validate_mail_packet_list,
)
from agent_protocols.mail_state import MailRelayStore

from harness import SdkAgent
from mail_cases import b64, jcs, low_order_keys, owner_jwt, sign

# The status the SDK's test relay answers each code with.
STATUS = {"mailbox_unavailable": 404, "not_found": 404, "stale_card": 409, "mailbox_conflict": 409,
          "nonce_not_greater": 409, "packet_expired": 410, "permission_denied": 403, "invalid_token": 401,
          "payload_too_large": 413, "rate_limited": 429}
OK = {"publish": 200, "card": 200, "deliver": 202, "list": 200, "delete": 204, "mailboxes": 200}
TTL = 30 * 86_400_000


class HubCA(requests.adapters.HTTPAdapter):
    """Trusts the hub's CA only. MailClient sends with verify=True (the
    default bundle), bypassing a session's verify; an injected adapter is
    the SDK's documented way to bring a private CA."""

    def __init__(self, ca):
        self.ca = ca
        super().__init__()

    def cert_verify(self, conn, url, verify, cert):
        super().cert_verify(conn, url, verify, cert)
        conn.ca_certs, conn.ca_cert_dir = self.ca, None


def mail_client(hub):
    s = requests.Session()
    s.trust_env = False
    s.mount("https://", HubCA(hub.ca))
    return MailClient(hub.origin, s)


class Twin:
    """The hub's relay and the SDK's relay model, fed the same requests."""

    def __init__(self, hub):
        self.hub = hub
        self.model = MailRelayStore(hub.origin)
        self.session = hub.session()
        self.seen: set[str] = set()  # the codes both answered

    def _model(self, op, *args, **kw):
        if op != "card":
            kw["now_ms"] = unix_ms()
        try:
            out = getattr(self.model, op)(*args, **kw)
        except AgentProtocolError as err:
            return STATUS.get(err.code, 400), err.code, None
        return OK[op], None, out

    def _hub(self, method, path, body=None, token=None, params=None):
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        if token is not None:
            headers["Authorization"] = "Bearer " + token
        r = self.session.request(method, self.hub.origin + path, data=body, headers=headers, params=params, timeout=30)
        if r.status_code >= 400:
            err = HttpResponseError(r.status_code, r.text)
            assert err.code, f"{method} {path}: HTTP {r.status_code} without an error body: {r.text[:200]}"
            return r.status_code, err.code, None
        if r.status_code != 204:
            assert r.headers["Content-Type"].split(";")[0] == "application/json", r.headers
        return r.status_code, None, (r.json() if r.status_code != 204 else None)

    def both(self, name, op, hub_args, model_args, model_kw=None):
        h = self._hub(*hub_args)
        m = self._model(op, *model_args, **(model_kw or {}))
        assert h[:2] == m[:2], f"{name}: hub answers HTTP {h[0]} {h[1]}, the SDK's relay {m[0]} {m[1]}"
        self.seen.add(h[1] or "ok")
        return h[2], m[2]

    # Each endpoint, as a request to both.

    def publish(self, name, card, raw=None):
        body = raw if raw is not None else jcs(card)
        return self.both(name, "publish", ("POST", "/v1/mailboxes", body), (body,))

    def card(self, name, mailbox_id):
        return self.both(name, "card", ("GET", f"/v1/mailboxes/{mailbox_id}/card"), (mailbox_id,))[0]

    def deliver(self, name, mailbox_id, packet, raw=None):
        body = raw if raw is not None else jcs(packet)
        return self.both(name, "deliver", ("POST", f"/v1/mailboxes/{mailbox_id}/packets", body), (mailbox_id, body))

    def list(self, name, mailbox_id, token, limit=None, cursor=None):
        params, kw = {}, {}
        if limit is not None:
            params["limit"], kw["limit"] = str(limit), limit
        if cursor is not None:
            params["cursor"], kw["cursor"] = cursor, cursor
        return self.both(name, "list", ("GET", f"/v1/mailboxes/{mailbox_id}/packets", None, token, params),
                         (mailbox_id, token), kw)[0]

    def delete(self, name, mailbox_id, packet_id, token):
        self.both(name, "delete", ("DELETE", f"/v1/mailboxes/{mailbox_id}/packets/{packet_id}", None, token),
                  (mailbox_id, packet_id, token))

    def mailboxes(self, name, token, limit=None, cursor=None):
        params, kw = {}, {}
        if limit is not None:
            params["limit"], kw["limit"] = str(limit), limit
        if cursor is not None:
            params["cursor"], kw["cursor"] = cursor, cursor
        return self.both(name, "mailboxes", ("GET", "/v1/me/mailboxes", None, token, params), (token,), kw)[0]


class Owner:
    """An SDK agent with mailboxes: its key, nonces and cards."""

    def __init__(self, hub, name):
        self.agent = SdkAgent(hub, name)
        self.signer = self.agent.signer
        self.id = self.agent.id
        self.key = MailEncryptionKey.generate()
        self.hub = hub

    def card(self, mailbox_id, nonce=None, created=None, routes=None, **over):
        now = unix_ms() if created is None else created
        payload = {"mailbox_id": mailbox_id, "expires_at": now + TTL, "receive_until": now + 2 * TTL,
                   "public_key": self.key.public_key(), "routes": [self.hub.origin] if routes is None else routes,
                   "max_packet_bytes": 262144}
        payload.update(over)
        if nonce is None:
            nonce = self.agent.nonces.next_nonce(unix_ms())
        return sign(self.signer, mailbox_publish_event(self.id, now, nonce, payload))

    def token(self, audience=None):
        return owner_jwt(self.signer, audience or self.hub.origin, unix_ms())


def letter(sender, card, text="hello", expires=None, created=None, nonce=None, now=None, **extra):
    now = unix_ms() if now is None else now
    created = now if created is None else created
    m = create_mail_message(sender.id, created, {
        "to": card["event"]["actor"], "expires_at": expires or now + 3_600_000, "thread_id": b64(os.urandom(16)),
        "parts": [mail_part("text/plain", text.encode())], **extra})
    return encrypt_mail(m, card, sender.signer, nonce or sender.agent.nonces.next_nonce(unix_ms()), now_ms=now)


def new_id():
    return b64(os.urandom(16))


@pytest.fixture
def twin(hub):
    return Twin(hub)


def test_discovery(hub):
    doc = mail_client(hub).protocol()
    assert doc == {"protocol": "agent-mail/1.0", "service": hub.origin}


def test_publication(hub, twin):
    bob, carol = Owner(hub, "bob"), Owner(hub, "carol")
    mb = new_id()
    first = bob.card(mb)
    got, _ = twin.publish("first card", first)
    validate_mail_card_record(got, bob.id, mb, first["hash"])
    twin.publish("the same card again", first)
    twin.publish("another owner's card", carol.card(mb))
    twin.publish("an older nonce", bob.card(mb, nonce=first["event"]["nonce"] - 1))
    twin.publish("a first card not routed here", bob.card(new_id(), routes=["https://elsewhere.example"]))
    twin.publish("a card 400 s old", bob.card(new_id(), created=unix_ms() - 400_000))
    twin.publish("a card 400 s ahead", bob.card(new_id(), created=unix_ms() + 400_000))
    forged = copy.deepcopy(bob.card(new_id()))
    forged["signature"] = forged["signature"][:-2] + ("AA" if not forged["signature"].endswith("AA") else "BA")
    twin.publish("a forged signature", forged)
    tampered = copy.deepcopy(bob.card(new_id()))
    tampered["event"]["payload"]["max_packet_bytes"] = 8192
    twin.publish("a tampered card", tampered)
    twin.publish("a card living 31 days", bob.card(new_id(), expires_at=unix_ms() + 31 * 86_400_000))
    twin.publish("receive_until before expires_at", bob.card(new_id(), receive_until=unix_ms() + 1000))
    twin.publish("a route with a path", bob.card(new_id(), routes=[hub.origin + "/x"]))
    for route in ["https://RELAY.example", "https://relay.example:443", "https://relay.example:0443", "https://relay..example",
                  "https://-relay.example", "https://relay.example.", "https://[::1]", "https://1.2.3.4:99999", "https://relay_x.example"]:
        twin.publish(f"a route {route}", bob.card(new_id(), routes=[route]))
    twin.publish("nine routes", bob.card(new_id(), routes=[f"https://r{i}.example" for i in range(9)]))
    twin.publish("max_packet_bytes 4095", bob.card(new_id(), max_packet_bytes=4095))
    for name, raw in list(low_order_keys().items())[:3]:
        twin.publish(f"low-order key {name}", bob.card(new_id(), public_key=b64(raw)))
    twin.publish("not JSON", None, raw=b'{"event":')
    twin.publish("duplicate members", None, raw=b'{"a":1,"a":2}')
    twin.publish("an oversized body", None, raw=b" " * (1_048_576 + 65_537))
    closed = bob.card(mb, routes=[])
    twin.publish("a closing card", closed)
    assert twin.card("the closed card", mb)["envelope"]["hash"] == closed["hash"]
    twin.card("an unknown mailbox", new_id())
    twin.card("a malformed mailbox ID", "not-an-id")
    # The SDK's own client takes the hub's answers.
    client = mail_client(hub)
    assert client.card(mb, bob.id)["envelope"]["hash"] == closed["hash"]
    later = bob.card(mb)
    assert client.publish(later)["envelope"]["hash"] == later["hash"]
    twin.model.publish(later, now_ms=unix_ms())
    assert twin.seen >= {"ok", "mailbox_conflict", "nonce_not_greater", "permission_denied", "timestamp_out_of_window",
                         "invalid_signature", "invalid_event_hash", "invalid_event", "invalid_url", "payload_too_large",
                         "mailbox_unavailable", "invalid_request"}, twin.seen


def test_delivery(hub, twin):
    bob, alice = Owner(hub, "bob"), Owner(hub, "alice")
    mb, small = new_id(), new_id()
    card = bob.card(mb)
    twin.publish("card", card)
    tiny = bob.card(small, max_packet_bytes=4096)
    twin.publish("small card", tiny)
    p = letter(alice, card)
    first, _ = twin.deliver("a letter", mb, p)
    validate_mail_delivery_result(first, p)
    again, _ = twin.deliver("the same packet again", mb, p)
    assert again == first, (first, again)
    twin.deliver("path and header disagree", small, letter(alice, card))
    unknown = new_id()
    twin.deliver("an unknown mailbox", unknown, letter(alice, bob.card(unknown)))
    twin.deliver("a malformed path ID", "nope", letter(alice, card))
    twin.deliver("an expired packet", mb, letter(alice, card, now=unix_ms() - 10_000, expires=unix_ms() - 5_000))
    twin.deliver("a future packet", mb, letter(alice, card, now=unix_ms() + 400_000, expires=unix_ms() + 3_600_000))
    brief = new_id()
    soon = bob.card(brief, expires_at=unix_ms() + 3_600_000, receive_until=unix_ms() + 3_600_000)
    twin.publish("a card received for one hour", soon)
    late = letter(alice, card, expires=unix_ms() + 7_200_000)
    twin.deliver("a packet past the card's receive_until", brief, None, raw=jcs(_rehead(alice, late, brief, soon["hash"])))
    big = letter(alice, card, text="x" * 5000)
    twin.deliver("over the card's max_packet_bytes", small, None,
                 raw=jcs(_rehead(alice, big, small, tiny["hash"])))
    tampered = copy.deepcopy(letter(alice, card))
    ct = tampered["event"]["payload"]["ciphertext"]
    tampered["event"]["payload"]["ciphertext"] = ("B" if ct[0] != "B" else "C") + ct[1:]
    twin.deliver("a tampered ciphertext", mb, tampered)
    short = copy.deepcopy(letter(alice, card))
    short["event"]["payload"]["ciphertext"] = short["event"]["payload"]["ciphertext"][:100]
    twin.deliver("a truncated ciphertext", mb, None, raw=jcs(sign(alice.signer, short["event"])))
    twin.deliver("not JSON", mb, None, raw=b"[1,")
    twin.deliver("an oversized body", mb, None, raw=b" " * (1_048_576 + 65_537))
    stale = letter(alice, card)
    twin.publish("a newer card", bob.card(mb))
    twin.deliver("a packet for the replaced card", mb, stale)
    twin.deliver("the first packet once more, after the replacement", mb, p)
    # The SDK's own client delivers to the hub.
    current = twin.card("the current card", mb)["envelope"]
    q = letter(alice, current)
    assert mail_client(hub).deliver(q)["packet_id"] == q["hash"]
    twin.model.deliver(mb, q, now_ms=unix_ms())
    assert twin.seen >= {"ok", "invalid_event", "mailbox_unavailable", "invalid_request", "packet_expired",
                         "timestamp_out_of_window", "payload_too_large", "invalid_event_hash", "stale_card"}, twin.seen


def _rehead(sender, packet, mailbox_id, card_hash):
    """The packet's event with another header, signed again: a packet whose
    signature holds for a header it was not sealed under."""
    ev = copy.deepcopy(packet["event"])
    ev["payload"]["header"]["mailbox_id"] = mailbox_id
    ev["payload"]["header"]["card_hash"] = card_hash
    return sign(sender.signer, ev)


def test_owner_calls(hub, twin):
    bob, alice = Owner(hub, "bob"), Owner(hub, "alice")
    mb = new_id()
    card = bob.card(mb)
    twin.publish("card", card)
    ids = []
    for i in range(5):
        p = letter(alice, card, text=f"letter {i}")
        twin.deliver(f"letter {i}", mb, p)
        ids.append(p["hash"])
    twin.list("no token", mb, None)
    twin.list("a malformed token", mb, "x.y.z")
    twin.list("a token for another origin", mb, bob.token("https://elsewhere.example"))
    twin.list("another agent's token", mb, alice.token())
    twin.list("an unknown mailbox", new_id(), bob.token())
    twin.list("a malformed mailbox ID", "xyz", bob.token())
    twin.list("limit 0", mb, bob.token(), limit=0)
    twin.list("limit 1001", mb, bob.token(), limit=1001)
    twin.list("cursor with a leading zero", mb, bob.token(), cursor="01")
    twin.list("cursor of 17 digits", mb, bob.token(), cursor="1" * 17)
    seen, cursor = [], None
    while True:
        page = twin.list("a page", mb, bob.token(), limit=2, cursor=cursor)
        validate_mail_packet_list(page, mb, limit=2)
        seen += [r["packet_id"] for r in page["result"]]
        cursor = page.get("next_cursor")
        if not cursor:
            break
    assert seen == ids, (seen, ids)
    client = mail_client(hub)
    assert [r["packet_id"] for r in client.list(mb, bob.id, bob.token())["result"]] == ids
    twin.delete("another agent deletes", mb, ids[0], alice.token())
    twin.delete("a malformed packet ID", mb, "xyz", bob.token())
    twin.delete("the owner deletes", mb, ids[0], bob.token())
    twin.delete("the owner deletes again", mb, ids[0], bob.token())
    client.delete(mb, ids[1], bob.id, bob.token())
    twin.model.delete(mb, ids[1], bob.token(), now_ms=unix_ms())
    assert [r["packet_id"] for r in twin.list("after deletions", mb, bob.token())["result"]] == ids[2:]

    for i in range(2):
        twin.publish(f"another mailbox {i}", bob.card(new_id()))
    twin.mailboxes("no token", None)
    twin.mailboxes("limit 0", bob.token(), limit=0)
    twin.mailboxes("a malformed cursor", bob.token(), cursor="x")
    assert twin.mailboxes("alice has none here", alice.token()) == {"result": []}
    seen, cursor = [], None
    while True:
        page = twin.mailboxes("a page of Bob's mailboxes", bob.token(), limit=2, cursor=cursor)
        validate_mail_mailbox_list(page, bob.id, limit=2)
        seen += [r["envelope"]["event"]["payload"]["mailbox_id"] for r in page["result"]]
        cursor = page.get("next_cursor")
        if not cursor:
            break
    assert len(seen) == 3 and seen == sorted(seen), seen
    assert len(client.mailboxes(bob.id, bob.token())["result"]) == 3
    assert twin.seen >= {"ok", "invalid_token", "permission_denied", "mailbox_unavailable", "invalid_request"}, twin.seen


def test_errors_are_the_kernel_shape(hub, twin):
    """Every refusal is the Agent Identity error body with a code."""
    r = twin.session.get(hub.origin + "/v1/mailboxes/" + new_id() + "/card", timeout=10)
    body = json.loads(r.text)
    assert r.status_code == 404 and body["error"]["code"] == "mailbox_unavailable" and body["error"]["message"]
