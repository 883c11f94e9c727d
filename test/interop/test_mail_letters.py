"""Issue 21, proof 3: letters both ways between an apconnect agent (the real
binary, `apconnect call`) and an agent made of the reference SDK alone,
through a real `apconnect hub`: the SDK seals with encrypt_mail to the card
apconnect published, apconnect's mail_sync opens it; apconnect's reply goes
to the SDK agent's reply card and the SDK's decrypt_mail opens it, threaded
(in_reply_to, thread_id, checked with validate_mail_reply); and the reply
card apconnect received is pinned.
"""

from __future__ import annotations

import os

from agent_protocols import unix_ms
from agent_protocols.mail import (
    MailEncryptionKey, create_mail_message, decode_mail_part, decrypt_mail, encrypt_mail, mail_part,
    mailbox_publish_event, parse_mail_address, validate_mail_reply,
)

from harness import SdkAgent
from mail_cases import b64, owner_jwt, sign
from test_mail_hub import mail_client

TTL = 30 * 86_400_000


class SdkMailAgent:
    """An SDK agent with one mailbox on the hub, reading it with MailClient."""

    def __init__(self, hub, name):
        self.agent = SdkAgent(hub, name)
        self.id = self.agent.id
        self.hub = hub
        self.key = MailEncryptionKey.generate()
        self.client = mail_client(hub)
        self.mailbox = b64(os.urandom(16))
        now = unix_ms()
        self.card = sign(self.agent.signer, mailbox_publish_event(self.id, now, self.agent.nonces.next_nonce(now), {
            "mailbox_id": self.mailbox, "expires_at": now + TTL, "receive_until": now + 2 * TTL,
            "public_key": self.key.public_key(), "routes": [hub.origin], "max_packet_bytes": 262144}))
        self.client.publish(self.card)
        self.address = f"{self.id}/mail/{self.mailbox}?route={hub.origin}"

    def send(self, address, text, **extra):
        a = parse_mail_address(address)
        card = self.client.card(a["mailbox_id"], a["owner"])["envelope"]
        now = unix_ms()
        extra.setdefault("thread_id", b64(os.urandom(16)))
        m = create_mail_message(self.id, now, {"to": a["owner"], "expires_at": now + 3_600_000,
                                               "parts": [mail_part("text/plain", text.encode())], **extra})
        packet = encrypt_mail(m, card, self.agent.signer, self.agent.nonces.next_nonce(now), now_ms=now)
        self.client.deliver(packet)
        return m

    def receive(self):
        """Every letter waiting, opened with the SDK's decrypt_mail, and
        deleted from the relay."""
        token = owner_jwt(self.agent.signer, self.hub.origin, unix_ms())
        page = self.client.list(self.mailbox, self.id, token)
        out = []
        for rec in page["result"]:
            out.append(decrypt_mail(rec["packet"], self.card, self.key, self.id, now_ms=unix_ms()))
            self.client.delete(self.mailbox, rec["packet_id"], self.id, token)
        return out


def text_of(message):
    return decode_mail_part(message["parts"][0]).decode()


def test_letters_both_ways(hub, apc):
    ap = apc("letters")
    box = ap.ok("mail_mailbox_publish", {"routes": [hub.origin]})["mailbox"]
    sdk = SdkMailAgent(hub, "sdk-mail")

    # SDK -> apconnect, with a reply card.
    first = sdk.send(box["address"], "Hello from the SDK", subject="Interop", reply_card=sdk.card)
    got = ap.ok("mail_sync")
    assert [m["message_id"] for m in got["received"]] == [first["message_id"]], got
    r = got["received"][0]
    assert r["from"] == sdk.id and r["parts"][0]["text"] == "Hello from the SDK" and r["subject"] == "Interop", r
    assert r["reply_address"] == sdk.address, r
    item = ap.ok("inbox_next", {"kinds": ["mail.received"]})["items"][0]
    assert item["id"] == f"mail.received:{sdk.id}:{first['message_id']}" and item["message"]["summary"] == "Interop", item
    # The reply card is pinned.
    pinned = ap.ok("mail_resolve", {"agent_id": sdk.id})["mailboxes"]
    assert [p["card"]["hash"] for p in pinned] == [sdk.card["hash"]], pinned

    # apconnect replies to the reply card; the SDK opens and checks it.
    reply = ap.ok("mail_send", {"in_reply_to": first["message_id"], "text": "Hello back from apconnect"})
    assert reply["status"] == "delivered", reply
    opened = sdk.receive()
    assert len(opened) == 1 and text_of(opened[0]) == "Hello back from apconnect", opened
    validate_mail_reply(opened[0], first)
    assert opened[0]["thread_id"] == first["thread_id"] and opened[0]["in_reply_to"] == first["message_id"]

    # apconnect -> SDK with its own reply card; the SDK answers to it.
    out = ap.ok("mail_send", {"to": sdk.address, "subject": "Second", "text": "A new thread",
                              "reply_mailbox_id": box["mailbox_id"]})
    opened = sdk.receive()
    assert len(opened) == 1 and opened[0]["message_id"] == out["message"]["message_id"], opened
    assert opened[0]["reply_card"]["event"]["payload"]["mailbox_id"] == box["mailbox_id"]
    answer = sdk.send(f"{ap.id}/mail/{box['mailbox_id']}?route={hub.origin}", "Answer in your thread",
                      thread_id=opened[0]["thread_id"], in_reply_to=opened[0]["message_id"])
    validate_mail_reply(answer, opened[0])
    back = ap.ok("mail_sync")["received"]
    assert len(back) == 1 and back[0]["in_reply_to"] == out["message"]["message_id"], back
    thread = ap.ok("mail_list", {"thread_id": out["message"]["thread_id"]})["messages"]
    assert [m["direction"] for m in thread] == ["sent", "received"], thread
