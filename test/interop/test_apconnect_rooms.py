"""Issue 9, part 3: what real `apconnect` processes write — rooms, records,
archives, profiles and request JWTs — verified by the reference SDK.

Two apconnect identities (each its own home, created with `apconnect init`)
act through `apconnect call`, exactly as an agent's tool calls would. The
SDK then reads what they wrote from the hub and verifies it with its own
functions; the request JWTs are caught by a recording HTTPS host and checked
with verify_request_jwt.
"""

from __future__ import annotations

import time

from agent_protocols import (
    ProfileCache,
    materialize_profile,
    parse_strict_json,
    unix_ms,
    unix_secs,
    validate_profile_update,
    verify_request_jwt,
)
from agent_protocols.discourse import (
    validate_discourse_envelope,
    validate_room_create_host,
    validate_room_create_payload,
    verify_archive_records,
    verify_pack_digest,
    verify_server_record_chain,
)

from harness import Apconnect, RecordingHost
from sdkref import kernel_errors
from vectors import reader_verdict


def room_of(result):
    """The room id in a room_create result (seed and 0.12.6 shapes)."""
    room = result.get("room") or {}
    rid = room.get("room_id") or room.get("id") or result.get("room_id")
    assert rid, f"room_create result without a room id: {result}"
    return rid


def test_apconnect_room_verifies_in_the_sdk(hub, apc, sdk):
    alice, bob = apc("alice"), apc("bob")
    now = unix_ms()
    created = alice.ok("room_create", {
        "host": hub.origin, "topic": "written by apconnect", "visibility": "public",
        "start_time": now - 60_000, "end_time": now + 3_600_000,
        "policy": {"open_roles": ["speaker", "observer"]},
        "types": [{"use": "adp:reactions/1.0"}, {"use": "adp:moderation/1.0"}],
    })
    rid = room_of(created)
    bob.ok("room_join", {"host": hub.origin, "room_id": rid, "role": "speaker"})
    first = alice.ok("room_send_message", {"room_id": rid, "content": "hello from alice", "mentions": [bob.id]})
    bob.ok("room_send_message", {"room_id": rid, "content": "hello from bob"})
    bob.ok("room_send_message", {"room_id": rid, "content": '{"k": [1, 2]}', "content_type": "application/json"})
    event_id = (first.get("record") or {}).get("envelope", {}).get("hash") or first.get("event_id")
    assert event_id, f"room_send_message result without the event id: {first}"
    bob.ok("room_submit_event", {"room_id": rid, "type": "reaction.create", "payload": {"event_id": event_id, "reaction": "agree"}})
    alice.ok("room_submit_event", {"room_id": rid, "type": "turn.update", "payload": {"turn_id": 1, "speaker": bob.id}})
    bob.ok("room_send_message", {"room_id": rid, "content": "my turn"})
    alice.ok("room_submit_event", {"room_id": rid, "type": "room.update", "payload": {"guidance": "be brief"}})
    alice.ok("room_submit_event", {"room_id": rid, "type": "type.define", "payload": {
        "type": "note.add", "kind": "message", "title": "Note",
        "schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}})
    # `apconnect call` runs no live sync between calls: bob reads the room
    # to learn the new type before using it.
    bob.ok("room_open", {"host": hub.origin, "room_id": rid, "refresh": True})
    bob.ok("room_submit_event", {"room_id": rid, "type": "note.add", "payload": {"text": "noted"}})
    bob.ok("room_submit_event", {"room_id": rid, "type": "room.leave", "payload": {}})
    alice.ok("room_submit_event", {"room_id": rid, "type": "room.close", "payload": {"reason": "done"}})

    reader = sdk("reader")
    records = reader.records(rid)
    assert len(records) == 13, [r["envelope"]["event"]["type"] for r in records]
    verify_server_record_chain(records)
    for rec in records:
        assert kernel_errors("serverRecord", rec) == [], kernel_errors("serverRecord", rec)
        validate_discourse_envelope(rec["envelope"])
    genesis = records[0]["envelope"]["event"]["payload"]
    validate_room_create_payload(genesis)
    validate_room_create_host(genesis, hub.origin)
    assert kernel_errors("roomCreatePayload", genesis) == []
    verdicts = reader_verdict(records)
    assert all(isinstance(v, dict) for v in verdicts), f"the SDK's reader rules refuse apconnect's room: {verdicts}"
    actors = {r["envelope"]["event"]["actor"] for r in records}
    assert actors == {alice.id, bob.id}

    manifest = reader.discourse.archive(rid)
    assert kernel_errors("archiveManifest", manifest) == [], kernel_errors("archiveManifest", manifest)
    r = reader.session.get(manifest["formats"]["jsonl"], headers={"Authorization": f"Bearer {reader.jwt()}"})
    assert r.status_code == 200, r.text[:300]
    lines = [parse_strict_json(line) for line in r.content.decode().splitlines() if line.strip()]
    for i, line in enumerate(lines):
        assert kernel_errors("serverRecord", line) == [], f"D-21: JSONL line {i + 1} is not a record: {str(line)[:200]}"
    assert verify_archive_records(manifest, lines) == []
    assert lines == records
    for pack in manifest.get("packs", []):
        verify_pack_digest(reader.session.get(pack["url"]).content, pack["digest"])

    # apconnect's own archive verifier agrees on the same archive.
    out = alice.run("verify-archive", "--ca", hub.ca, f"{hub.origin}/v1/rooms/{rid}/archive")
    assert "verified" in out.lower(), out


def test_apconnect_profile_verifies_in_the_sdk(hub, apc, sdk):
    alice = apc("alice")
    alice.ok("profile_update", {"profile_service": hub.origin, "profile": {
        "name": "Alice (apconnect)", "description": "interop", "capabilities": ["research"],
        "links": [{"name": "Home", "url": "https://example.com", "rel": "homepage"}]}})
    reader = sdk("reader")
    latest = reader.profiles.latest_profile_update(alice.id)
    validate_profile_update(latest)
    assert latest["event"]["actor"] == alice.id and latest["event"]["payload"]["id"] == alice.id
    assert kernel_errors("profileUpdateEnvelope", latest, schema=__import__("sdkref")._PROFILE) == []
    expected = materialize_profile(latest)
    served = reader.profiles.get_profile(alice.id)
    for k, v in expected.items():
        if k in served or v not in (None, [], {}):
            assert served.get(k) == v, f"{k}: hub {served.get(k)!r}, SDK {v!r}"
    cache = ProfileCache()
    cache.observe(latest, alice.id)
    # A second update supersedes the first under the SDK's succession rule.
    alice.ok("profile_update", {"profile_service": hub.origin, "profile": {"name": "Alice 2"}})
    newer = reader.profiles.latest_profile_update(alice.id)
    assert newer["event"]["nonce"] > latest["event"]["nonce"]
    cache.observe(newer, alice.id)


def test_apconnect_request_jwts_verify_in_the_sdk(tmp_path, hub):
    """apconnect's request JWTs pass the SDK's verifier with zero skew, also
    for a host whose clock is a second behind (D-18/D-19)."""
    rec = RecordingHost(tmp_path / "recorder")
    try:
        agent = Apconnect(tmp_path / "home", hub, "jwt", host=rec.origin, ca=rec.ca)
        agent.call("room_open", {"host": rec.origin, "room_id": "someroom"})
        agent.call("agent_status_set", {"host": rec.origin, "room_id": "someroom", "state": "idle"})
        tokens = rec.tokens()
        assert tokens, f"apconnect sent no request JWT: {rec.requests}"
        from sdkref import verdict

        for req, token in tokens:
            got = verdict(verify_request_jwt, token, audience=rec.origin, now_secs=req["at"], max_ttl_secs=300)
            assert got == "ok", f"{req['method']} {req['path']}: the SDK refuses apconnect's JWT ({got}) at its arrival second"
            claims = verify_request_jwt(token, audience=rec.origin, now_secs=req["at"], max_ttl_secs=300)
            assert claims["iss"] == claims["sub"] == agent.id
            # D-19: a host whose clock is a second behind still accepts it.
            got = verdict(verify_request_jwt, token, audience=rec.origin, now_secs=req["at"] - 1, max_ttl_secs=300)
            assert got == "ok", (f"D-19: a 0.12.6 host one second behind refuses apconnect's JWT "
                                 f"(iat {claims['iat']}, arrived at {req['at']}): backdate iat")
    finally:
        rec.stop()
