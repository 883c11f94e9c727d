package discourse_test

import (
	"net/http"
	"testing"
	"time"

	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	"apconnect/host/identity"
	"apconnect/host/proto/adp"
)

// TestAgentStatus: transient agent status (ADP 16.4) — writers, TTL, reads
// by room read permission, and clearing on leave, removal and demotion.
func TestAgentStatus(t *testing.T) {
	t.Parallel()
	f := newFx(t, withLimits(func(l *hub.Limits) { l.Discourse.StatusWritesPerMinute = 4 }))
	as := agents(200, 6)
	creator, sp, obs, outsider, sp2 := as[0], as[1], as[2], as[3], as[4]
	id := f.create(creator, nil)
	restricted := f.create(creator, obj{"visibility": "restricted", "policy": obj{"invites": obj{sp.ID: "speaker"}}})
	f.join(sp, id, adp.RoleSpeaker)
	f.join(sp2, id, adp.RoleSpeaker)
	f.join(obs, id, adp.RoleObserver)
	f.join(sp, restricted, adp.RoleSpeaker)
	now := f.clock.Now().UnixMilli()
	put := func(a *hubtest.Agent, room string, body any) *hubtest.Response {
		return f.h.Do(http.MethodPut, "/v1/rooms/"+room+"/agent-status", body, f.h.AuthHeader(t, a))
	}
	path := func(room string) string { return "/v1/rooms/" + room + "/agent-status" }

	t.Run("a speaker writes; TTL assigned and capped", func(t *testing.T) {
		r := put(sp, id, obj{"state": "drafting", "summary": "reply", "seen_seq": 4, "seen_hash": f.head(id).Hash, "claim_id": "c1", "activity": "typing", "extra": obj{}})
		wantStatus(t, r, 200)
		wantShape(t, "agentStatus", r.Body)
		d := decodeJSON(t, r.Body)
		if d["expires_at"] != float64(now+300_000) || d["updated_at"] != float64(now) || d["agent_id"] != sp.ID || d["room_id"] != id {
			t.Fatalf("stored %s", r.Body)
		}
		r = put(sp2, id, obj{"state": "reading", "expires_at": now + 3600_000})
		wantStatus(t, r, 200)
		if decodeJSON(t, r.Body)["expires_at"] != float64(now+300_000) {
			t.Fatalf("client expires_at not capped: %s", r.Body)
		}
		r = put(creator, id, obj{"state": "idle", "expires_at": now + 60_000})
		if decodeJSON(t, r.Body)["expires_at"] != float64(now+60_000) {
			t.Fatalf("a shorter expires_at was changed: %s", r.Body)
		}
	})
	t.Run("who may write", func(t *testing.T) {
		wantError(t, put(obs, id, obj{"state": "idle"}), 403, identity.CodePermissionDenied)
		wantError(t, put(outsider, id, obj{"state": "idle"}), 403, adp.CodeMembershipRequired)
		wantError(t, f.h.Do(http.MethodPut, path(id), obj{"state": "idle"}, nil), 401, identity.CodeInvalidToken)
		wantError(t, put(sp, id, obj{"state": ""}), 400, identity.CodeInvalidRequest)
		wantError(t, put(sp, id, obj{"state": "x", "seq": 3}), 400, identity.CodeInvalidRequest)
		wantError(t, put(sp, id, obj{"summary": "no state"}), 400, identity.CodeInvalidRequest)
		wantError(t, put(sp, "nosuchroom0000000000", obj{"state": "x"}), 404, adp.CodeRoomNotFound)
	})
	t.Run("reads", func(t *testing.T) {
		r := f.h.Get(t, path(id), nil)
		wantStatus(t, r, 200)
		wantShape(t, "agentStatusListResponse", r.Body)
		if n := len(decodeJSON(t, r.Body)["result"].([]any)); n != 3 {
			t.Fatalf("%d statuses", n)
		}
		r = f.h.Get(t, path(id)+"?limit=2", nil)
		page := decodeJSON(t, r.Body)
		rest := decodeJSON(t, f.h.Get(t, path(id)+"?cursor="+page["next_cursor"].(string), nil).Body)
		if len(page["result"].([]any)) != 2 || len(rest["result"].([]any)) != 1 {
			t.Fatalf("pages %v / %v", page, rest)
		}
		one := f.h.Get(t, path(id)+"/"+sp.ID, nil)
		wantStatus(t, one, 200)
		wantShape(t, "agentStatus", one.Body)
		wantError(t, f.h.Get(t, path(id)+"/"+obs.ID, nil), 404, adp.CodeAgentStatusNotFound)
		wantError(t, f.h.Get(t, path(id)+"/nobody", nil), 400, identity.CodeInvalidRequest)
		wantStatus(t, put(sp, restricted, obj{"state": "working"}), 200)
		wantError(t, f.h.Get(t, path(restricted), nil), 401, identity.CodeInvalidToken)
		wantError(t, f.h.Get(t, path(restricted)+"/"+sp.ID, outsider), 403, adp.CodeMembershipRequired)
		wantStatus(t, f.h.Get(t, path(restricted)+"/"+sp.ID, sp), 200)
	})
	t.Run("expiry and explicit clearing", func(t *testing.T) {
		f.clock.Advance(61 * time.Second)
		wantError(t, f.h.Get(t, path(id)+"/"+creator.ID, nil), 404, adp.CodeAgentStatusNotFound)
		r := put(sp2, id, obj{"state": "away", "expires_at": f.clock.Now().UnixMilli()})
		wantStatus(t, r, 200)
		wantError(t, f.h.Get(t, path(id)+"/"+sp2.ID, nil), 404, adp.CodeAgentStatusNotFound)
	})
	t.Run("cleared on demotion, leave and removal", func(t *testing.T) {
		for _, a := range []*hubtest.Agent{sp, sp2, creator} {
			wantStatus(t, put(a, id, obj{"state": "working"}), 200)
		}
		f.must(creator, id, adp.TypeRoleUpdate, obj{"member": sp.ID, "role": "observer"})
		wantError(t, f.h.Get(t, path(id)+"/"+sp.ID, nil), 404, adp.CodeAgentStatusNotFound)
		f.must(sp2, id, adp.TypeRoomLeave, obj{})
		wantError(t, f.h.Get(t, path(id)+"/"+sp2.ID, nil), 404, adp.CodeAgentStatusNotFound)
		f.join(sp2, id, adp.RoleSpeaker)
		wantStatus(t, put(sp2, id, obj{"state": "back"}), 200)
		f.must(creator, id, adp.TypeMemberRemove, obj{"member": sp2.ID})
		wantError(t, f.h.Get(t, path(id)+"/"+sp2.ID, nil), 404, adp.CodeAgentStatusNotFound)
		wantStatus(t, f.h.Get(t, path(id)+"/"+creator.ID, nil), 200)
		// Status writes create no record and leave the head alone.
		if n := len(f.records(id, nil)); n != 8 { // create, 3 joins, role update, leave, join, remove
			t.Fatalf("%d records", n)
		}
	})
	t.Run("ended and cancelled rooms: room_not_active", func(t *testing.T) {
		// D-11: 0.12.6 has no room_ended; both states answer room_not_active.
		ended := f.create(creator, nil)
		f.must(creator, ended, adp.TypeRoomClose, obj{})
		wantError(t, put(creator, ended, obj{"state": "idle"}), 409, adp.CodeRoomNotActive)
		later := f.clock.Now().UnixMilli() + 3600_000
		cancelled := f.create(creator, obj{"start_time": later, "end_time": later + 3600_000})
		f.must(creator, cancelled, adp.TypeRoomCancel, obj{})
		wantError(t, put(creator, cancelled, obj{"state": "idle"}), 409, adp.CodeRoomNotActive)
	})
	t.Run("status writes are rate limited", func(t *testing.T) {
		f.clock.Advance(time.Minute)
		for i := 0; i < 4; i++ {
			wantStatus(t, put(creator, id, obj{"state": "busy"}), 200)
		}
		r := put(creator, id, obj{"state": "busy"})
		wantError(t, r, http.StatusTooManyRequests, identity.CodeRateLimited)
		if r.Header.Get("Retry-After") == "" {
			t.Fatal("no Retry-After")
		}
	})
}
