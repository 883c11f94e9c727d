package mcpserver

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"apconnect/host/toolcatalog"
)

// In-process tests of every tool through a real MCP client session, against
// the real local hub. Every successful result is checked against the tool's
// output schema (by the harness and by the server's StrictOutput).

func TestIdentityHostAndRoomTools(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, "alice", 0xA1, agentOptions{})
	bob := newAgent(t, h, "bob", 0xB0, agentOptions{})

	id := alice.call("identity_current", nil)
	if id["agent_id"] != alice.id || !strings.HasSuffix(alice.id, id["public_key"].(string)) {
		t.Fatalf("identity %v", id)
	}
	if hosts := id["hosts"].([]any); len(hosts) != 1 || get(hosts[0], "host") != h.Origin() || get(hosts[0], "allowed") != true {
		t.Fatalf("identity hosts %v", id["hosts"])
	}
	if p := id["profiles"].([]any); len(p) != 1 || p[0] != h.Origin() {
		t.Fatalf("profiles %v", p)
	}
	if hl := alice.call("hosts_list", obj{}); len(hl["hosts"].([]any)) != 1 {
		t.Fatalf("hosts_list %v", hl)
	}

	roomID := alice.createRoom("public", obj{"types": []any{obj{"use": "adp:reactions/1.0"}}, "tags": []any{"review"}})
	rl := alice.call("rooms_list", obj{"membership": "creator"})
	if rooms := rl["rooms"].([]any); len(rooms) != 1 || get(rooms[0], "room_id") != roomID || get(rooms[0], "role") != "moderator" {
		t.Fatalf("rooms_list %v", rl)
	}
	search := bob.call("rooms_search", obj{"host": h.Origin(), "tag": "review"})
	if rooms := search["rooms"].([]any); len(rooms) != 1 || get(rooms[0], "room_id") != roomID || get(rooms[0], "known") != false {
		t.Fatalf("rooms_search %v", search)
	}
	open := bob.call("room_open", obj{"host": h.Origin(), "room_id": roomID, "subscribe": true})
	if get(open, "room", "topic") != "Review the signature section" || num(get(open, "sync", "head_seq")) != 1 ||
		num(get(open, "sync", "presented_seq")) != 1 || get(open, "sync", "subscribed") != true {
		t.Fatalf("room_open %v", open)
	}
	st := bob.call("room_state", obj{"room_id": roomID, "include_types": true})
	types := get(st, "room", "types").([]any)
	if !slices.ContainsFunc(types, func(v any) bool { return get(v, "type") == "reaction.create" }) {
		t.Fatalf("room_state types %v", types)
	}
	ml := bob.call("room_members_list", obj{"room_id": roomID})
	if m := ml["members"].([]any); len(m) != 1 || get(m[0], "agent_id") != alice.id || get(m[0], "is_creator") != true {
		t.Fatalf("members %v", ml)
	}
	mg := bob.call("room_member_get", obj{"room_id": roomID, "agent_id": alice.id, "include_recent_activity": true})
	if get(mg, "member", "role") != "moderator" || len(mg["recent"].([]any)) != 1 {
		t.Fatalf("member_get %v", mg)
	}
	// Errors keep their stable codes and data.
	if e := bob.callErr("room_member_get", obj{"room_id": roomID, "agent_id": bob.id}); e.Code != "member_not_found" {
		t.Fatalf("member_get of a non-member: %+v", e)
	}
	if e := bob.callErr("room_open", obj{"host": "https://elsewhere.example", "room_id": roomID}); e.Code != "host_not_allowed" ||
		!slices.Contains(e.Data["allowed"].([]any), any(h.Origin())) {
		t.Fatalf("unconfigured host: %+v", e)
	}
	if e := bob.callErr("room_state", obj{"room_id": roomID, "limit": 3}); e.Code != toolcatalog.ErrCodeInvalidInput {
		t.Fatalf("unknown field: %+v", e)
	}
}

func TestConversationTools(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, "alice", 0xA1, agentOptions{start: true})
	bob := newAgent(t, h, "bob", 0xB0, agentOptions{start: true})
	roomID := alice.createRoom("public", obj{"types": []any{obj{"use": "adp:reactions/1.0"}}})

	join := bob.call("room_join", obj{"host": h.Origin(), "room_id": roomID, "role": "speaker", "perspective": "reviewer"})
	if join["status"] != "joined" || get(join, "member", "role") != "speaker" {
		t.Fatalf("join %v", join)
	}
	alice.call("room_timeline", obj{"room_id": roomID, "refresh": true, "unread_only": true, "mark_read": true})
	sent := alice.call("room_send_message", obj{"room_id": roomID, "content": "Bob, can you review the signature section?", "mentions": []any{bob.id}})
	if sent["status"] != "sent" || get(sent, "item", "content") != "Bob, can you review the signature section?" {
		t.Fatalf("send %v", sent)
	}
	mentionSeq := num(get(sent, "item", "seq"))

	// Bob is woken by the mention.
	next := bob.call("inbox_next", obj{"wait_ms": 10000, "claim": true, "kinds": []any{"room.mention"}})
	items := next["items"].([]any)
	if len(items) != 1 || get(items[0], "kind") != "room.mention" || num(get(items[0], "seq")) != mentionSeq || get(items[0], "state") != "claimed" {
		t.Fatalf("inbox_next %v", next)
	}
	itemID := get(items[0], "id").(string)
	tl := bob.call("room_timeline", obj{"room_id": roomID, "unread_only": true, "mark_read": true})
	tlItems := tl["items"].([]any)
	// Reading messages presents the head in force: they do not move it.
	if len(tlItems) == 0 || num(get(tlItems[len(tlItems)-1], "seq")) != mentionSeq || num(tl["unread_count"]) != 0 ||
		num(get(tl, "sync", "presented_seq")) != num(get(tl, "sync", "head_seq")) {
		t.Fatalf("timeline %v", tl)
	}
	mr := bob.call("room_mark_read", obj{"room_id": roomID, "through_seq": mentionSeq})
	if num(mr["read_seq"]) != mentionSeq || num(mr["unread_count"]) != 0 {
		t.Fatalf("mark_read %v", mr)
	}

	set := bob.call("agent_status_set", obj{"room_id": roomID, "state": "drafting", "summary": "reviewing"})
	if get(set, "status", "state") != "drafting" || num(get(set, "status", "seen_seq")) != mentionSeq {
		t.Fatalf("status_set %v", set)
	}
	ag := alice.call("agent_status_get", obj{"room_id": roomID, "agent_id": bob.id, "refresh": true})
	if get(ag, "status", "state") != "drafting" {
		t.Fatalf("status_get %v", ag)
	}
	al := alice.call("agent_status_list", obj{"room_id": roomID, "refresh": true})
	if s := al["statuses"].([]any); len(s) != 1 || get(s[0], "agent_id") != bob.id {
		t.Fatalf("status_list %v", al)
	}

	reply := bob.call("room_send_message", obj{"room_id": roomID, "content": "Reviewed: looks right.", "references": []any{get(items[0], "event_id")}})
	// A message never becomes the head: the presented head stays where it was.
	if reply["status"] != "sent" || num(get(reply, "sync", "presented_seq")) != num(get(reply, "sync", "head_seq")) {
		t.Fatalf("reply %v", reply)
	}
	react := alice.call("room_submit_event", obj{"room_id": roomID, "type": "reaction.create",
		"payload": obj{"event_id": get(reply, "item", "event_id"), "reaction": "+1"}})
	if react["status"] != "sent" || get(react, "item", "type") != "reaction.create" {
		t.Fatalf("reaction %v", react)
	}
	ack := bob.call("inbox_ack", obj{"ids": []any{itemID}, "action": "handled"})
	if a := ack["acknowledged"].([]any); len(a) != 1 || a[0] != itemID {
		t.Fatalf("ack %v", ack)
	}
	bob.call("agent_status_set", obj{"room_id": roomID, "state": "idle", "expires_at": time.Now().UnixMilli()})
	leave := bob.call("room_leave", obj{"room_id": roomID, "reason": "done"})
	if get(leave, "sync", "room_id") != roomID || leave["record"] == nil {
		t.Fatalf("leave %v", leave)
	}
	// A speaker who left cannot write any more: the ADP code comes through.
	if e := bob.callErr("room_send_message", obj{"room_id": roomID, "content": "one more thing"}); e.Code == "" || e.Code == "internal" {
		t.Fatalf("write after leaving: %+v", e)
	}
	// Only the creator or a moderator may close a room.
	carol := newAgent(t, h, "carol", 0xC0, agentOptions{})
	carol.call("room_join", obj{"host": h.Origin(), "room_id": roomID, "role": "speaker"})
	if e := carol.callErr("room_submit_event", obj{"room_id": roomID, "type": "room.close", "payload": obj{"reason": "mine now"}}); e.Code != "permission_denied" {
		t.Fatalf("speaker closing the room: %+v", e)
	}
	// A contract write is based on what the writer saw: alice reads first.
	alice.call("room_state", obj{"room_id": roomID, "refresh": true})
	closed := alice.call("room_submit_event", obj{"room_id": roomID, "type": "room.close", "payload": obj{"reason": "done"}})
	if closed["status"] != "sent" {
		t.Fatalf("close %v", closed)
	}
	if st := alice.call("room_state", obj{"room_id": roomID}); get(st, "room", "status") != "ended" {
		t.Fatalf("closed room state %v", get(st, "room", "status"))
	}
}

func TestProfileUpdateTool(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, "alice", 0xA1, agentOptions{})
	r := alice.call("profile_update", obj{"profile_service": h.Origin(), "profile": obj{"name": "Alice", "description": "Reviews signatures."}})
	if get(r, "profile", "name") != "Alice" || get(r, "profile", "id") != alice.id {
		t.Fatalf("profile_update %v", r)
	}
	if e := alice.callErr("profile_update", obj{"profile_service": h.Origin(), "profile": obj{"id": "did:agent:6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0iw", "name": "X"}}); e.Code == "" || e.Code == "internal" {
		t.Fatalf("foreign profile id: %+v", e)
	}
}

// race makes reader present the room's head, then writer speak on top of it.
// race makes reader read the room, then writer (a manager) move the head
// with a room.update of the agenda: messages never move the head, so only
// a head-advancing record makes the reader's next message stale.
func race(t *testing.T, reader, writer *tagent, roomID string, text string) {
	t.Helper()
	reader.call("room_timeline", obj{"room_id": roomID, "refresh": true, "unread_only": true, "mark_read": true})
	if r := writer.call("room_submit_event", obj{"room_id": roomID, "type": "room.update", "payload": obj{"agenda": text}, "on_head_mismatch": "send_anyway"}); r["status"] != "sent" {
		t.Fatalf("race write %v", r)
	}
}

func TestHeldDraftTools(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, "alice", 0xA1, agentOptions{})
	bob := newAgent(t, h, "bob", 0xB0, agentOptions{})
	roomID := alice.createRoom("public", nil)
	bob.call("room_join", obj{"host": h.Origin(), "room_id": roomID, "role": "speaker"})

	race(t, bob, alice, roomID, "alice speaks first")
	held := bob.call("room_send_message", obj{"room_id": roomID, "content": "first take"})
	if held["status"] != "held" || held["reason"] != "room_head_mismatch" || get(held, "draft", "id") == nil {
		t.Fatalf("held %v", held)
	}
	if txt := callRaw(t, bob.cs, pfx+"drafts_list", nil).Content[0].(*mcp.TextContent).Text; !strings.Contains(txt, "1 held draft") {
		t.Fatalf("drafts_list summary %q", txt)
	}
	draftID := get(held, "draft", "id").(string)
	list := bob.call("drafts_list", obj{"room_id": roomID})
	if d := list["drafts"].([]any); len(d) != 1 || get(d[0], "id") != draftID {
		t.Fatalf("drafts_list %v", list)
	}
	got := bob.call("draft_get", obj{"draft_id": draftID})
	changes := got["changes"].([]any)
	if len(changes) == 0 || get(changes[len(changes)-1], "type") != "room.update" {
		t.Fatalf("draft_get %v", got)
	}
	rev := bob.call("draft_commit", obj{"draft_id": draftID, "action": "revise", "content": "revised take"})
	if rev["status"] != "sent" || get(rev, "item", "content") != "revised take" {
		t.Fatalf("revise %v", rev)
	}
	if e := bob.callErr("draft_get", obj{"draft_id": draftID}); e.Code != "draft_not_found" {
		t.Fatalf("draft after commit: %+v", e)
	}

	race(t, bob, alice, roomID, "alice again")
	held = bob.call("room_send_message", obj{"room_id": roomID, "content": "never mind"})
	drop := bob.call("draft_drop", obj{"draft_id": get(held, "draft", "id")})
	if drop["status"] != "dropped" || num(drop["pending_count"]) != 0 {
		t.Fatalf("drop %v", drop)
	}

	race(t, bob, alice, roomID, "and again")
	held = bob.call("room_send_message", obj{"room_id": roomID, "content": "quiet"})
	silent := bob.call("draft_commit", obj{"draft_id": get(held, "draft", "id"), "action": "stay_silent"})
	if silent["status"] != "dropped" {
		t.Fatalf("stay_silent %v", silent)
	}

	// reject: nothing is held, the changes come back.
	race(t, bob, alice, roomID, "once more")
	rej := bob.call("room_send_message", obj{"room_id": roomID, "content": "late", "on_head_mismatch": "reject"})
	if rej["status"] != "rejected" || len(rej["changes"].([]any)) == 0 {
		t.Fatalf("reject %v", rej)
	}
}

func TestJoinByRequestTools(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, "alice", 0xA1, agentOptions{start: true})
	bob := newAgent(t, h, "bob", 0xB0, agentOptions{})
	roomID := alice.createRoom("restricted", obj{"policy": obj{"invites": obj{bob.id: "observer"}}})

	// Invited as an observer, bob asks to speak: a join request.
	req := bob.call("room_join", obj{"host": h.Origin(), "room_id": roomID, "role": "speaker", "reason": "I review signatures"})
	if req["status"] != "approval_required" || get(req, "join_request", "status") != "pending" {
		t.Fatalf("join %v", req)
	}
	reqID := get(req, "join_request", "id").(string)
	in := alice.call("inbox_next", obj{"kinds": []any{"room.join.requested"}, "wait_ms": 10000})
	if items := in["items"].([]any); len(items) != 1 || get(items[0], "event_id") != reqID {
		t.Fatalf("reviewer inbox %v", in)
	}
	jl := alice.call("join_requests_list", obj{"room_id": roomID, "status": "pending"})
	if l := jl["join_requests"].([]any); len(l) != 1 || get(l[0], "id") != reqID {
		t.Fatalf("join_requests_list %v", jl)
	}
	rev := alice.call("join_request_review", obj{"room_id": roomID, "request_id": reqID, "decision": "approve", "role": "speaker"})
	if rev["record"] == nil {
		t.Fatalf("review %v", rev)
	}
	// The completion must ask for the approved role.
	e := bob.callErr("room_join", obj{"room_id": roomID, "role": "moderator"})
	if e.Code != "role_mismatch" || e.Data["approved_role"] != "speaker" {
		t.Fatalf("role mismatch: %+v", e)
	}
	done := bob.call("room_join", obj{"room_id": roomID, "role": "speaker"})
	if done["status"] != "joined" || get(done, "member", "role") != "speaker" {
		t.Fatalf("completion %v", done)
	}
}

// Two MCP sessions of one server have presented heads of their own: what
// one session read is never the default base of the other's writes.
func TestPresentedHeadsPerSession(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, "alice", 0xA1, agentOptions{})
	bob := newAgent(t, h, "bob", 0xB0, agentOptions{})
	roomID := alice.createRoom("public", nil)
	bob.call("room_join", obj{"host": h.Origin(), "room_id": roomID, "role": "speaker"})
	second := bob.connect(nil, "")

	race(t, bob, alice, roomID, "seen by the first session only")
	// The second session catches up and writes on what it saw: sent.
	st := structured(t, pfx+"room_state", callRaw(t, second, pfx+"room_state", obj{"room_id": roomID, "refresh": true}))
	head := num(get(st, "sync", "head_seq"))
	sent := structured(t, pfx+"room_send_message", callRaw(t, second, pfx+"room_send_message", obj{"room_id": roomID, "content": "from the second session"}))
	if sent["status"] != "sent" {
		t.Fatalf("second session %v", sent)
	}
	// The first session still has the older head presented: held.
	held := bob.call("room_send_message", obj{"room_id": roomID, "content": "from the first session"})
	if held["status"] != "held" || num(get(held, "draft", "base_seq")) >= head {
		t.Fatalf("first session %v (second saw head %d)", held, head)
	}
}

// A failed call is a tool error with the stable code and data; the same
// error shape is used for schema failures.
func TestErrorShape(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, "alice", 0xA1, agentOptions{})
	res := callRaw(t, alice.cs, pfx+"room_timeline", obj{"room_id": "not a room id!", "limit": 0})
	e := errorOf(t, pfx+"room_timeline", res)
	issues, _ := json.Marshal(e.Data["issues"])
	if e.Code != toolcatalog.ErrCodeInvalidInput || !strings.Contains(string(issues), "/limit") || !strings.Contains(string(issues), "/room_id") {
		t.Fatalf("schema error %+v", e)
	}
	if e := alice.callErr("draft_commit", obj{"draft_id": "draft_d8ftedhpqhsusbg001tg_9", "action": "send_as_is"}); e.Code != "draft_not_found" {
		t.Fatalf("unknown draft %+v", e)
	}
}
