"""Issue 9, part 5: a history written under the 0.12.6 rules — concurrent
messages on one base, messages based on signal records, control and
contract writes in between — is followed by apconnect without a
verification failure: live over SSE by an `apconnect mcp` process that is a
member of the room, and over HTTP by a fresh `apconnect call room_open`.

The writers are agents made of the reference SDK; the host is `apconnect
hub`, which must accept such a history (the head rule, D-01/D-02).
"""

from __future__ import annotations

import time

from harness import McpProcess
from sdkref import room_view
from test_hub_writes import Room
from vectors import reader_verdict


def text(s):
    return {"content_type": "text/plain", "content": s}


def write_history(room, alice, bob, follower_id):
    """The 0.12.6-only shapes, each accepted by the hub; returns the SDK's
    head after the last record."""
    base = room.head
    room.write(alice, "message.create", text("first, on the head"), base)
    room.write(bob, "message.create", text("second, on the same base"), base)
    room.write(alice, "message.create", text("third, on the same base"), base)
    msg = room.last
    room.write(bob, "message.create", text("based on a message record"), msg)
    room.write(bob, "reaction.create", {"event_id": room.records[-1]["envelope"]["hash"], "reaction": "agree"}, room.last)
    room.write(alice, "message.create", text("based on a reaction (a signal record)"), room.last)
    room.write(alice, "turn.update", {"turn_id": 1, "speaker": bob.id}, room.last)
    room.write(bob, "message.create", text("on the turn"), room.head)
    room.write(alice, "room.update", {"guidance": "keep it short"}, (1, room.records[0]["hash"]))
    room.write(bob, "message.create", text("after the contract change"), room.head)
    room.write(alice, "message.create", text("and a mention"), room.head, mentions=[follower_id])
    return room.head


def check_follower_state(state, room, who):
    sync = state["sync"]
    assert not sync.get("verification"), f"{who}: apconnect marked the room failed: {sync['verification']}"
    assert sync["synced_seq"] == room.last[0], f"{who}: synced {sync['synced_seq']}, the room has {room.last[0]} records"
    assert (sync["head_seq"], sync["head_hash"]) == room.head, (
        f"{who}: apconnect's head {sync['head_seq']}, the SDK rules give {room.head[0]}")


def test_followed_live_over_sse(tmp_path, hub, sdk, apc):
    alice, bob = sdk("alice"), sdk("bob")
    follower = apc("follower")
    room = Room(alice, policy={"open_roles": ["speaker", "observer"]},
                types=[{"use": "adp:reactions/1.0"}, {"use": "adp:moderation/1.0"}])
    room.write(bob, "room.join", {"role": "speaker"})
    follower.ok("room_join", {"host": hub.origin, "room_id": room.id, "role": "observer"})
    mcp = McpProcess(follower.home, follower.name)
    try:
        mcp.call("room_open", {"host": hub.origin, "room_id": room.id, "subscribe": True})
        room.refresh()
        write_history(room, alice, bob, follower.id)
        assert all(isinstance(v, dict) for v in reader_verdict(room.records)), "the SDK's own reader refuses the history"
        # The mention reaches the follower through its live stream.
        deadline = time.monotonic() + 20
        mention = None
        while mention is None and time.monotonic() < deadline:
            got = mcp.call("inbox_next", {"wait_ms": 2000})
            if "error" in got:
                raise AssertionError(f"inbox_next: {got}")
            mention = next((i for i in got.get("items", []) if i.get("kind") == "room.mention"), None)
        assert mention is not None, f"the follower never saw the mention; log:\n{''.join(mcp.stderr)[-3000:]}"
        state = mcp.call("room_state", {"room_id": room.id})
        assert "error" not in state, state
        check_follower_state(state, room, "apconnect mcp (SSE)")
        timeline = mcp.call("room_timeline", {"room_id": room.id, "limit": 100})
        assert [i["seq"] for i in timeline["items"]] == [r["seq"] for r in room.records]
    finally:
        mcp.stop()
    log = "".join(mcp.stderr)
    assert "panic" not in log and "level=ERROR" not in log, log[-3000:]


def test_followed_over_http(hub, sdk, apc):
    alice, bob = sdk("alice"), sdk("bob")
    room = Room(alice, policy={"open_roles": ["speaker"]},
                types=[{"use": "adp:reactions/1.0"}, {"use": "adp:moderation/1.0"}])
    room.write(bob, "room.join", {"role": "speaker"})
    reader = apc("reader")
    write_history(room, alice, bob, reader.id)
    state = reader.ok("room_open", {"host": hub.origin, "room_id": room.id})
    check_follower_state(state, room, "apconnect call room_open (HTTP)")
    # A later batch, read incrementally from the stored state.
    room.write(bob, "message.create", text("later"), room.head)
    room.write(alice, "claim.update", {"claim_id": "c1", "owner": alice.id, "state": "claimed"}, room.head)
    state = reader.ok("room_open", {"host": hub.origin, "room_id": room.id, "refresh": True})
    check_follower_state(state, room, "apconnect call room_open, refreshed (HTTP)")
    assert room_view(room.records)["head"] == room.head
