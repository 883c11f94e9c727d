package discourse_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"apconnect/host/hub/hubtest"
	"apconnect/host/identity"
	"apconnect/host/proto/adp"
)

// TestJoinRules: every rejection of ADP 9.2, and both direct-join paths,
// with the open roles of SDK 0.12.6 (D-10): the explicit list in any
// visibility, else [observer] for public rooms and none otherwise.
func TestJoinRules(t *testing.T) {
	t.Parallel()
	f := rulesFx(t)
	as := agents(60, 8)
	creator, invited, stranger, banned, x, y := as[0], as[1], as[2], as[3], as[4], as[5]
	now := f.clock.Now().UnixMilli()
	public := f.create(creator, obj{"policy": obj{"invites": obj{invited.ID: "moderator", banned.ID: "speaker"}}})
	restricted := f.create(creator, obj{"visibility": "restricted", "policy": obj{"invites": obj{invited.ID: "speaker"}}})
	private := f.create(creator, obj{"visibility": "private", "policy": obj{"invites": obj{invited.ID: "observer"}}})
	openRestricted := f.create(creator, obj{"visibility": "restricted", "policy": obj{"open_roles": arr{"speaker"}}})
	closedPublic := f.create(creator, obj{"policy": obj{"open_roles": arr{}}})
	small := f.create(creator, obj{"policy": obj{"max_speakers": 2, "open_roles": arr{"speaker", "observer"}}})
	f.must(creator, public, adp.TypeMemberRemove, obj{"member": banned.ID, "ban": true})

	join := func(a *hubtest.Agent, room string, role adp.Role) *hubtest.Response {
		return f.send(a, room, adp.TypeRoomJoin, obj{"role": role})
	}
	t.Run("a public room opens observer by default, not speaker", func(t *testing.T) {
		wantError(t, join(x, public, adp.RoleSpeaker), 403, adp.CodeApprovalRequired)
		wantStatus(t, join(x, public, adp.RoleObserver), 200)
	})
	t.Run("open roles admit directly in a restricted room", func(t *testing.T) {
		wantStatus(t, join(x, openRestricted, adp.RoleSpeaker), 200)
		wantError(t, join(y, openRestricted, adp.RoleObserver), 403, adp.CodeApprovalRequired)
	})
	t.Run("a public room with no open roles admits only invitations", func(t *testing.T) {
		wantError(t, join(stranger, closedPublic, adp.RoleObserver), 403, adp.CodeApprovalRequired)
	})
	t.Run("invited role in a private room", func(t *testing.T) {
		// The invited agent reads the private room's head to anchor on.
		head, _ := f.h.RoomHead(t, private, invited)
		wantStatus(t, f.sendAt(invited, private, adp.TypeRoomJoin, obj{"role": "observer"}, head), 200)
	})
	t.Run("already an active member (D-12: permission_denied)", func(t *testing.T) {
		wantError(t, join(x, public, adp.RoleObserver), 403, identity.CodePermissionDenied)
	})
	t.Run("banned, even though invited", func(t *testing.T) { wantError(t, join(banned, public, adp.RoleSpeaker), 403, adp.CodeMemberBanned) })
	t.Run("max_speakers would be exceeded", func(t *testing.T) {
		wantStatus(t, join(x, small, adp.RoleSpeaker), 200) // creator + x = 2
		wantError(t, join(y, small, adp.RoleSpeaker), 409, adp.CodeMaxSpeakersExceeded)
		wantStatus(t, join(y, small, adp.RoleObserver), 200) // observers do not count
	})
	t.Run("moderator is never an open role", func(t *testing.T) {
		wantError(t, join(stranger, public, adp.RoleModerator), 403, adp.CodeApprovalRequired)
	})
	t.Run("restricted room without invitation", func(t *testing.T) {
		wantError(t, join(stranger, restricted, adp.RoleSpeaker), 403, adp.CodeApprovalRequired)
	})
	t.Run("invited with another role", func(t *testing.T) {
		wantError(t, join(invited, restricted, adp.RoleModerator), 403, adp.CodeApprovalRequired)
	})
	t.Run("ended and cancelled rooms", func(t *testing.T) {
		closed := f.create(creator, nil)
		f.must(creator, closed, adp.TypeRoomClose, obj{})
		wantError(t, join(stranger, closed, adp.RoleSpeaker), 409, adp.CodeRoomNotActive)
		cancelled := f.create(creator, obj{"start_time": now + 3600_000, "end_time": now + 7200_000})
		f.must(creator, cancelled, adp.TypeRoomCancel, obj{})
		wantError(t, join(stranger, cancelled, adp.RoleSpeaker), 409, adp.CodeRoomNotActive)
	})
	t.Run("a scheduled room admits joins", func(t *testing.T) {
		sched := f.create(creator, obj{"start_time": now + 3600_000, "end_time": now + 7200_000})
		wantStatus(t, join(stranger, sched, adp.RoleSpeaker), 200)
		wantError(t, f.message(stranger, sched, "too early"), 409, adp.CodeRoomNotActive)
	})
}

// TestLeaveRoleRemoveRules: ADP 9.3, 9.4 and 9.5.
func TestLeaveRoleRemoveRules(t *testing.T) {
	t.Parallel()
	f := rulesFx(t)
	as := agents(70, 7)
	creator, mod, sp, obs, outsider, target := as[0], as[1], as[2], as[3], as[4], as[5]
	id := f.create(creator, obj{"policy": obj{"max_speakers": 3, "invites": obj{mod.ID: "moderator"}, "open_roles": arr{"speaker", "observer"}}})
	f.join(mod, id, adp.RoleModerator)
	f.join(sp, id, adp.RoleSpeaker)
	f.join(obs, id, adp.RoleObserver)

	for _, c := range []struct {
		name    string
		room    string
		by      *hubtest.Agent
		typ     string
		payload obj
		status  int
		code    string
	}{
		{"the creator cannot leave", id, creator, adp.TypeRoomLeave, obj{}, 403, identity.CodePermissionDenied},
		{"a non-member cannot leave", id, outsider, adp.TypeRoomLeave, obj{}, 403, identity.CodePermissionDenied},
		{"role update by a speaker", id, sp, adp.TypeRoleUpdate, obj{"member": obs.ID, "role": "speaker"}, 403, identity.CodePermissionDenied},
		{"role update of a non-member", id, mod, adp.TypeRoleUpdate, obj{"member": outsider.ID, "role": "speaker"}, 404, identity.CodeNotFound},
		{"role update exceeding max_speakers", id, mod, adp.TypeRoleUpdate, obj{"member": obs.ID, "role": "speaker"}, 409, adp.CodeMaxSpeakersExceeded},
		{"role update with an unknown role", id, mod, adp.TypeRoleUpdate, obj{"member": obs.ID, "role": "owner"}, 400, identity.CodeInvalidEvent},
		{"remove without member", id, mod, adp.TypeMemberRemove, obj{"reason": "x"}, 400, identity.CodeInvalidEvent},
		{"remove a malformed member", id, mod, adp.TypeMemberRemove, obj{"member": "did:agent:short"}, 400, identity.CodeInvalidEvent},
		{"remove the creator", id, mod, adp.TypeMemberRemove, obj{"member": creator.ID, "ban": true}, 403, identity.CodePermissionDenied},
		{"remove oneself", id, mod, adp.TypeMemberRemove, obj{"member": mod.ID}, 400, identity.CodeInvalidRequest},
		{"remove a non-member without ban", id, mod, adp.TypeMemberRemove, obj{"member": outsider.ID}, 404, identity.CodeNotFound},
		{"remove by a speaker", id, sp, adp.TypeMemberRemove, obj{"member": obs.ID}, 403, identity.CodePermissionDenied},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, f.send(c.by, c.room, c.typ, c.payload), c.status, c.code)
		})
	}
	t.Run("demotion to observer mutes", func(t *testing.T) {
		f.must(mod, id, adp.TypeRoleUpdate, obj{"member": sp.ID, "role": "observer", "reason": "mute"})
		wantError(t, f.message(sp, id, "muted"), 403, identity.CodePermissionDenied)
	})
	t.Run("a member leaves and may join again", func(t *testing.T) {
		f.must(obs, id, adp.TypeRoomLeave, obj{"reason": "bye"})
		wantError(t, f.send(obs, id, adp.TypeRoomLeave, obj{}), 403, identity.CodePermissionDenied)
		f.join(obs, id, adp.RoleObserver)
	})
	t.Run("a pre-emptive ban of a non-member blocks its join", func(t *testing.T) {
		f.must(mod, id, adp.TypeMemberRemove, obj{"member": target.ID, "ban": true})
		wantError(t, f.send(target, id, adp.TypeRoomJoin, obj{"role": "observer"}), 403, adp.CodeMemberBanned)
	})
	t.Run("removal ends membership", func(t *testing.T) {
		f.must(mod, id, adp.TypeMemberRemove, obj{"member": obs.ID})
		wantError(t, f.send(obs, id, adp.TypeRoomLeave, obj{}), 403, identity.CodePermissionDenied)
	})
}

// joinRequestResource is the wire form of a join request.
type joinRequestResource struct {
	ID            string          `json:"id"`
	Request       json.RawMessage `json:"request"`
	Status        string          `json:"status"`
	ExpiresAt     int64           `json:"expires_at"`
	ReviewedBy    *string         `json:"reviewed_by"`
	ReviewedAt    *int64          `json:"reviewed_at"`
	ReviewEventID *string         `json:"review_event_id"`
}

// submitRequest submits a join request and returns its resource.
func (f *fx) submitRequest(a *hubtest.Agent, roomID string, role adp.Role) joinRequestResource {
	f.t.Helper()
	r := f.joinRequest(a, roomID, obj{"role": role, "perspective": "tester", "reason": "please"})
	wantStatus(f.t, r, http.StatusCreated)
	wantShape(f.t, "joinRequest", r.Body)
	var j joinRequestResource
	r.Decode(f.t, &j)
	return j
}

// review submits a room.join.review embedding a request.
func (f *fx) review(by *hubtest.Agent, roomID string, request json.RawMessage, decision string, role adp.Role) *hubtest.Response {
	f.t.Helper()
	p := obj{"request": json.RawMessage(request), "decision": decision}
	if role != "" {
		p["role"] = role
	}
	return f.send(by, roomID, adp.TypeJoinReview, p)
}

// TestJoinRequestRules: ADP 10 — submission, supersession, expiry, review
// and the read permissions — each rejection with its code.
func TestJoinRequestRules(t *testing.T) {
	t.Parallel()
	f := rulesFx(t)
	as := agents(80, 9)
	creator, mod, sp, app, app2, app3, banned, outsider := as[0], as[1], as[2], as[3], as[4], as[5], as[6], as[7]
	now := f.clock.Now().UnixMilli()
	id := f.create(creator, obj{"visibility": "restricted", "end_time": now + 3*24*3600_000,
		"policy": obj{"invites": obj{mod.ID: "moderator", sp.ID: "speaker"}, "max_speakers": 4}})
	f.join(mod, id, adp.RoleModerator)
	f.join(sp, id, adp.RoleSpeaker)

	t.Run("submission rules", func(t *testing.T) {
		wantError(t, f.joinRequest(app, "nosuchroom0000000000", obj{"role": "speaker"}), 404, adp.CodeRoomNotFound)
		wantError(t, f.joinRequest(sp, id, obj{"role": "speaker"}), 403, identity.CodePermissionDenied)
		wantError(t, f.joinRequest(app, id, obj{"role": "owner"}), 400, identity.CodeInvalidEvent)
		wantError(t, f.h.Post("/v1/rooms/"+id+"/join-requests", f.raw(app, obj{"type": "room.join.request", "room_id": id,
			"base_seq": 1, "base_hash": f.head(id).Hash, "payload": obj{"role": "speaker"}})), 400, identity.CodeInvalidEvent)
		wantError(t, f.h.Post("/v1/rooms/"+id+"/join-requests", app.ADPEvent(t, f.clock.Now(), adp.TypeRoomJoin, id, ptr(f.head(id)), obj{"role": "speaker"})),
			400, identity.CodeInvalidEvent)
		closed := f.create(creator, obj{"visibility": "restricted"})
		f.must(creator, closed, adp.TypeRoomClose, obj{})
		wantError(t, f.joinRequest(app, closed, obj{"role": "speaker"}), 409, adp.CodeRoomNotActive)
	})

	first := f.submitRequest(app, id, adp.RoleSpeaker)
	t.Run("the request is pending with the default lifetime", func(t *testing.T) {
		if first.Status != "pending" || first.ExpiresAt != now+24*3600_000 || first.ReviewedBy != nil {
			t.Fatalf("%+v", first)
		}
	})
	second := f.submitRequest(app, id, adp.RoleObserver)
	t.Run("a new request supersedes the pending one", func(t *testing.T) {
		var j joinRequestResource
		r := f.h.Get(t, "/v1/rooms/"+id+"/join-requests/"+first.ID, app)
		wantStatus(t, r, 200)
		r.Decode(t, &j)
		if j.Status != "expired" {
			t.Fatalf("superseded request is %q", j.Status)
		}
		wantError(t, f.review(mod, id, first.Request, "approve", adp.RoleSpeaker), 409, adp.CodeJoinRequestNotPending)
	})
	t.Run("review rules", func(t *testing.T) {
		wantError(t, f.review(sp, id, second.Request, "approve", adp.RoleObserver), 403, identity.CodePermissionDenied)
		wantError(t, f.review(mod, id, second.Request, "approve", ""), 400, identity.CodeInvalidEvent)
		// A request that was signed but never submitted is not held.
		unsent := app2.ADPEvent(t, f.clock.Now(), adp.TypeJoinRequest, id, nil, obj{"role": "speaker"})
		wantError(t, f.review(mod, id, unsent, "approve", adp.RoleSpeaker), 404, adp.CodeJoinRequestNotFound)
		// A tampered embedded request fails its signature.
		tampered := strings.Replace(string(second.Request), `"observer"`, `"speaker"`, 1)
		r := f.review(mod, id, json.RawMessage(tampered), "approve", adp.RoleSpeaker)
		if r.ErrorCode() != identity.CodeInvalidEventHash && r.ErrorCode() != identity.CodeInvalidSignature {
			t.Fatalf("tampered request: %d %s", r.Status, r.Body)
		}
		// A request of another room.
		elsewhere := f.create(creator, obj{"visibility": "restricted"})
		other := f.submitRequest(app3, elsewhere, adp.RoleSpeaker)
		wantError(t, f.review(mod, id, other.Request, "approve", adp.RoleSpeaker), 400, identity.CodeInvalidEvent)
		// The approved role must be allowed.
		wantError(t, f.review(mod, id, second.Request, "approve", "owner"), 400, identity.CodeInvalidEvent)
	})
	t.Run("max_speakers applies to approvals", func(t *testing.T) {
		full := f.create(creator, obj{"visibility": "restricted", "policy": obj{"max_speakers": 1}})
		j := f.submitRequest(app2, full, adp.RoleSpeaker)
		wantError(t, f.review(creator, full, j.Request, "approve", adp.RoleSpeaker), 409, adp.CodeMaxSpeakersExceeded)
		r := f.review(creator, full, j.Request, "approve", adp.RoleObserver) // MAY differ from the requested role
		wantStatus(t, r, 200)
	})
	t.Run("approval makes a member; the request records the review", func(t *testing.T) {
		r := f.review(mod, id, second.Request, "approve", adp.RoleObserver)
		wantStatus(t, r, 200)
		rec, _ := adp.ParseRecord(r.Body)
		var j joinRequestResource
		f.h.Get(t, "/v1/rooms/"+id+"/join-requests/"+second.ID, app).Decode(t, &j)
		if j.Status != "approved" || j.ReviewedBy == nil || *j.ReviewedBy != mod.ID || j.ReviewEventID == nil ||
			*j.ReviewEventID != rec.EnvelopeHash() || j.ReviewedAt == nil || *j.ReviewedAt != rec.AcceptedAt {
			t.Fatalf("after approval: %+v", j)
		}
		wantError(t, f.review(mod, id, second.Request, "reject", ""), 409, adp.CodeJoinRequestNotPending)
		// Members cannot request again.
		wantError(t, f.joinRequest(app, id, obj{"role": "speaker"}), 403, identity.CodePermissionDenied)
	})
	t.Run("an applicant already a member cannot be approved", func(t *testing.T) {
		j := f.submitRequest(app3, id, adp.RoleObserver)
		f.must(creator, id, adp.TypeRoomUpdate, obj{"policy": obj{"invites": obj{app3.ID: "observer", mod.ID: "moderator", sp.ID: "speaker"}}})
		f.join(app3, id, adp.RoleObserver)
		wantError(t, f.review(mod, id, j.Request, "approve", adp.RoleObserver), 403, identity.CodePermissionDenied)
		wantStatus(t, f.review(mod, id, j.Request, "reject", ""), 200)
	})
	t.Run("a banned agent's request is held, and approval lifts the ban", func(t *testing.T) {
		f.must(mod, id, adp.TypeMemberRemove, obj{"member": banned.ID, "ban": true})
		j := f.submitRequest(banned, id, adp.RoleObserver)
		if j.Status != "pending" {
			t.Fatalf("banned applicant's request is %q", j.Status)
		}
		wantStatus(t, f.review(mod, id, j.Request, "approve", adp.RoleObserver), 200)
		f.must(banned, id, adp.TypeRoomLeave, obj{})
		// The ban is gone: a plain join now fails only for want of an invitation.
		wantError(t, f.send(banned, id, adp.TypeRoomJoin, obj{"role": "observer"}), 403, adp.CodeApprovalRequired)
	})
	t.Run("read permissions", func(t *testing.T) {
		j := f.submitRequest(outsider, id, adp.RoleObserver)
		wantStatus(t, f.h.Get(t, "/v1/rooms/"+id+"/join-requests/"+j.ID, outsider), 200)
		wantStatus(t, f.h.Get(t, "/v1/rooms/"+id+"/join-requests/"+j.ID, mod), 200)
		wantError(t, f.h.Get(t, "/v1/rooms/"+id+"/join-requests/"+j.ID, sp), 404, adp.CodeJoinRequestNotFound)
		wantError(t, f.h.Get(t, "/v1/rooms/"+id+"/join-requests/"+j.ID, nil), 401, identity.CodeInvalidToken)
		wantError(t, f.h.Get(t, "/v1/rooms/"+id+"/join-requests", sp), 403, identity.CodePermissionDenied)
		wantError(t, f.h.Get(t, "/v1/rooms/"+id+"/join-requests", nil), 401, identity.CodeInvalidToken)
		r := f.h.Get(t, "/v1/rooms/"+id+"/join-requests?status=pending", creator)
		wantStatus(t, r, 200)
		wantShape(t, "joinRequestListResponse", r.Body)
		var list struct{ Result []joinRequestResource }
		r.Decode(t, &list)
		if len(list.Result) != 1 || list.Result[0].ID != j.ID {
			t.Fatalf("pending list %s", r.Body)
		}
		all := f.h.Get(t, "/v1/rooms/"+id+"/join-requests?limit=2", creator)
		var page struct {
			Result []joinRequestResource
			Next   string `json:"next_cursor"`
		}
		all.Decode(t, &page)
		if len(page.Result) != 2 || page.Next == "" {
			t.Fatalf("first page %s", all.Body)
		}
		rest := f.h.Get(t, "/v1/rooms/"+id+"/join-requests?limit=100&cursor="+page.Next, creator)
		var tail struct{ Result []joinRequestResource }
		rest.Decode(t, &tail)
		if len(page.Result)+len(tail.Result) != 5 { // app ×2, app3, banned, outsider
			t.Fatalf("%d + %d join requests", len(page.Result), len(tail.Result))
		}
	})
	t.Run("expiry", func(t *testing.T) {
		j := f.submitRequest(app2, id, adp.RoleObserver)
		f.clock.Advance(24*time.Hour + time.Second)
		var got joinRequestResource
		f.h.Get(t, "/v1/rooms/"+id+"/join-requests/"+j.ID, app2).Decode(t, &got)
		if got.Status != "expired" {
			t.Fatalf("after its lifetime the request is %q", got.Status)
		}
		wantError(t, f.review(mod, id, j.Request, "approve", adp.RoleObserver), 409, adp.CodeJoinRequestNotPending)
	})
	t.Run("expiry never passes the room's end_time", func(t *testing.T) {
		short := f.create(creator, obj{"visibility": "restricted", "start_time": f.clock.Now().UnixMilli() - 1000,
			"end_time": f.clock.Now().UnixMilli() + 3600_000})
		j := f.submitRequest(app3, short, adp.RoleSpeaker)
		if j.ExpiresAt != f.clock.Now().UnixMilli()+3600_000 {
			t.Fatalf("expires_at %d, room ends %d", j.ExpiresAt, f.clock.Now().UnixMilli()+3600_000)
		}
	})
}
