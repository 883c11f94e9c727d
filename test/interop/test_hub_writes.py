"""Issue 9, part 2 (writes): agents built from the reference SDK alone write
to a real `apconnect hub`. For every case the SDK's own check gives the
expected verdict, and the hub must answer exactly that: accept what the SDK
accepts, refuse the rest with the SDK's code.

A case whose verdict the SDK has no function for (state rules such as a ban
or an ended room) states the ADP code, and says where it comes from.
"""

from __future__ import annotations

import pytest

from agent_protocols import unix_ms
from agent_protocols.discourse import (
    can_join_directly,
    validate_message_create_payload,
    validate_room_create_host,
    validate_room_create_payload,
    validate_room_update_payload,
    validate_room_write,
)

from harness import http_code
from sdkref import base_verdict, registry, room_view, verdict

TEXT = {"content_type": "text/plain", "content": "hello"}


def sdk_create_verdict(payload, origin):
    v = verdict(validate_room_create_payload, payload)
    return v if v != "ok" else verdict(validate_room_create_host, payload, origin)


def create_payload(hub, **over):
    now = unix_ms()
    p = {"host": hub.origin, "topic": "interop", "visibility": "public",
         "start_time": now - 60_000, "end_time": now + 3_600_000}
    p.update(over)
    return {k: v for k, v in p.items() if v is not None}


def port_of(origin):
    return origin.rsplit(":", 1)[1]


CREATE_CASES = {
    "public room": lambda h: create_payload(h),
    "restricted room": lambda h: create_payload(h, visibility="restricted"),
    "private room": lambda h: create_payload(h, visibility="private"),
    "host with a trailing slash (D-20)": lambda h: create_payload(h, host=h.origin + "/"),
    "host with a leading zero in the port (D-20)": lambda h: create_payload(h, host="https://127.0.0.1:0" + port_of(h.origin)),
    "host with a path (D-20)": lambda h: create_payload(h, host=h.origin + "/v1"),
    "another origin (host_mismatch)": lambda h: create_payload(h, host="https://127.0.0.1:1"),
    "localhost instead of 127.0.0.1 (exact comparison, D-20)": lambda h: create_payload(h, host="https://localhost:" + port_of(h.origin)),
    "blank topic U+FEFF (D-15)": lambda h: create_payload(h, topic="\ufeff"),
    "blank topic U+3000 (D-15)": lambda h: create_payload(h, topic="\u3000"),
    "topic U+200B is not blank (D-15)": lambda h: create_payload(h, topic="\u200b"),
    "policy observer_allowed (D-10)": lambda h: create_payload(h, policy={"observer_allowed": True}),
    "private room with open roles (D-10)": lambda h: create_payload(h, visibility="private", policy={"open_roles": ["observer"]}),
    "open role moderator (D-10)": lambda h: create_payload(h, policy={"open_roles": ["moderator"]}),
    "duplicate open role (D-10)": lambda h: create_payload(h, policy={"open_roles": ["speaker", "speaker"]}),
    "max_speakers 0 (D-10)": lambda h: create_payload(h, policy={"max_speakers": 0}),
    "restricted room with open speakers (D-10)": lambda h: create_payload(h, visibility="restricted", policy={"open_roles": ["speaker"]}),
    "registered packs": lambda h: create_payload(h, types=[{"use": "adp:reactions/1.0"}, {"use": "adp:moderation/1.0"}]),
    "type definition with version (D-09)": lambda h: create_payload(h, types=[
        {"type": "note.add", "kind": "message", "title": "Note", "version": "1.0", "schema": {"type": "object"}}]),
    "type definition with a blank title (D-15)": lambda h: create_payload(h, types=[
        {"type": "note.add", "kind": "message", "title": " ", "schema": {"type": "object"}}]),
    "custom type under message. (D-14)": lambda h: create_payload(h, types=[
        {"type": "message.custom", "kind": "message", "title": "Custom", "schema": {"type": "object"}}]),
    "custom type x.message is fine (D-14)": lambda h: create_payload(h, types=[
        {"type": "x.message", "kind": "message", "title": "X", "schema": {"type": "object"}}]),
    "external pack with a prefixed digest (D-13)": lambda h: create_payload(h, types=[
        {"pack": "https://example.com/p.json", "digest": "sha256:" + "A" * 43}]),
    "external pack over http (D-13)": lambda h: create_payload(h, types=[
        {"pack": "http://example.com/p.json", "digest": "A" * 43}]),
    "start after end": lambda h: create_payload(h, start_time=unix_ms() + 10_000, end_time=unix_ms()),
}


@pytest.mark.parametrize("name", list(CREATE_CASES))
def test_room_create(hub, sdk, name):
    agent = sdk()
    payload = CREATE_CASES[name](hub)
    expected = sdk_create_verdict(payload, hub.origin)
    got = http_code(agent.discourse.create_room, agent.sign(agent.create_event(payload)))
    assert got == expected, f"{name}: SDK says {expected}, hub answered {got}; payload {payload}"


def test_room_create_then_resource_is_sdk_shaped(hub, sdk):
    """The hub's room resource decodes as the SDK's closed types: no `version`
    in type definitions (D-09), no `observer_allowed` (D-10)."""
    from sdkref import kernel_errors

    agent = sdk()
    room = agent.create_room(types=[{"use": "adp:reactions/1.0"}], policy={"open_roles": ["speaker"]})
    res = agent.room(room["id"])
    for member in ("id", "status", "url", "seq", "hash", "accepted_at"):
        assert member in res, f"room resource lacks {member}: {res}"
    for i, t in enumerate(res.get("types", [])):
        assert kernel_errors("typeDef", t) == [], f"types[{i}] is not an SDK type definition: {t}"
    assert res.get("types"), "the room resource carries no types"
    assert kernel_errors("roomPolicy", res.get("policy", {})) == [], res.get("policy")


class Room:
    """A room on the hub seen through the SDK: its records, re-read from the
    hub after every write, and the SDK's view of them (registry, head)."""

    def __init__(self, owner, **payload):
        self.owner = owner
        self.resource = owner.create_room(**payload)
        self.id = self.resource["id"]
        self.refresh()

    def refresh(self):
        self.records = self.owner.records(self.id)
        self.view = room_view(self.records)
        return self

    @property
    def head(self):
        return self.view["head"]

    @property
    def last(self):
        return self.view["last"]

    def write(self, agent, typ, payload, base=None, mentions=None):
        rec = agent.write(typ, self.id, base or self.head, payload, mentions)
        self.refresh()
        return rec

    def attempt(self, agent, typ, payload, base=None, mentions=None):
        """The hub's verdict ("ok" or its code) on a write."""
        env = agent.sign(agent.event(typ, self.id, base or self.head, payload, mentions))
        code = http_code(agent.discourse.submit_event, self.id, env)
        self.refresh()
        return code


def test_concurrent_messages_on_one_base(sdk):
    """D-01/D-02 (H-3): messages do not advance the head, so two agents
    posting on the same base are both accepted; a contract write then moves
    the head and a message based before it is room_head_mismatch."""
    alice, bob = sdk("alice"), sdk("bob")
    room = Room(alice, policy={"open_roles": ["speaker"]})
    room.write(bob, "room.join", {"role": "speaker"})
    base = room.head
    for agent, text in ((alice, "first"), (bob, "second"), (alice, "third")):
        expected = base_verdict(room.view, "message.create", base)
        got = room.attempt(agent, "message.create", {"content_type": "text/plain", "content": text}, base)
        assert (got, expected) == ("ok", "ok"), f"message {text!r} on base {base[0]}: SDK {expected}, hub {got}"
    assert room.head == base, "messages moved the SDK head"
    hub_head = alice.head(room.id)
    assert hub_head == room.head, f"hub presents head {hub_head}, the SDK rules give {room.head}"
    # A message based on a message record (seq > head) is fine.
    msg_base = room.last
    got = room.attempt(bob, "message.create", TEXT, msg_base)
    assert got == base_verdict(room.view, "message.create", msg_base) == "ok", got
    # A contract write on an old but accepted base is anchored only.
    old = (1, room.records[0]["hash"])
    assert room.attempt(alice, "room.update", {"guidance": "short"}, old) == base_verdict(room.view, "room.update", old) == "ok"
    # Now a message on the pre-contract base is stale.
    expected = base_verdict(room.view, "message.create", base)
    assert expected == "room_head_mismatch"
    assert room.attempt(bob, "message.create", TEXT, base) == expected


def test_base_checks(sdk):
    """H-1 against the hub: anchor first (base_record_mismatch), then the
    head for head-checked types (room_head_mismatch)."""
    alice = sdk("alice")
    room = Room(alice, types=[{"use": "adp:reactions/1.0"}, {"use": "adp:moderation/1.0"}])
    room.write(alice, "message.create", TEXT)
    room.write(alice, "room.update", {"agenda": "one"}, base=room.last)
    head = room.head
    msg = room.write(alice, "message.create", TEXT)
    wrong = "A" * 43
    cases = [
        ("message.create", head),
        ("message.create", (msg["seq"], msg["hash"])),
        ("message.create", (1, room.records[0]["hash"])),
        ("message.create", (1, wrong)),
        ("message.create", (msg["seq"], wrong)),
        ("turn.update", (1, room.records[0]["hash"])),
        ("claim.update", head),
        ("room.update", (1, room.records[0]["hash"])),
        ("room.update", (2, wrong)),
        ("reaction.create", (1, room.records[0]["hash"])),
        ("steer.create", (1, room.records[0]["hash"])),
        ("message.create", (room.last[0] + 5, wrong)),
    ]
    payloads = {
        "message.create": TEXT,
        "turn.update": {"turn_id": 1, "speaker": alice.id},
        "claim.update": {"claim_id": "c1", "owner": alice.id, "state": "claimed"},
        "room.update": {"agenda": "two"},
        "reaction.create": {"event_id": msg["envelope"]["hash"], "reaction": "+1"},
        "steer.create": {"instruction": "focus"},
    }
    bad = []
    for typ, base in cases:
        expected = base_verdict(room.view, typ, base)
        got = room.attempt(alice, typ, payloads[typ], base)
        if got != expected:
            bad.append(f"{typ} on base {base[0]} (head {room.head[0]}): SDK {expected}, hub {got}")
    assert not bad, "\n".join(bad)


def test_message_payloads(sdk):
    alice = sdk("alice")
    room = Room(alice)
    cases = {
        "object content with text/plain (D-24)": {"content_type": "text/plain", "content": {"a": 1}},
        "blank content_type U+FEFF (D-15)": {"content_type": "\ufeff", "content": "x"},
        "content_type U+200B (D-15)": {"content_type": "\u200b", "content": "x"},
        "markdown": {"content_type": "text/markdown", "content": "*x*"},
        "number content": {"content_type": "text/plain", "content": 5},
    }
    bad = []
    for name, payload in cases.items():
        expected = verdict(validate_message_create_payload, payload)
        got = room.attempt(alice, "message.create", payload)
        if got != expected:
            bad.append(f"{name}: SDK {expected}, hub {got}")
    assert not bad, "\n".join(bad)


def test_pack_payloads(sdk):
    """D-08: the hub validates custom payloads with the 0.12.6 packs."""
    alice = sdk("alice")
    room = Room(alice, types=[{"use": "adp:moderation/1.0"}, {"use": "adp:curation/1.0"}])
    reg = room.view["registry"]
    digest = "B" * 43
    cases = [
        ("steer.create", {"instruction": "x", "target": alice.id}),
        ("steer.create", {"instruction": "x"}),
        ("resource.add", {"resource_type": "web", "content_digest": "sha256:" + digest}),
        ("resource.add", {"resource_type": "web", "content_digest": digest}),
        ("resource.add", {"resource_type": "web", "uri": "not a uri"}),
        ("artifact.create", {"artifact_id": "a", "format": "md", "title": "t", "content_digest": "sha3-256:" + digest}),
    ]
    bad = []
    for typ, payload in cases:
        expected = verdict(reg.validate_payload, typ, payload)
        base = room.head
        got = room.attempt(alice, typ, payload, base)
        if got != expected:
            bad.append(f"{typ} {payload}: SDK {expected}, hub {got}")
    assert not bad, "\n".join(bad)


def test_room_update_payloads(sdk):
    alice = sdk("alice")
    room = Room(alice)
    cases = {
        "guidance": {"guidance": "be brief"},
        "blank topic U+FEFF (D-15)": {"topic": "\ufeff"},
        "policy with observer_allowed (D-10)": {"policy": {"observer_allowed": True}},
        "visibility is not updatable": {"visibility": "private"},
        "empty update": {},
        "open roles": {"policy": {"open_roles": ["observer", "speaker"]}},
    }
    bad = []
    for name, payload in cases.items():
        expected = verdict(validate_room_update_payload, payload)
        got = room.attempt(alice, "room.update", payload, room.last)
        if got != expected:
            bad.append(f"{name}: SDK {expected}, hub {got}")
    assert not bad, "\n".join(bad)


def context(room_view_members, agent_id, creator):
    role = room_view_members.get(agent_id)
    return {"role": role, "is_creator": agent_id == creator}


@pytest.mark.parametrize("visibility,policy,role", [
    ("public", None, "observer"),
    ("public", None, "speaker"),
    ("public", {"open_roles": ["speaker"]}, "speaker"),
    ("public", {"open_roles": []}, "observer"),
    ("restricted", None, "observer"),
    ("restricted", {"open_roles": ["speaker", "observer"]}, "speaker"),
    ("private", None, "observer"),
])
def test_direct_join(sdk, visibility, policy, role):
    """D-10: direct join exactly when the SDK's can_join_directly allows it;
    otherwise the SDK's permission helper refuses with permission_denied."""
    alice, bob = sdk("alice"), sdk("bob")
    payload = {"visibility": visibility}
    if policy is not None:
        payload["policy"] = policy
    room = Room(alice, **payload)
    allowed = can_join_directly(visibility, policy, bob.id, role)
    expected = verdict(validate_room_write, "room.join", "active",
                       {"role": None, "is_creator": False, "direct_join_allowed": allowed})
    got = room.attempt(bob, "room.join", {"role": role})
    if expected != "ok":
        # The SDK's host helper refuses with permission_denied; ADP 9.2 names
        # approval_required for "ask with a join request instead". Both are
        # 0.12.6 codes and the 0.12.6 connector never sends a join it knows
        # is refused, so either refusal agrees (docs/INTEROP.md).
        assert got in ("permission_denied", "approval_required"), f"{visibility} {policy} join as {role}: SDK refuses, hub {got}"
        return
    assert got == expected, f"{visibility} {policy} join as {role}: SDK {expected}, hub {got}"


def test_join_by_member_or_creator(sdk):
    """D-12: a join by the creator or by an agent that already has a role is
    permission_denied (can_submit_event requires role None, not creator)."""
    alice, bob = sdk("alice"), sdk("bob")
    room = Room(alice, policy={"open_roles": ["speaker", "observer"]})
    assert room.attempt(bob, "room.join", {"role": "speaker"}) == "ok"
    for who, ctx in ((bob, {"role": "speaker", "is_creator": False, "direct_join_allowed": True}),
                     (alice, {"role": "moderator", "is_creator": True, "direct_join_allowed": True})):
        expected = verdict(validate_room_write, "room.join", "active", ctx)
        got = room.attempt(who, "room.join", {"role": "observer"})
        assert got == expected, f"{who.name} joining again: SDK {expected}, hub {got}"
    # A join request by a member is refused the same way.
    expected = verdict(validate_room_write, "room.join.request", "active", {"role": "speaker", "is_creator": False})
    env = bob.sign(bob.join_request_event(room.id, {"role": "moderator"}))
    assert http_code(bob.discourse.request_join, room.id, env) == expected


def test_membership_lifecycle(sdk):
    """Every membership write type against the hub, through a join request
    and its review, role update, removal with ban, and leave."""
    alice, bob, carol = sdk("alice"), sdk("bob"), sdk("carol")
    room = Room(alice, visibility="restricted")
    # bob asks; the request resource carries the signed request.
    req = bob.request_join(room.id, {"role": "speaker", "reason": "interop"})
    assert req["status"] == "pending" and req["request"]["event"]["actor"] == bob.id
    listed = alice.discourse.join_requests(room.id, alice.jwt(), status="pending")
    assert [r["id"] for r in listed["result"]] == [req["id"]]
    one = alice.discourse.join_request(room.id, req["id"], alice.jwt())
    assert one["request"] == req["request"]
    # a non-moderator cannot review (SDK: permission_denied)
    expected = verdict(validate_room_write, "room.join.review", "active", {"role": None, "is_creator": False})
    review = {"request": req["request"], "decision": "approve", "role": "speaker"}
    assert room.attempt(carol, "room.join.review", review, room.last) == expected
    assert room.attempt(alice, "room.join.review", review, room.last) == "ok"
    again = alice.discourse.join_request(room.id, req["id"], alice.jwt())
    assert again["status"] == "approved"
    assert room.attempt(bob, "message.create", TEXT) == "ok"
    assert room.attempt(alice, "room.member.role.update", {"member": bob.id, "role": "observer"}, room.last) == "ok"
    # an observer may not post a message (SDK permission helper)
    expected = verdict(validate_room_write, "message.create", "active", {"role": "observer", "is_creator": False})
    assert room.attempt(bob, "message.create", TEXT) == expected
    assert room.attempt(bob, "room.leave", {"reason": "done"}, room.last) == "ok"
    # carol requests, is approved, then removed with a ban; a banned agent's join is member_banned (ADP 9.5)
    req = carol.request_join(room.id, {"role": "observer"})
    assert room.attempt(alice, "room.join.review", {"request": req["request"], "decision": "approve", "role": "observer"}, room.last) == "ok"
    assert room.attempt(alice, "room.member.remove", {"member": carol.id, "ban": True}, room.last) == "ok"
    env = carol.sign(carol.event("room.join", room.id, room.last, {"role": "observer"}))
    assert http_code(carol.discourse.join_room, room.id, env) in ("member_banned", "permission_denied")
    # a rejected request: reviewed once, no membership
    dave = room.owner.__class__(room.owner.hub, "dave")
    req = dave.request_join(room.id, {"role": "speaker"})
    assert room.attempt(alice, "room.join.review", {"request": req["request"], "decision": "reject", "reason": "no"}, room.last) == "ok"
    assert alice.discourse.join_request(room.id, req["id"], alice.jwt())["status"] == "rejected"
    again = {"request": req["request"], "decision": "approve", "role": "speaker"}
    assert room.attempt(alice, "room.join.review", again, room.last) in ("join_request_not_pending", "invalid_request")
    # the creator cannot leave (SDK: permission_denied)
    expected = verdict(validate_room_write, "room.leave", "active", {"role": "moderator", "is_creator": True})
    assert room.attempt(alice, "room.leave", {}, room.last) == expected


def test_type_define_and_custom_types(sdk):
    alice = sdk("alice")
    room = Room(alice)
    note = {"type": "note.add", "kind": "message", "title": "Note",
            "schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"], "additionalProperties": False}}
    assert room.attempt(alice, "type.define", note, room.last) == "ok"
    assert room.view["registry"].get("note.add") is not None
    reg = room.view["registry"]
    for payload in ({"text": "x"}, {"text": 1}, {"other": "x"}):
        expected = verdict(reg.validate_payload, "note.add", payload)
        got = room.attempt(alice, "note.add", payload)
        assert got == expected, f"note.add {payload}: SDK {expected}, hub {got}"
    # redefining with another kind is type_conflict (SDK TypeRegistry.define)
    changed = dict(note, kind="signal")
    probe = registry([])
    probe.define(note)
    expected = verdict(probe.define, changed)
    assert room.attempt(alice, "type.define", changed, room.last) == expected
    # importing a registered pack by type.define; version-free definitions (D-09)
    assert room.attempt(alice, "type.define", {"use": "adp:reactions/1.0"}, room.last) == "ok"
    res = alice.room(room.id)
    assert all("version" not in t for t in res.get("types", [])), res.get("types")
    # an undefined type
    expected = verdict(room.view["registry"].validate_payload, "nope.x", {})
    assert room.attempt(alice, "nope.x", {}) == expected


def test_close_and_ended_room(sdk):
    """D-11: writes to an ended room are room_not_active (0.12.6 has no
    room_ended); agent status writes too."""
    alice = sdk("alice")
    room = Room(alice)
    assert room.attempt(alice, "room.close", {"reason": "done"}, room.last) == "ok"
    from agent_protocols.discourse import can_write_in_state
    assert not can_write_in_state("message.create", "ended")
    assert room.attempt(alice, "message.create", TEXT) == "room_not_active"
    assert room.attempt(alice, "room.update", {"agenda": "x"}, room.last) == "room_not_active"
    assert http_code(alice.discourse.set_agent_status, room.id, alice.jwt(), {"state": "idle"}) == "room_not_active"


def test_cancel_scheduled_room(sdk):
    alice = sdk("alice")
    now = unix_ms()
    room = Room(alice, start_time=now + 600_000, end_time=now + 3_600_000)
    assert alice.room(room.id)["status"] == "scheduled"
    from agent_protocols.discourse import can_write_in_state
    assert not can_write_in_state("message.create", "scheduled")
    assert room.attempt(alice, "message.create", TEXT) == "room_not_active"
    assert room.attempt(alice, "room.cancel", {"reason": "no"}, room.last) == "ok"
    assert alice.room(room.id)["status"] == "cancelled"


def test_agent_status(sdk):
    alice, bob = sdk("alice"), sdk("bob")
    room = Room(alice, policy={"open_roles": ["speaker"]})
    room.write(bob, "room.join", {"role": "speaker"})
    st = bob.discourse.set_agent_status(room.id, bob.jwt(), {"state": "drafting", "seen_seq": room.last[0], "seen_hash": room.last[1]})
    assert st["agent_id"] == bob.id and st["state"] == "drafting" and st["room_id"] == room.id
    from sdkref import kernel_errors
    assert kernel_errors("agentStatus", st) == []
    listed = alice.discourse.agent_statuses(room.id, jwt=alice.jwt())
    assert [s["agent_id"] for s in listed["result"]] == [bob.id]
    assert kernel_errors("agentStatusListResponse", listed) == []
    assert alice.discourse.agent_status(room.id, bob.id, jwt=alice.jwt())["state"] == "drafting"
    assert http_code(alice.discourse.agent_status, room.id, alice.id, jwt=alice.jwt()) == "agent_status_not_found"
    # clearing with expires_at in the past
    bob.discourse.set_agent_status(room.id, bob.jwt(), {"state": "idle", "expires_at": unix_ms() - 1})
    assert http_code(alice.discourse.agent_status, room.id, bob.id, jwt=alice.jwt()) == "agent_status_not_found"
    # a non-member may not set a status
    carol = sdk("carol")
    assert http_code(carol.discourse.set_agent_status, room.id, carol.jwt(), {"state": "idle"}) == "membership_required"
