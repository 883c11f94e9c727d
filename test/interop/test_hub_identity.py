"""Issue 9, part 2 (identity rules on the wire): request JWTs, envelopes,
nonces and Max-Seen-Nonce, exact resubmission and the live window, as a
0.12.6 client meets them at `apconnect hub`."""

from __future__ import annotations

import json

import pytest

from agent_protocols import (
    ClientNonceManager,
    parse_envelope_json,
    unix_ms,
    unix_secs,
    verify_envelope,
    verify_request_jwt,
)

from harness import http_code
from known_differences import HUB_DIFFERENCES
from sdkref import verdict
from test_hub_writes import TEXT, Room
from vectors import jwt as craft_jwt


def key_of(agent):
    """The agent's key, to sign hand-made JWTs the SDK's signer would not."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    return Ed25519PrivateKey.from_private_bytes(agent.seed)


JWT_CASES = {
    # name: (header changes, claim changes relative to now)
    "a fresh token": ({}, {}),
    "iat one second ahead (D-18)": ({}, {"iat": 1, "exp": 61}),
    "iat 30 seconds ahead (D-18)": ({}, {"iat": 30, "exp": 90}),
    "exp one second ago (D-18)": ({}, {"iat": -60, "exp": -1}),
    "lifetime 301 s": ({}, {"exp": 301}),
    "no typ (D-18)": ({"typ": None}, {}),
    "crit header (D-18)": ({"crit": ["x"]}, {}),
    "jti claim": ({}, {"jti": "x"}),
    "audience with a path": ({}, {"aud": "/v1"}),
}


@pytest.mark.parametrize("name", list(JWT_CASES))
def test_request_jwt_rules(hub, sdk, name):
    """The hub's verdict on a request JWT equals verify_request_jwt's with
    zero skew, except where known_differences.py records host policy."""
    agent = sdk()
    head, claims_delta = JWT_CASES[name]
    now = unix_secs()
    header = {"alg": "EdDSA", "typ": "JWT", "kid": agent.id}
    header.update(head)
    header = {k: v for k, v in header.items() if v is not None}
    claims = {"iss": agent.id, "sub": agent.id, "aud": hub.origin, "iat": now, "exp": now + 300}
    for k, v in claims_delta.items():
        claims[k] = hub.origin + v if k == "aud" else (now + v if k in ("iat", "exp") else v)
    token = craft_jwt(header, claims, key_of(agent))
    sdk_verdict = verdict(verify_request_jwt, token, audience=hub.origin, now_secs=now, max_ttl_secs=300)
    expected = "ok" if sdk_verdict == "ok" else "invalid_token"
    got = http_code(agent.discourse.my_rooms, token)
    known = HUB_DIFFERENCES.get(f"jwt: {name}")
    if known is not None:
        assert got == known["hub"], f"{name}: documented as {known['hub']}, hub now answers {got}"
        return
    assert got == expected, f"{name}: SDK {expected}, hub {got}"


def test_envelope_errors(sdk):
    alice = sdk("alice")
    room = Room(alice)
    env = alice.sign(alice.event("message.create", room.id, room.head, TEXT))
    bad_hash = dict(env, hash="A" * 43)
    sig = bytearray(__import__("base64").urlsafe_b64decode(env["signature"] + "=="))
    sig[5] ^= 0xFF
    bad_sig = dict(env, signature=__import__("base64").urlsafe_b64encode(bytes(sig)).rstrip(b"=").decode())
    unknown = dict(env, event=dict(env["event"], audience="x"))
    unknown = alice.sign(unknown["event"])
    for name, e in (("wrong hash", bad_hash), ("bad signature", bad_sig), ("unknown event field", unknown)):
        def sdk_check(e=e):
            verify_envelope(parse_envelope_json(json.dumps(e)))
            from agent_protocols.discourse import validate_discourse_event_fields
            validate_discourse_event_fields(e["event"])
        expected = verdict(sdk_check)
        got = http_code(alice.discourse.submit_event, room.id, e)
        assert got == expected, f"{name}: SDK {expected}, hub {got}"
    # Duplicate member names are refused before anything else (strict JSON).
    raw = json.dumps(env)[:-1] + ', "hash": "x"}'
    r = alice.session.post(alice.discourse.rooms_url + "/" + room.id, data=raw, headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_event", r.text


def test_exact_resubmission_and_window(sdk):
    """Agent Identity 6.3: an exact resubmission returns the accepted record;
    created_at outside the 300 s window is timestamp_out_of_window."""
    from agent_protocols.discourse import discourse_event

    alice = sdk("alice")
    room = Room(alice)
    env = alice.sign(alice.event("message.create", room.id, room.head, TEXT))
    first = alice.discourse.submit_event(room.id, env)
    again = alice.discourse.submit_event(room.id, env)
    assert again == first, "an exact resubmission did not return the accepted record"
    old = unix_ms() - 301_000
    ev = discourse_event("message.create", alice.id, old, alice.nonces.next_nonce(unix_ms()), room.id, room.head[0], room.head[1], TEXT)
    assert http_code(alice.discourse.submit_event, room.id, alice.sign(ev)) == "timestamp_out_of_window"


def test_max_seen_nonce(sdk):
    """nonce_not_greater carries a Max-Seen-Nonce header that the SDK's
    ClientNonceManager accepts within its bound (D-16), after which the
    re-signed write is accepted."""
    from agent_protocols.discourse import discourse_event
    from agent_protocols.http_client import HttpResponseError

    alice = sdk("alice")
    room = Room(alice)
    room.write(alice, "message.create", TEXT)
    used = alice.nonces.peek() - 1
    fresh = ClientNonceManager(1)  # a second device that lost its sequence
    now = unix_ms()
    ev = discourse_event("message.create", alice.id, now, fresh.next_nonce(), room.id, room.head[0], room.head[1], TEXT)
    with pytest.raises(HttpResponseError) as exc:
        alice.discourse.submit_event(room.id, alice.sign(ev))
    err = exc.value
    assert err.code == "nonce_not_greater", err.body
    assert err.max_seen_nonce is not None, "nonce_not_greater without a Max-Seen-Nonce header"
    assert err.max_seen_nonce.isdigit() and int(err.max_seen_nonce) >= used
    fresh.observe_max_nonce(err.max_seen_nonce, now)
    assert fresh.peek() == int(err.max_seen_nonce) + 1
    ev = discourse_event("message.create", alice.id, unix_ms(), fresh.next_nonce(), room.id, room.head[0], room.head[1], TEXT)
    assert http_code(alice.discourse.submit_event, room.id, alice.sign(ev)) == "ok"
    # Profile succession uses the same header.
    alice.update_profile({"id": alice.id, "name": "A"})
    stale = alice.profile_event({"id": alice.id, "name": "B"})
    stale["nonce"] = 5
    with pytest.raises(HttpResponseError) as exc:
        alice.profiles.submit_profile_update(alice.sign(stale))
    assert exc.value.code == "nonce_not_greater" and exc.value.max_seen_nonce
