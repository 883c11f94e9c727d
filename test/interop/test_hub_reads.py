"""Issue 9, part 2 (reads): every read endpoint of `apconnect hub` through
the reference SDK's HTTP client, checked against the SDK's shapes (its
kernel schema and the members its typed decoders require) and verified with
the SDK's own functions."""

from __future__ import annotations

import json
import threading
import time

import requests

from agent_protocols import parse_strict_json, unix_ms, validate_origin
from agent_protocols.discourse import (
    validate_discourse_envelope,
    verify_archive_records,
    verify_pack_digest,
    verify_server_record_chain,
)

from harness import http_code
from sdkref import kernel_errors, verdict
from test_hub_writes import TEXT, Room

ROOM_RESOURCE_REQUIRED = ("id", "status", "url", "seq", "hash", "accepted_at")


def assert_room_resource(res, where):
    """The members the 0.12.6 RoomResponse requires, and its closed parts."""
    missing = [m for m in ROOM_RESOURCE_REQUIRED if m not in res]
    assert not missing, f"{where}: room resource lacks {missing}: {json.dumps(res)[:400]}"
    if "policy" in res:
        assert kernel_errors("roomPolicy", res["policy"]) == [], f"{where}: policy {res['policy']}"
    for i, t in enumerate(res.get("types") or []):
        assert kernel_errors("typeDef", t) == [], f"{where}: types[{i}] {kernel_errors('typeDef', t)}"


def test_discovery_document(hub, sdk):
    """D-06/D-07: `rooms` and `my_rooms`, no `public_rooms`/`me_rooms`, and a
    `profile` resolver the SDK's closed type parses: {service, required?}."""
    agent = sdk()
    doc = agent.discourse.protocol()
    assert kernel_errors("discoveryDocument", doc) == [], kernel_errors("discoveryDocument", doc)
    endpoints = doc.get("endpoints", {})
    assert endpoints.get("rooms") == hub.origin + "/v1/rooms", endpoints
    assert endpoints.get("my_rooms") == hub.origin + "/v1/me/rooms", endpoints
    stale = sorted(set(endpoints) & {"public_rooms", "me_rooms"})
    assert not stale, f"endpoint names 0.12.6 does not read: {stale}"
    profile = doc.get("profile")
    if profile is not None:
        assert set(profile) <= {"service", "required"}, f"profile resolver has members the SDK refuses: {profile}"
        assert verdict(validate_origin, profile.get("service")) == "ok", profile
    assert doc["service"] == hub.origin and verdict(validate_origin, doc["service"]) == "ok"
    # The SDK client built from discovery uses these endpoints.
    assert agent.discourse.rooms_url == hub.origin + "/v1/rooms"
    assert agent.discourse.my_rooms_url == hub.origin + "/v1/me/rooms"


def test_public_room_list(sdk):
    """D-04: public discovery is GET {rooms}, with the SDK's filters; every
    item is a room resource."""
    alice = sdk("alice")
    tag = f"t{unix_ms()}"
    public = alice.create_room(topic="public interop", tags=[tag], language="en")
    alice.create_room(topic="private interop", visibility="private", tags=[tag])
    page = alice.discourse.public_rooms(tag=tag)
    ids = [r["id"] for r in page["result"]]
    assert ids == [public["id"]], f"GET /v1/rooms?tag={tag} gave {ids}"
    for r in page["result"]:
        assert_room_resource(r, "GET /v1/rooms")
    assert alice.discourse.public_rooms(tag=tag, language="de")["result"] == []
    assert [r["id"] for r in alice.discourse.public_rooms(tag=tag, creator=alice.id)["result"]] == ids
    assert [r["id"] for r in alice.discourse.public_rooms(keyword="public interop", tag=tag)["result"]] == ids
    assert [r["id"] for r in alice.discourse.public_rooms(tag=tag, status="active")["result"]] == ids
    # pagination: next_cursor exactly when more follow
    more = [alice.create_room(tags=[tag + "p"]) for _ in range(3)]
    seen, cursor = [], None
    while True:
        page = alice.discourse.public_rooms(tag=tag + "p", limit=2, cursor=cursor)
        seen += [r["id"] for r in page["result"]]
        cursor = page.get("next_cursor")
        if not cursor:
            break
    assert sorted(seen) == sorted(r["id"] for r in more)


def test_my_rooms(sdk):
    """D-05: /v1/me/rooms items are full room resources plus membership and
    role, for the SDK's membership filters."""
    alice, bob = sdk("alice"), sdk("bob")
    room = Room(alice, policy={"open_roles": ["speaker"]})
    room.write(bob, "room.join", {"role": "speaker"})
    mine = bob.discourse.my_rooms(bob.jwt())
    assert [r["id"] for r in mine["result"]] == [room.id]
    item = mine["result"][0]
    assert_room_resource(item, "GET /v1/me/rooms")
    assert item.get("role") == "speaker" and "membership" in item, item
    created = alice.discourse.my_rooms(alice.jwt())["result"]
    assert [r["id"] for r in created] == [room.id] and created[0].get("role") == "moderator"
    for membership in ("member", "creator", "moderator", "pending", "invited", "left", "all"):
        code = http_code(alice.discourse.my_rooms, alice.jwt(), membership=membership)
        assert code == "ok", f"membership={membership} (an SDK filter value): {code}"
    assert http_code(alice.discourse.my_rooms, "not-a-jwt") == "invalid_token"


def test_room_resource_and_events(sdk):
    alice = sdk("alice")
    room = Room(alice, types=[{"use": "adp:reactions/1.0"}])
    for i in range(4):
        room.write(alice, "message.create", {"content_type": "text/plain", "content": f"m{i}"})
    res = alice.room(room.id)
    assert_room_resource(res, "GET /v1/rooms/{id}")
    assert (res["seq"], res["hash"]) == room.last
    head = res.get("head") or {"seq": res["seq"], "hash": res["hash"]}
    assert (head["seq"], head["hash"]) == room.head, f"hub head {head}, SDK head {room.head}"
    # anonymous read of a public room
    assert alice.discourse.room(room.id)["id"] == room.id
    # events: pagination keeps after_seq and follows the cursor (the SDK's sync)
    records, cursor = [], None
    while True:
        page = alice.discourse.events(room.id, after_seq=1, limit=2, cursor=cursor, jwt=alice.jwt())
        assert kernel_errors("roomEventsResponse", page) == []
        records += page["result"]
        cursor = page.get("next_cursor")
        if not cursor:
            break
    assert [r["seq"] for r in records] == [2, 3, 4, 5]
    all_records = alice.discourse.events(room.id, after_seq=0, limit=1000, jwt=alice.jwt())["result"]
    verify_server_record_chain(all_records)
    for rec in all_records:
        assert kernel_errors("serverRecord", rec) == []
        validate_discourse_envelope(rec["envelope"])
    assert http_code(alice.discourse.room, "nosuchroom") == "room_not_found"


def test_private_room_reads_need_membership(sdk):
    alice, bob = sdk("alice"), sdk("bob")
    room = Room(alice, visibility="private")
    assert http_code(bob.discourse.room, room.id, jwt=bob.jwt()) in ("room_not_found", "permission_denied", "membership_required")
    assert http_code(bob.discourse.events, room.id, jwt=bob.jwt()) in ("room_not_found", "permission_denied", "membership_required")
    assert alice.room(room.id)["id"] == room.id


def fetch(agent, url):
    r = agent.session.get(url, headers={"Authorization": f"Bearer {agent.jwt()}"})
    assert r.status_code == 200, f"GET {url}: {r.status_code} {r.text[:300]}"
    return r


def test_archive(hub, sdk):
    """D-21: manifest with formats.jsonl (and packs[] for external packs),
    JSONL of records only, verified by the SDK (verify_archive_records)."""
    alice = sdk("alice")
    room = Room(alice, types=[{"use": "adp:reactions/1.0"}])
    msg = room.write(alice, "message.create", TEXT)
    room.write(alice, "reaction.create", {"event_id": msg["envelope"]["hash"], "reaction": "agree"}, base=room.last)
    room.write(alice, "room.close", {"reason": "done"}, base=room.last)
    manifest = alice.discourse.archive(room.id)
    assert kernel_errors("archiveManifest", manifest) == [], kernel_errors("archiveManifest", manifest)
    assert manifest["room_id"] == room.id and manifest["protocol"] == "agent-discourse/1.0" and manifest["type"] == "room.archive"
    jsonl_url = manifest["formats"]["jsonl"]
    assert jsonl_url.startswith(hub.origin + "/"), jsonl_url
    body = fetch(alice, jsonl_url).content.decode()
    records = [parse_strict_json(line) for line in body.splitlines() if line.strip()]
    for i, rec in enumerate(records):
        assert kernel_errors("serverRecord", rec) == [], f"JSONL line {i + 1} is not a server record: {json.dumps(rec)[:200]}"
    assert verify_archive_records(manifest, records) == []
    assert [r["seq"] for r in records] == list(range(1, len(room.records) + 1))
    for pack in manifest.get("packs", []):
        data = fetch(alice, pack["url"]).content
        verify_pack_digest(data, pack["digest"])
    markdown = manifest["formats"].get("markdown")
    if markdown:
        assert fetch(alice, markdown).status_code == 200


def read_sse(agent, url, jwt, out, stop):
    """Collects (event, data) pairs until the stream ends or stop is set."""
    with agent.session.get(url, headers={"Authorization": f"Bearer {jwt}", "Accept": "text/event-stream"},
                           stream=True, timeout=30) as r:
        out.append(("status", r.status_code))
        event = None
        for raw in r.iter_lines(decode_unicode=True):
            if stop.is_set():
                return
            if raw is None:
                continue
            if raw.startswith("event:"):
                event = raw[6:].strip()
            elif raw.startswith("data:") and event:
                out.append((event, json.loads(raw[5:].strip())))
                event = None
            elif raw.startswith(":"):
                out.append(("comment", raw[1:].strip()))
        out.append(("eof", time.monotonic()))


def test_sse_stream(sdk):
    """The SSE stream at the SDK's sse_events_url delivers accepted records."""
    alice = sdk("alice")
    room = Room(alice)
    url = alice.discourse.sse_events_url(room.id)
    out, stop = [], threading.Event()
    t = threading.Thread(target=read_sse, args=(alice, url, alice.jwt(), out, stop), daemon=True)
    t.start()
    time.sleep(0.5)
    rec = room.write(alice, "message.create", TEXT)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        hashes = [d.get("hash") for e, d in out if isinstance(d, dict)]
        if rec["hash"] in hashes:
            break
        time.sleep(0.1)
    stop.set()
    assert ("status", 200) in out, out
    assert any(isinstance(d, dict) and d.get("hash") == rec["hash"] for _, d in out), f"record not delivered: {out}"


def test_sse_stream_ends_by_token_expiry(sdk):
    """D-26: the host closes the stream by the request JWT's exp."""
    alice = sdk("alice")
    room = Room(alice)
    url = alice.discourse.sse_events_url(room.id)
    out, stop = [], threading.Event()
    start = time.monotonic()
    t = threading.Thread(target=read_sse, args=(alice, url, alice.jwt(ttl=3), out, stop), daemon=True)
    t.start()
    t.join(timeout=20)
    stop.set()
    ends = [v for e, v in out if e == "eof"]
    assert ends, f"the stream outlived its 3 s token by more than 17 s: {out}"
    assert ends[0] - start < 10, f"stream ended {ends[0] - start:.1f}s after opening with a 3 s token"


def test_profiles(hub, sdk):
    """Profile writes and every profile read, through the SDK ProfileClient."""
    from agent_protocols import ProfileCache, materialize_profile, validate_profile_update
    from sdkref import profile_errors

    alice = sdk("alice")
    discovery = alice.session.get(hub.origin + "/.well-known/agent-profile").json()
    assert profile_errors("discoveryDocument", discovery) == [], profile_errors("discoveryDocument", discovery)
    assert alice.profiles.profiles_url == hub.origin + "/v1/profiles"
    doc = alice.update_profile({"id": alice.id, "name": "Alice", "capabilities": ["interop"]})
    assert doc["id"] == alice.id and doc["name"] == "Alice"
    latest = alice.profiles.latest_profile_update(alice.id)
    validate_profile_update(latest)
    expected = materialize_profile(latest)
    served = alice.profiles.get_profile(alice.id)
    for k, v in expected.items():
        if k in served or v not in (None, [], {}):
            assert served.get(k) == v, f"profile document {k}: hub {served.get(k)!r}, SDK {v!r}"
    second = alice.update_profile({"id": alice.id, "name": "Alice 2"})
    assert second["name"] == "Alice 2"
    cache = ProfileCache()
    newest = alice.profiles.latest_profile_update(alice.id)
    cache.observe(newest, alice.id)
    history = alice.profiles.profile_events(alice.id, limit=10)["result"]
    assert [e["hash"] for e in history] == [newest["hash"], latest["hash"]]
    nonces = [e["event"]["nonce"] for e in history]
    assert nonces == sorted(nonces, reverse=True)
    assert verdict(cache.observe, latest, alice.id, local="stale_profile") == "stale_profile"
    assert profile_errors("profileEventsResponse", alice.profiles.profile_events(alice.id, limit=10)) == []
    assert profile_errors("profileDocument", served) == [], profile_errors("profileDocument", served)
    batch = alice.profiles.get_profiles([alice.id])
    assert "next_cursor" not in batch and [p["id"] for p in batch["result"]] == [alice.id]
    assert http_code(alice.profiles.get_profile, sdk().id) == "not_found"


def test_redacted_records(hub, sdk, apc):
    """ADP 14.1 redaction by `apconnect hub redact`: the SDK verifies the
    chain and the archive and reports the seq; apconnect's reader keeps the
    head where the SDK's rules put it (a redacted message does not move it,
    D-22)."""
    from harness import apconnect_bin
    import subprocess

    alice = sdk("alice")
    room = Room(alice, types=[{"use": "adp:reactions/1.0"}])
    secret = room.write(alice, "message.create", {"content_type": "text/plain", "content": "secret"})
    room.write(alice, "reaction.create", {"event_id": secret["envelope"]["hash"], "reaction": "agree"}, room.last)
    room.write(alice, "message.create", {"content_type": "text/plain", "content": "after"})
    out = subprocess.run([str(apconnect_bin()), "hub", "redact", "--data", str(hub.data), "--room", room.id,
                          "--seq", str(secret["seq"])], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    room.refresh()
    red = room.records[secret["seq"] - 1]
    assert red["envelope"] == {"hash": secret["envelope"]["hash"], "redacted": True, "type": "message.create"}, red
    assert kernel_errors("serverRecord", red) == []
    verify_server_record_chain(room.records)
    manifest = alice.discourse.archive(room.id)
    body = fetch(alice, manifest["formats"]["jsonl"]).content.decode()
    lines = [parse_strict_json(line) for line in body.splitlines() if line.strip()]
    assert all(kernel_errors("serverRecord", line) == [] for line in lines), "D-21: the JSONL holds more than records"
    assert verify_archive_records(manifest, lines) == [secret["seq"]]
    reader = apc("reader")
    state = reader.ok("room_open", {"host": hub.origin, "room_id": room.id})
    assert not state["sync"].get("verification"), state["sync"]
    assert (state["sync"]["head_seq"], state["sync"]["head_hash"]) == room.head, (state["sync"], room.head)
