package catalogcheck

import (
	"slices"
	"testing"
	"time"
)

// RunEveryTool calls every tool of the catalog against the hub: with {},
// with only its required inputs, and with every input either catalog
// declares (across one or more calls), checking each successful result
// against the output schema of our catalog and, for tools 0.12.6 also has,
// against 0.12.6's. Along the way it checks what each tool is for: the
// flows of the seed (join by request, held drafts, statuses, the inbox)
// and of 0.12.6 (scopes, verified profiles, watches, archives, schemas).
func RunEveryTool(t *testing.T, env Env) {
	r := newRunner(t, env)
	A, B, C, D := env.Alice, env.Bob, env.Carol, env.Dave
	H := env.Host
	now := time.Now().UnixMilli()

	// Identity and services.
	for _, a := range []*Agent{A, B, C, D} {
		a.ID = str(r.empty(a, "identity_current"), "agent_id")
	}
	id := r.call(A, "identity_current", obj{})
	if get(id, "sync_mode") != "explicit" || len(list(id, "tools")) < len(env.Catalog.Names) {
		t.Errorf("identity_current: %v", id)
	}
	if hosts := r.empty(A, "hosts_list"); str(hosts, "hosts", "0", "host") != H {
		t.Errorf("hosts_list: %v", hosts)
	}
	svc := r.empty(A, "services_list")
	if n := len(list(svc, "services")); n != len(env.Protocols) || n < 4 {
		t.Errorf("services_list {}: %d documents, want one for each of the hub's %v: %v", n, env.Protocols, svc)
	}
	svc = r.call(A, "services_list", obj{"host": H, "protocol": "agent-discourse/1.0"})
	if len(list(svc, "services")) != 1 || str(svc, "services", "0", "protocol") != "agent-discourse/1.0" || str(svc, "services", "0", "service") != H {
		t.Errorf("services_list discourse: %v", svc)
	}
	// The connector speaks every protocol the hub hosts: one document each.
	for _, p := range env.Protocols {
		if svc := r.call(A, "services_list", obj{"protocol": p}); len(list(svc, "services")) != 1 || str(svc, "services", "0", "protocol") != p {
			t.Errorf("services_list %s: %v", p, svc)
		}
	}
	r.fail(A, "services_list", obj{"host": "https://not-configured.example"}, "host_not_allowed")

	// Profiles: two updates of Alice's, one of Bob's; Dave has none.
	r.empty(A, "profile_update")
	r.required(A, "profile_update", obj{"profile_service": H, "profile": obj{"name": "Alice v1"}})
	r.call(A, "profile_update", obj{"profile_service": H, "profile": obj{"name": "Alice", "description": "Moderates reviews."}})
	r.call(B, "profile_update", obj{"profile_service": H, "profile": obj{"name": "Bob"}})
	self := r.empty(A, "profiles_get")
	if len(list(self, "profiles")) != 1 || str(self, "profiles", "0", "name") != "Alice" {
		t.Errorf("profiles_get {}: %v", self)
	}
	pg := r.call(A, "profiles_get", obj{"profile_service": H, "ids": []any{A.ID, B.ID, D.ID}})
	if len(list(pg, "profiles")) != 2 || str(pg, "profiles", "1", "name") != "Bob" || str(pg, "missing", "0") != D.ID {
		t.Errorf("profiles_get batch: %v", pg)
	}
	hist := r.empty(A, "profile_history")
	if len(list(hist, "envelopes")) != 2 || str(hist, "agent_id") != A.ID {
		t.Errorf("profile_history {}: %v", hist)
	}
	page := r.call(A, "profile_history", obj{"profile_service": H, "agent_id": A.ID, "limit": 1})
	cur := str(page, "next_cursor")
	if len(list(page, "envelopes")) != 1 || cur == "" {
		t.Fatalf("profile_history page 1: %v", page)
	}
	page2 := r.call(A, "profile_history", obj{"agent_id": A.ID, "limit": 1, "cursor": cur})
	n1, n2 := num(page, "envelopes", "0", "event", "nonce"), num(page2, "envelopes", "0", "event", "nonce")
	if len(list(page2, "envelopes")) != 1 || n2 >= n1 {
		t.Errorf("profile_history pages: nonces %d then %d, want decreasing", n1, n2)
	}
	if h := r.call(A, "profile_history", obj{"agent_id": D.ID}); len(list(h, "envelopes")) != 0 {
		t.Errorf("profile_history of an agent without a profile: %v", h)
	}

	// Rooms: a plain public room Q (required inputs only), a public room P
	// with packs and every room_create input, a restricted room R.
	r.empty(A, "room_create")
	q := r.required(A, "room_create", obj{"host": H, "topic": "Plain room", "visibility": "public", "start_time": now - 1000, "end_time": now + 3600_000})
	Q := str(q, "room", "room_id")
	p := r.call(A, "room_create", obj{"host": H, "topic": "Signature review", "visibility": "public", "start_time": now - 1000,
		"end_time": now + 3600_000, "agenda": "Compare the options.", "guidance": "Cite records.", "tags": []any{"review"}, "language": "en",
		"policy": obj{"open_roles": []any{"speaker", "observer"}, "max_speakers": 10},
		"types":  []any{obj{"use": "adp:reactions/1.0"}, obj{"use": "adp:deliberation/1.0"}, obj{"use": "adp:moderation/1.0"}}, "extra": obj{"k": "v"}})
	P := str(p, "room", "room_id")
	genesis := obj{"seq": num(p, "sync", "head_seq"), "hash": str(p, "sync", "head_hash")}
	R := createRoom(r, A, H, "restricted", now)

	// Discovery: the search tool and rooms_list's scopes.
	r.empty(A, "rooms_search")
	if s := r.required(B, "rooms_search", obj{"host": H}); len(list(s, "rooms")) < 2 {
		t.Errorf("rooms_search: %v", s)
	}
	s := r.call(B, "rooms_search", obj{"host": H, "status": "active", "tag": "review", "keyword": "Signature", "creator": A.ID,
		"starts_after": 0, "ends_before": now + 7200_000, "language": "en", "limit": 10})
	if len(list(s, "rooms")) != 1 || str(s, "rooms", "0", "room_id") != P {
		t.Errorf("rooms_search filtered: %v", s)
	}
	first := r.call(B, "rooms_search", obj{"host": H, "limit": 1})
	r.call(B, "rooms_search", obj{"host": H, "limit": 1, "cursor": str(first, "next_cursor")})
	if l := r.empty(A, "rooms_list"); len(list(l, "rooms")) != 3 {
		t.Errorf("rooms_list {}: %v", l)
	}
	mine := r.call(A, "rooms_list", obj{"scope": "known", "host": H, "status": "active", "membership": "creator", "limit": 2})
	r.call(A, "rooms_list", obj{"limit": 2, "cursor": str(mine, "next_cursor")})
	pub := r.call(B, "rooms_list", obj{"scope": "public", "host": H, "status": "active", "tag": "review", "keyword": "Signature",
		"creator": A.ID, "starts_after": 0, "ends_before": now + 7200_000, "language": "en", "limit": 5})
	if len(list(pub, "rooms")) != 1 || str(pub, "rooms", "0", "room_id") != P {
		t.Errorf("rooms_list public: %v", pub)
	}
	if m := r.call(A, "rooms_list", obj{"scope": "mine", "host": H, "membership": "creator"}); len(list(m, "rooms")) != 3 {
		t.Errorf("rooms_list mine: %v", m)
	}
	r.fail(B, "rooms_list", obj{"membership": "invited"}, "invalid_input")

	// Opening and reading room state.
	r.empty(B, "room_open")
	r.required(B, "room_open", obj{"host": H, "room_id": Q})
	if o := r.call(B, "room_open", obj{"host": H, "room_id": P, "subscribe": true, "refresh": true}); !get(o, "sync", "subscribed").(bool) {
		t.Errorf("room_open subscribe: %v", o)
	}
	r.empty(A, "room_state")
	st := r.required(A, "room_state", obj{"room_id": P})
	if len(list(st, "room", "types")) < 3 || get(st, "room", "types", "0", "schema") == nil || num(st, "room", "members_count") != 1 {
		t.Errorf("room_state: full types and one member expected: %v", get(st, "room"))
	}
	if st := r.call(B, "room_state", obj{"room_id": P, "host": H, "refresh": true, "include_types": false, "subscribe": false}); get(st, "room", "types", "0", "schema") != nil || get(st, "sync", "subscribed") != false {
		t.Errorf("room_state brief types, unsubscribed: %v", st)
	}

	// Joining: directly (Bob in P), by request (Carol and Dave in R).
	r.empty(B, "room_join")
	if j := r.required(B, "room_join", obj{"room_id": P, "role": "speaker"}); j["status"] != "joined" {
		t.Fatalf("room_join: %v", j)
	}
	r.call(B, "room_join", obj{"room_id": Q, "role": "observer"})
	jc := r.call(C, "room_join", obj{"room_id": R, "host": H, "role": "speaker", "perspective": "security reviewer", "reason": "I review signatures.", "extra": obj{}})
	if jc["status"] != "approval_required" {
		t.Fatalf("room_join by request: %v", jc)
	}
	reqC := str(jc, "join_request", "id")
	reqD := str(r.call(D, "room_join", obj{"room_id": R, "role": "observer"}), "join_request", "id")
	// Alice, who moderates R, is told of both requests (connector-made
	// items: no seq).
	eventually(t, 20*time.Second, "Alice's room.join.requested items", func() bool {
		in := r.call(A, "inbox_next", obj{"room_id": R, "kinds": []any{"room.join.requested"}})
		return len(list(in, "items")) == 2 && get(in, "items", "0", "seq") == nil
	})
	r.empty(A, "join_requests_list")
	if l := r.required(A, "join_requests_list", obj{"room_id": R}); len(list(l, "join_requests")) != 2 {
		t.Errorf("join_requests_list: %v", l)
	}
	jl := r.call(A, "join_requests_list", obj{"room_id": R, "host": H, "status": "pending", "limit": 1})
	jl2 := r.call(A, "join_requests_list", obj{"room_id": R, "status": "pending", "limit": 1, "cursor": str(jl, "next_cursor")})
	if got := []string{str(jl, "join_requests", "0", "id"), str(jl2, "join_requests", "0", "id")}; !slices.Contains(got, reqC) || !slices.Contains(got, reqD) {
		t.Errorf("join_requests_list pages: %v", got)
	}
	r.empty(A, "join_request_review")
	r.call(A, "join_request_review", obj{"room_id": R, "host": H, "request_id": reqC, "decision": "approve", "role": "speaker", "reason": "Relevant."})
	r.required(A, "join_request_review", obj{"room_id": R, "request_id": reqD, "decision": "reject"})
	if j := r.call(C, "room_join", obj{"room_id": R, "role": "speaker", "request_id": reqC}); j["status"] != "joined" {
		t.Fatalf("room_join completion: %v", j)
	}

	// Members.
	r.empty(A, "room_members_list")
	if m := r.required(A, "room_members_list", obj{"room_id": P}); len(list(m, "members")) != 2 {
		t.Errorf("room_members_list: %v", m)
	}
	ml := r.call(A, "room_members_list", obj{"room_id": P, "limit": 1})
	r.call(A, "room_members_list", obj{"room_id": P, "limit": 1, "cursor": str(ml, "next_cursor")})
	r.empty(A, "room_member_get")
	r.required(A, "room_member_get", obj{"room_id": P, "agent_id": B.ID})

	// Messages and events. Bob's first message; Alice answers against the
	// current head with every input; custom events.
	r.empty(B, "room_send_message")
	hello := r.required(B, "room_send_message", obj{"room_id": P, "content": "Hello, I can review the signatures."})
	if hello["status"] != "sent" {
		t.Fatalf("room_send_message: %v", hello)
	}
	helloID := str(hello, "item", "event_id")
	stA := r.call(A, "room_state", obj{"room_id": P, "refresh": true})
	ans := r.call(A, "room_send_message", obj{"room_id": P, "host": H, "content": "## Thanks", "content_type": "text/markdown",
		"mentions": []any{B.ID}, "references": []any{helloID}, "extra": obj{"k": 1}, "base_seq": get(stA, "sync", "head_seq"),
		"base_hash": get(stA, "sync", "head_hash"), "on_head_mismatch": "reject"})
	if ans["status"] != "sent" || num(ans, "item", "accepted_at") == 0 || num(ans, "item", "accepted_at") != num(ans, "item", "received_at") {
		t.Fatalf("room_send_message with every input: %v", ans)
	}
	r.empty(B, "room_submit_event")
	r.required(B, "room_submit_event", obj{"room_id": P, "type": "reaction.create", "payload": obj{"event_id": str(ans, "item", "event_id"), "reaction": "+1"}})
	poll := r.call(A, "room_submit_event", obj{"room_id": P, "host": H, "type": "poll.create",
		"payload":  obj{"poll_id": "p1", "question": "Which option?", "options": []any{obj{"id": "a", "label": "A"}, obj{"id": "b", "label": "B"}}},
		"mentions": []any{B.ID}, "references": []any{helloID}, "base_seq": get(stA, "sync", "head_seq"), "base_hash": get(stA, "sync", "head_hash"),
		"on_head_mismatch": "hold"})
	if poll["status"] != "sent" {
		t.Fatalf("room_submit_event poll.create: %v", poll)
	}
	pollID := str(poll, "item", "event_id")
	r.required(A, "room_member_get", obj{"room_id": P, "agent_id": A.ID})
	mg := r.call(A, "room_member_get", obj{"room_id": P, "host": H, "agent_id": B.ID, "include_profile": true, "include_recent_activity": true})
	if str(mg, "member", "profile", "name") != "Bob" || len(list(mg, "recent")) == 0 {
		t.Errorf("room_member_get with profile and activity: %v", mg)
	}
	mlb := r.call(A, "room_members_list", obj{"room_id": P, "host": H, "agent_id": B.ID, "status": "all", "role": "speaker",
		"include_profiles": true, "include_recent_activity": true, "limit": 500})
	if len(list(mlb, "members")) != 1 || str(mlb, "members", "0", "profile", "name") != "Bob" || len(list(mlb, "recent")) == 0 {
		t.Errorf("room_members_list one member: %v", mlb)
	}

	// Statuses.
	r.empty(B, "agent_status_set")
	r.required(B, "agent_status_set", obj{"room_id": P, "state": "drafting"})
	r.call(B, "agent_status_set", obj{"room_id": P, "host": H, "state": "working", "summary": "Checking the signatures.", "seen_seq": 2,
		"seen_hash": hashAt(t, r, B, P, 2), "claim_id": "sig-review", "activity": "reviewing", "expires_at": now + 600_000, "extra": obj{"k": 1}})
	r.empty(A, "agent_status_list")
	r.required(A, "agent_status_list", obj{"room_id": P})
	if sl := r.call(A, "agent_status_list", obj{"room_id": P, "host": H, "agent_id": B.ID, "refresh": true}); str(sl, "statuses", "0", "claim_id") != "sig-review" {
		t.Errorf("agent_status_list one agent: %v", sl)
	}
	r.empty(A, "agent_status_get")
	r.required(A, "agent_status_get", obj{"room_id": P, "agent_id": B.ID})
	r.call(A, "agent_status_get", obj{"room_id": P, "host": H, "agent_id": B.ID, "refresh": true})

	// Timeline, read cursor, inbox (Bob was mentioned).
	r.empty(B, "room_timeline")
	tl := r.required(B, "room_timeline", obj{"room_id": P})
	if get(tl, "history", "source") != "local" || num(tl, "history", "last_seq") < 4 {
		t.Errorf("room_timeline history: %v", get(tl, "history"))
	}
	full := r.call(B, "room_timeline", obj{"room_id": P, "host": H, "after_seq": 0, "before_seq": 100, "limit": 50, "types": []any{"message.create"},
		"actors": []any{A.ID, B.ID}, "unread_only": true, "mark_read": true, "refresh": true, "include_records": true, "source": "local"})
	if len(list(full, "items")) != 2 || get(full, "items", "0", "record") == nil {
		t.Errorf("room_timeline with every local input: %v", full)
	}
	remote := r.call(C, "room_timeline", obj{"room_id": P, "host": H, "source": "remote", "limit": 3, "types": []any{"message.create"}})
	if get(remote, "history", "source") != "remote" || num(remote, "history", "first_seq") != 1 || len(list(remote, "items")) != 2 {
		t.Errorf("room_timeline remote (Carol never opened the room): %v", remote)
	}
	r.fail(C, "room_timeline", obj{"room_id": P, "source": "remote", "mark_read": true}, "invalid_input")
	r.empty(B, "room_mark_read")
	r.required(B, "room_mark_read", obj{"room_id": P, "through_seq": 2})
	r.call(B, "room_mark_read", obj{"room_id": P, "host": H, "through_seq": 3})
	var mention obj
	eventually(t, 20*time.Second, "Bob's mention in his inbox", func() bool {
		in := r.empty(B, "inbox_next")
		for _, it := range list(in, "items") {
			if get(it, "kind") == "room.mention" {
				mention = it.(obj)
				return true
			}
		}
		r.call(B, "room_state", obj{"room_id": P, "refresh": true})
		return false
	})
	claimed := r.call(B, "inbox_next", obj{"room_id": P, "host": H, "kinds": []any{"room.mention", "room.event.custom", "mail.received"}, "limit": 5, "wait_ms": 100, "claim": true})
	if len(list(claimed, "items")) == 0 || str(claimed, "items", "0", "id") != str(mention, "id") {
		t.Errorf("inbox_next claim: %v", claimed)
	}
	r.empty(B, "inbox_ack")
	r.call(B, "inbox_ack", obj{"ids": []any{str(mention, "id")}, "action": "defer", "defer_until": now})
	r.required(B, "inbox_ack", obj{"ids": []any{str(mention, "id")}, "action": "handled"})

	// Held drafts: Alice changes the contract (the head moves), then
	// writes against the genesis head are held.
	upd := r.call(A, "room_submit_event", obj{"room_id": P, "type": "room.update", "payload": obj{"agenda": "Pick an option."}})
	if upd["status"] != "sent" {
		t.Fatalf("room.update: %v", upd)
	}
	stale := obj{"base_seq": genesis["seq"], "base_hash": genesis["hash"]}
	heldMsg := func(text string) string {
		res := r.call(B, "room_send_message", obj{"room_id": P, "content": text, "base_seq": stale["base_seq"], "base_hash": stale["base_hash"]})
		if res["status"] != "held" || str(res, "draft", "id") == "" {
			t.Fatalf("a write against the genesis head: %v", res)
		}
		return str(res, "draft", "id")
	}
	d1, d2 := heldMsg("Option A."), heldMsg("Option B.")
	r.empty(B, "drafts_list")
	dl := r.call(B, "drafts_list", obj{"room_id": P, "host": H, "limit": 1})
	r.call(B, "drafts_list", obj{"limit": 1, "cursor": str(dl, "next_cursor")})
	one := r.call(B, "drafts_list", obj{"draft_id": d1})
	if len(list(one, "drafts")) != 1 || get(one, "sync") == nil || get(one, "changes") == nil {
		t.Errorf("drafts_list draft_id: %v", one)
	}
	r.empty(B, "draft_get")
	if g := r.required(B, "draft_get", obj{"draft_id": d1}); len(list(g, "changes")) == 0 {
		t.Errorf("draft_get: %v", g)
	}
	r.empty(B, "draft_commit")
	rev := r.call(B, "draft_commit", obj{"draft_id": d1, "action": "revise", "content": "Option A, as the poll says.", "content_type": "text/plain",
		"mentions": []any{A.ID}, "references": []any{pollID}, "extra": obj{}, "on_head_mismatch": "hold"})
	if rev["status"] != "sent" {
		t.Fatalf("draft_commit revise: %v", rev)
	}
	if c := r.call(B, "draft_commit", obj{"draft_id": d2, "action": "send"}); c["status"] != "sent" {
		t.Fatalf("draft_commit send (0.12.6 alias): %v", c)
	}
	d3 := heldMsg("Option C.")
	rej := r.call(B, "draft_commit", obj{"draft_id": d3, "action": "send_as_is", "base_seq": stale["base_seq"], "base_hash": stale["base_hash"], "on_head_mismatch": "reject"})
	if rej["status"] != "rejected" {
		t.Fatalf("draft_commit against a stale base with reject: %v", rej)
	}
	if g := r.call(B, "draft_get", obj{"draft_id": d3}); str(g, "draft", "id") != d3 {
		t.Errorf("a rejected commit must keep the draft: %v", g)
	}
	if c := r.call(B, "draft_commit", obj{"draft_id": d3, "action": "drop"}); c["status"] != "dropped" {
		t.Fatalf("draft_commit drop (0.12.6 alias): %v", c)
	}
	r.required(B, "draft_commit", obj{"draft_id": heldMsg("Option D."), "action": "stay_silent"})
	r.empty(B, "draft_drop")
	r.required(B, "draft_drop", obj{"draft_id": heldMsg("Option E.")})
	// An event draft: Alice's own contract write against the genesis head.
	heldEv := r.call(A, "room_submit_event", obj{"room_id": P, "type": "room.update", "payload": obj{"guidance": "Be brief."},
		"base_seq": stale["base_seq"], "base_hash": stale["base_hash"]})
	if heldEv["status"] != "held" {
		t.Fatalf("a contract write against the genesis head: %v", heldEv)
	}
	evRev := r.call(A, "draft_commit", obj{"draft_id": str(heldEv, "draft", "id"), "action": "revise", "type": "room.update",
		"payload": obj{"guidance": "Be brief and cite."}, "mentions": []any{B.ID}})
	if evRev["status"] != "sent" {
		t.Fatalf("draft_commit revise of an event draft: %v", evRev)
	}
	sa := r.call(B, "room_send_message", obj{"room_id": P, "content": "Late.", "base_seq": stale["base_seq"], "base_hash": stale["base_hash"], "on_head_mismatch": "send_anyway"})
	if sa["status"] != "sent" {
		t.Errorf("send_anyway: %v", sa)
	}
	if c := r.call(B, "draft_commit", obj{"draft_id": heldMsg("Option F."), "action": "send_anyway"}); c["status"] != "sent" {
		t.Errorf("draft_commit send_anyway: %v", c)
	}

	// Schemas.
	r.empty(A, "schema_get")
	sg := r.required(A, "schema_get", obj{"protocol": "agent-discourse/1.0"})
	if len(list(sg, "schemas")) != 12 || len(list(sg, "registered_packs")) == 0 {
		t.Errorf("schema_get discourse: %d schemas", len(list(sg, "schemas")))
	}
	if sg := r.call(A, "schema_get", obj{"protocol": "agent-discourse/1.0", "type": "poll.vote", "room_id": P, "host": H}); len(list(sg, "schemas")) != 1 {
		t.Errorf("schema_get of a room's custom type: %v", sg)
	}
	if sg := r.call(A, "schema_get", obj{"protocol": "agent-profile/1.0"}); str(sg, "schemas", "0", "type") != "profile.update" {
		t.Errorf("schema_get profile: %v", sg)
	}

	// Watching without joining: Dave watches poll.vote in P, of which he
	// is no member; Bob's vote becomes a room.event.custom item for him.
	r.empty(D, "room_watch")
	if w := r.required(D, "room_watch", obj{"room_id": P}); len(list(w, "types")) != 0 {
		t.Errorf("room_watch read: %v", w)
	}
	if w := r.call(D, "room_watch", obj{"room_id": P, "host": H, "types": []any{"poll.vote"}}); str(w, "types", "0") != "poll.vote" {
		t.Errorf("room_watch set: %v", w)
	}
	r.fail(D, "room_watch", obj{"room_id": P, "types": []any{"message.create"}}, "type_not_defined")
	vote := r.call(B, "room_submit_event", obj{"room_id": P, "type": "poll.vote", "payload": obj{"poll_event_id": pollID, "option_ids": []any{"a"}}})
	eventually(t, 20*time.Second, "Dave's room.event.custom item", func() bool {
		r.call(D, "room_timeline", obj{"room_id": P, "refresh": true, "limit": 1})
		in := r.call(D, "inbox_next", obj{"kinds": []any{"room.event.custom"}})
		return str(in, "items", "0", "event_id") == str(vote, "item", "event_id") && str(in, "items", "0", "reason") == "watched_type"
	})
	if st := r.call(D, "room_state", obj{"room_id": P}); get(st, "room", "self_member") != nil {
		t.Errorf("Dave watched without joining, yet is a member: %v", get(st, "room", "self_member"))
	}

	// The archive of P, verified and kept.
	r.empty(A, "room_archive")
	arch := r.required(A, "room_archive", obj{"room_id": P})
	if get(arch, "verified") != true || len(list(arch, "records")) < 10 || str(arch, "archive", "uri") != "agent-protocols://rooms/"+P+"/archive" {
		t.Errorf("room_archive: verified %v, %d records, %v", get(arch, "verified"), len(list(arch, "records")), get(arch, "archive"))
	}
	if a := r.call(C, "room_archive", obj{"room_id": P, "host": H, "include_records": false}); len(list(a, "records")) != 0 || num(a, "archive", "records_count") < 10 {
		t.Errorf("room_archive without records: %v", get(a, "archive"))
	}

	runMail(r, env)

	// Leaving.
	r.empty(B, "room_leave")
	if l := r.required(B, "room_leave", obj{"room_id": Q}); get(l, "record") == nil {
		t.Errorf("room_leave: %v", l)
	}
	r.call(C, "room_leave", obj{"room_id": R, "host": H, "reason": "Done here."})
	if left := r.call(B, "rooms_list", obj{"scope": "mine", "host": H, "membership": "left"}); len(list(left, "rooms")) != 1 || str(left, "rooms", "0", "room_id") != Q {
		t.Errorf("rooms_list mine left: %v", left)
	}

	runDelegation(r, env)
	runKnowledge(r, env)
	r.finish()
}

// createRoom creates a room of a visibility for a, open for an hour.
func createRoom(r *runner, a *Agent, host, visibility string, now int64) string {
	r.t.Helper()
	res := r.call(a, "room_create", obj{"host": host, "topic": "A " + visibility + " room", "visibility": visibility,
		"start_time": now - 1000, "end_time": now + 3600_000})
	return str(res, "room", "room_id")
}

// hashAt returns the record hash at seq of a room as a sees it.
func hashAt(t *testing.T, r *runner, a *Agent, roomID string, seq int64) string {
	t.Helper()
	tl := r.call(a, "room_timeline", obj{"room_id": roomID, "after_seq": seq - 1, "limit": 1, "include_records": true})
	h := str(tl, "items", "0", "record", "hash")
	if h == "" || num(tl, "items", "0", "seq") != seq {
		t.Fatalf("no record at seq %d: %v", seq, tl)
	}
	return h
}
