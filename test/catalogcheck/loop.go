package catalogcheck

import (
	"testing"
	"time"
)

// RunSDKLoop is a client that knows only the reference SDK 0.12.6's catalog
// — its tool names and its inputs, nothing of the seed's — running the
// seed's agent interaction loop (connector spec 4.5) and the moderator's
// duties: wake on the inbox, read, decide, announce, write against what was
// read, resolve held drafts, close the loop; review join requests and
// manage the room's lifecycle. Every result is checked against both
// catalogs' output schemas.
func RunSDKLoop(t *testing.T, env Env) {
	r := newRunner(t, env)
	r.sdkOnly = true
	M, X, Y := env.Alice, env.Bob, env.Carol
	H := env.Host
	now := time.Now().UnixMilli()

	for _, a := range []*Agent{M, X, Y} {
		a.ID = str(r.call(a, "identity_current", obj{}), "agent_id")
	}
	if s := r.call(M, "services_list", obj{"host": H}); len(list(s, "services")) != 3 {
		t.Errorf("services_list: %v", s)
	}
	// Read before profile_update (a full replacement), then publish.
	if p := r.call(M, "profiles_get", obj{"profile_service": H}); len(list(p, "missing")) != 1 {
		t.Errorf("profiles_get before any update: %v", p)
	}
	r.call(M, "profile_update", obj{"profile_service": H, "profile": obj{"name": "Moderator"}})
	r.call(X, "profile_update", obj{"profile_service": H, "profile": obj{"name": "Reviewer", "capabilities": []any{"review"}}})

	// The moderator opens a moderated room and a restricted one.
	created := r.call(M, "room_create", obj{"host": H, "topic": "Release review", "visibility": "public", "start_time": now - 1000,
		"end_time": now + 3600_000, "guidance": "One point per message.", "policy": obj{"open_roles": []any{"speaker", "observer"}},
		"types": []any{obj{"use": "adp:moderation/1.0"}, obj{"use": "adp:deliberation/1.0"}, obj{"use": "adp:reactions/1.0"}}})
	P := str(created, "room", "room_id")
	R := str(r.call(M, "room_create", obj{"host": H, "topic": "Maintainers", "visibility": "restricted", "start_time": now - 1000,
		"end_time": now + 3600_000}), "room", "room_id")

	// Getting in: discovery, state (opening the room), joining.
	found := r.call(X, "rooms_list", obj{"scope": "public", "host": H, "keyword": "Release"})
	if str(found, "rooms", "0", "room_id") != P {
		t.Fatalf("rooms_list public: %v", found)
	}
	st := r.call(X, "room_state", obj{"room_id": P, "host": H, "subscribe": true})
	if str(st, "room", "guidance") != "One point per message." || get(st, "sync", "subscribed") != true {
		t.Errorf("room_state: %v", st)
	}
	if j := r.call(X, "room_join", obj{"room_id": P, "role": "speaker", "perspective": "release engineer"}); j["status"] != "joined" {
		t.Fatalf("room_join: %v", j)
	}
	if j := r.call(Y, "room_join", obj{"room_id": R, "host": H, "role": "speaker", "reason": "I maintain the CI."}); j["status"] != "approval_required" {
		t.Fatalf("room_join restricted: %v", j)
	}

	// Moderator duty: a join request to review.
	var reqItem obj
	eventually(t, 20*time.Second, "a room.join.requested item", func() bool {
		in := r.call(M, "inbox_next", obj{"kinds": []any{"room.join.requested"}, "claim": true})
		if len(list(in, "items")) == 0 {
			return false
		}
		reqItem = list(in, "items")[0].(obj)
		return true
	})
	reqs := r.call(M, "join_requests_list", obj{"room_id": R, "status": "pending"})
	reqID := str(reqs, "join_requests", "0", "id")
	if reqID == "" {
		t.Fatalf("join_requests_list: %v", reqs)
	}
	r.call(M, "join_request_review", obj{"room_id": R, "request_id": reqID, "decision": "approve", "role": "speaker"})
	r.call(M, "inbox_ack", obj{"ids": []any{reqItem["id"]}, "action": "handled"})
	// 0.12.6's room_join has no request_id: the stored request completes.
	eventually(t, 20*time.Second, "the approved join", func() bool {
		j := r.raw(Y, "room_join", obj{"room_id": R, "role": "speaker"})
		if j.IsError {
			return false
		}
		return r.check(Y, "room_join", nil, j)["status"] == "joined"
	})

	// 1. Wake up on demand: the moderator addresses X and gives X the turn.
	ask := r.call(M, "room_send_message", obj{"room_id": P, "content": "Is the release ready?", "mentions": []any{X.ID}})
	askID := str(ask, "item", "event_id")
	r.call(M, "room_submit_event", obj{"room_id": P, "type": "turn.update", "payload": obj{"turn_id": 1, "speaker": X.ID}})
	var items []any
	eventually(t, 20*time.Second, "X's mention and turn", func() bool {
		in := r.call(X, "inbox_next", obj{"room_id": P, "kinds": []any{"room.mention", "room.turn.assigned"}, "wait_ms": 200, "claim": true})
		items = append(items, list(in, "items")...)
		return len(items) >= 2
	})
	kinds := map[string]bool{}
	var ids []any
	for _, it := range items {
		kinds[str(it, "kind")] = true
		ids = append(ids, get(it, "id"))
		if get(it, "requires_response") != true {
			t.Errorf("%s does not require a response", str(it, "kind"))
		}
	}
	if !kinds["room.mention"] || !kinds["room.turn.assigned"] {
		t.Fatalf("inbox: %v", items)
	}

	// 2. Read before deciding.
	tl := r.call(X, "room_timeline", obj{"room_id": P, "unread_only": true, "mark_read": true, "refresh": true})
	if len(list(tl, "items")) == 0 || get(tl, "history", "source") != "local" {
		t.Fatalf("room_timeline: %v", tl)
	}
	st = r.call(X, "room_state", obj{"room_id": P})
	if num(st, "active_turn", "turn_id") != 1 || str(st, "active_turn", "speaker") != X.ID {
		t.Errorf("room_state active_turn: %v", get(st, "active_turn"))
	}
	seen := obj{"seq": get(st, "sync", "head_seq"), "hash": get(st, "sync", "head_hash")}

	// 3. Decide whether to speak: nobody claimed the work.
	if s := r.call(X, "agent_status_list", obj{"room_id": P, "refresh": true}); len(list(s, "statuses")) != 0 {
		t.Errorf("agent_status_list: %v", s)
	}
	// 4. Announce long work.
	r.call(X, "agent_status_set", obj{"room_id": P, "state": "drafting", "summary": "Checking CI.", "expires_at": now + 600_000})
	if s := r.call(M, "agent_status_list", obj{"room_id": P, "agent_id": X.ID, "refresh": true}); str(s, "statuses", "0", "state") != "drafting" {
		t.Errorf("the moderator sees X's status: %v", s)
	}

	// Meanwhile the moderator changes the agenda: the head moves.
	r.call(M, "room_submit_event", obj{"room_id": P, "type": "room.update", "payload": obj{"agenda": "Ship on Friday?"}})

	// 5. Write against what was seen: X answers on the head it read, so
	// the connector holds the write.
	held := r.call(X, "room_send_message", obj{"room_id": P, "content": "Ready.", "references": []any{askID},
		"base_seq": seen["seq"], "base_hash": seen["hash"]})
	if held["status"] != "held" {
		t.Fatalf("a write on the old head: %v", held)
	}
	draftID := str(held, "draft", "id")
	// 6. Handle the held draft: read what changed, revise, commit.
	d := r.call(X, "drafts_list", obj{"draft_id": draftID})
	if len(list(d, "changes")) == 0 || get(d, "sync") == nil {
		t.Fatalf("drafts_list draft_id: %v", d)
	}
	sent := r.call(X, "draft_commit", obj{"draft_id": draftID, "action": "revise", "content": "Ready for Friday."})
	if sent["status"] != "sent" {
		t.Fatalf("draft_commit revise: %v", sent)
	}
	// A second held draft is dropped, a third sent as is.
	for _, action := range []string{"drop", "send"} {
		h := r.call(X, "room_send_message", obj{"room_id": P, "content": "Also: " + action, "base_seq": seen["seq"], "base_hash": seen["hash"]})
		if h["status"] != "held" {
			t.Fatalf("held again: %v", h)
		}
		c := r.call(X, "draft_commit", obj{"draft_id": str(h, "draft", "id"), "action": action})
		want := map[string]string{"drop": "dropped", "send": "sent"}[action]
		if c["status"] != want {
			t.Fatalf("draft_commit %s: %v", action, c)
		}
	}
	if left := r.call(X, "drafts_list", obj{"room_id": P}); len(list(left, "drafts")) != 0 {
		t.Errorf("drafts left: %v", left)
	}
	// Signals never conflict: a reaction on the old head is sent.
	if re := r.call(X, "room_submit_event", obj{"room_id": P, "type": "reaction.create", "payload": obj{"event_id": askID, "reaction": "+1"},
		"base_seq": seen["seq"], "base_hash": seen["hash"]}); re["status"] != "sent" {
		t.Errorf("a signal on the old head: %v", re)
	}

	// 7. Close the loop: acknowledge, mark read, clear the status.
	if a := r.call(X, "inbox_ack", obj{"ids": ids, "action": "handled"}); len(list(a, "acknowledged")) != len(ids) {
		t.Errorf("inbox_ack: %v", a)
	}
	r.call(X, "room_timeline", obj{"room_id": P, "unread_only": true, "mark_read": true})
	r.call(X, "agent_status_set", obj{"room_id": P, "state": "idle", "expires_at": time.Now().UnixMilli()})
	if s := r.call(X, "agent_status_list", obj{"room_id": P, "refresh": true}); len(list(s, "statuses")) != 0 {
		t.Errorf("the cleared status is still listed: %v", s)
	}

	// Moderation and the room's end: a role change, custom schemas, a
	// watch, the close, and the verified archive.
	r.call(M, "room_members_list", obj{"room_id": P, "agent_id": X.ID, "include_recent_activity": true})
	if sg := r.call(M, "schema_get", obj{"protocol": "agent-discourse/1.0", "type": "room.member.role.update"}); len(list(sg, "schemas")) != 1 {
		t.Errorf("schema_get: %v", sg)
	}
	r.call(M, "room_submit_event", obj{"room_id": P, "type": "room.member.role.update", "payload": obj{"member": X.ID, "role": "observer"}})
	r.call(Y, "room_watch", obj{"room_id": P, "host": H, "types": []any{"reaction.create"}})
	r.call(M, "room_submit_event", obj{"room_id": P, "type": "room.close", "payload": obj{"reason": "Decided."}})
	arch := r.call(Y, "room_archive", obj{"room_id": P, "host": H})
	if get(arch, "verified") != true || get(arch, "state_verified") != true {
		t.Errorf("room_archive: %v", arch)
	}
	if p := r.call(Y, "profile_history", obj{"profile_service": H, "agent_id": X.ID}); len(list(p, "envelopes")) != 1 {
		t.Errorf("profile_history: %v", p)
	}
	if p := r.call(Y, "profiles_get", obj{"profile_service": H, "ids": []any{M.ID, X.ID}}); len(list(p, "profiles")) != 2 {
		t.Errorf("profiles_get: %v", p)
	}
}
