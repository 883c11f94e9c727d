package adp

import (
	"testing"
	"time"

	"apconnect/host/identity"
)

// joinRequest signs a room.join.request of name for the fixture room and
// registers it with the fixture's host state as pending.
func (f *fixture) joinRequest(name string, payload obj) *identity.Envelope {
	f.t.Helper()
	env := f.envelope(name, identity.Event{Type: TypeJoinRequest, Payload: jsonValue(f.t, payload), Fields: Fields{RoomID: testRoom}.Map()})
	f.pending[env.Hash] = JoinRequestState{Status: JoinPending, ExpiresAt: f.room.JoinRequestExpiry(f.rules.Limits, f.now)}
	return env
}

func review(req *identity.Envelope, decision string, role string) obj {
	p := obj{"request": req.Value(), "decision": decision}
	if role != "" {
		p["role"] = role
	}
	return p
}

func TestJoinRequest10(t *testing.T) {
	restricted := obj{"visibility": "restricted"}
	cases := []struct {
		name  string
		extra obj
		run   func(f *fixture) error
		want  string
	}{
		{"accepted", restricted, func(f *fixture) error {
			return f.room.CheckJoinRequest(f.rules, f.joinRequest("bob", obj{"role": "speaker", "reason": "expertise"}), f.now)
		}, ""},
		{"ended", restricted, func(f *fixture) error {
			f.at(tEnd)
			return f.room.CheckJoinRequest(f.rules, f.joinRequest("bob", obj{"role": "speaker"}), f.now)
		}, CodeRoomNotActive},
		{"already an active member", restricted, func(f *fixture) error {
			return f.room.CheckJoinRequest(f.rules, f.joinRequest("alice", obj{"role": "moderator"}), f.now)
		}, CodePermissionDenied},
		{"the creator asking", restricted, func(f *fixture) error {
			return f.room.CheckJoinRequest(f.rules, f.joinRequest("creator", obj{"role": "speaker"}), f.now)
		}, CodePermissionDenied},
		{"banned agents may ask", restricted, func(f *fixture) error {
			f.must("mod", TypeMemberRemove, obj{"member": agent("bob"), "ban": true})
			return f.room.CheckJoinRequest(f.rules, f.joinRequest("bob", obj{"role": "speaker"}), f.now)
		}, ""},
		{"request with a base", restricted, func(f *fixture) error {
			env := f.joinRequest("bob", obj{"role": "speaker"})
			env.Event.Fields[FieldBaseSeq] = int64(1)
			return f.room.Check(f.rules, env, f.options())
		}, CodeInvalidEvent},
		{"request submitted as a room write", restricted, func(f *fixture) error {
			return f.room.Check(f.rules, f.joinRequest("bob", obj{"role": "speaker"}), f.options())
		}, CodeInvalidEvent},
		{"unknown payload member", restricted, func(f *fixture) error {
			return f.room.CheckJoinRequest(f.rules, f.joinRequest("bob", obj{"role": "speaker", "note": "x"}), f.now)
		}, CodeInvalidEvent},

		// Reviews.
		{"approve", restricted, func(f *fixture) error {
			req := f.joinRequest("bob", obj{"role": "speaker", "perspective": "dist-sys"})
			return f.submit(f.event("mod", TypeJoinReview, review(req, "approve", "observer")))
		}, ""},
		{"review by a speaker", restricted, func(f *fixture) error {
			req := f.joinRequest("bob", obj{"role": "speaker"})
			return f.submit(f.event("alice", TypeJoinReview, review(req, "approve", "speaker")))
		}, CodePermissionDenied},
		{"tampered request", restricted, func(f *fixture) error {
			req := f.joinRequest("bob", obj{"role": "speaker"})
			v := req.Value()
			v["event"].(map[string]any)["payload"] = obj{"role": "moderator"}
			p := obj{"request": v, "decision": "approve", "role": "moderator"}
			return f.submit(f.event("mod", TypeJoinReview, p))
		}, CodeInvalidEventHash},
		{"forged signature", restricted, func(f *fixture) error {
			req := f.joinRequest("bob", obj{"role": "speaker"})
			other := f.joinRequest("carol", obj{"role": "speaker"})
			req.Signature = other.Signature
			return f.submit(f.event("mod", TypeJoinReview, review(req, "approve", "speaker")))
		}, CodeInvalidSignature},
		{"request for another room", restricted, func(f *fixture) error {
			req := f.envelope("bob", identity.Event{Type: TypeJoinRequest, Payload: jsonValue(f.t, obj{"role": "speaker"}), Fields: Fields{RoomID: "elsewhere"}.Map()})
			f.pending[req.Hash] = JoinRequestState{Status: JoinPending}
			return f.submit(f.event("mod", TypeJoinReview, review(req, "approve", "speaker")))
		}, CodeInvalidEvent},
		{"embedded event is not a join request", restricted, func(f *fixture) error {
			msg := f.event("alice", TypeMessageCreate, obj{"content_type": "text/plain", "content": "x"})
			return f.submit(f.event("mod", TypeJoinReview, obj{"request": msg.Value(), "decision": "reject"}))
		}, CodeInvalidEvent},
		{"unknown request", restricted, func(f *fixture) error {
			req := f.joinRequest("bob", obj{"role": "speaker"})
			delete(f.pending, req.Hash)
			return f.submit(f.event("mod", TypeJoinReview, review(req, "approve", "speaker")))
		}, CodeJoinRequestNotFound},
		{"superseded request", restricted, func(f *fixture) error {
			req := f.joinRequest("bob", obj{"role": "speaker"})
			f.pending[req.Hash] = JoinRequestState{Status: JoinExpired}
			return f.submit(f.event("mod", TypeJoinReview, review(req, "approve", "speaker")))
		}, CodeJoinRequestNotPending},
		{"expired by time", restricted, func(f *fixture) error {
			f.rules.Limits.JoinRequestLifetime = time.Minute
			req := f.joinRequest("bob", obj{"role": "speaker"})
			f.at(f.pending[req.Hash].ExpiresAt)
			return f.submit(f.event("mod", TypeJoinReview, review(req, "approve", "speaker")))
		}, CodeJoinRequestNotPending},
		{"reviewed twice", restricted, func(f *fixture) error {
			req := f.joinRequest("bob", obj{"role": "speaker"})
			f.must("mod", TypeJoinReview, review(req, "reject", ""))
			f.pending[req.Hash] = JoinRequestState{Status: JoinPending} // a careless host
			return f.submit(f.event("creator", TypeJoinReview, review(req, "approve", "speaker")))
		}, CodeJoinRequestNotPending},
		{"approve without a role", restricted, func(f *fixture) error {
			req := f.joinRequest("bob", obj{"role": "speaker"})
			return f.submit(f.event("mod", TypeJoinReview, review(req, "approve", "")))
		}, CodeInvalidEvent},
		{"approve past max_speakers", obj{"visibility": "restricted", "policy": obj{"max_speakers": 3, "invites": obj{agent("mod"): "moderator", agent("alice"): "speaker", agent("olga"): "observer"}}}, func(f *fixture) error {
			req := f.joinRequest("bob", obj{"role": "speaker"})
			return f.submit(f.event("mod", TypeJoinReview, review(req, "approve", "speaker")))
		}, CodeMaxSpeakersExceeded},
		{"approve an active member", restricted, func(f *fixture) error {
			req := f.joinRequest("bob", obj{"role": "speaker"})
			f.pending[req.Hash] = JoinRequestState{Status: JoinPending}
			f.must("vip", TypeRoomJoin, obj{"role": "speaker"})
			req2 := f.joinRequest("vip", obj{"role": "moderator"})
			return f.submit(f.event("mod", TypeJoinReview, review(req2, "approve", "moderator")))
		}, CodePermissionDenied},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := activeRoom(t, tc.extra)
			wantCode(t, tc.run(f), tc.want)
		})
	}

	t.Run("cancelled", func(t *testing.T) {
		f := newFixture(t, restricted)
		wantCode(t, f.room.CheckJoinRequest(f.rules, f.joinRequest("bob", obj{"role": "speaker"}), f.now), "")
		f.must("creator", TypeRoomCancel, obj{})
		wantCode(t, f.room.CheckJoinRequest(f.rules, f.joinRequest("bob", obj{"role": "speaker"}), f.now), CodeRoomNotActive)
	})

	t.Run("approval lifts a ban and is the membership event", func(t *testing.T) {
		f := activeRoom(t, restricted)
		f.must("mod", TypeMemberRemove, obj{"member": agent("bob"), "ban": true})
		req := f.joinRequest("bob", obj{"role": "speaker", "perspective": "dist-sys"})
		head := f.room.Head
		rec := f.must("mod", TypeJoinReview, review(req, "approve", "observer"))
		m, ok := f.room.Member(agent("bob"))
		if !ok || !m.Active || m.Role != RoleObserver || m.Perspective != "dist-sys" || m.JoinedSeq != rec.Seq {
			t.Fatalf("member %+v", m)
		}
		if f.room.IsBanned(agent("bob")) {
			t.Fatal("ban not lifted")
		}
		if f.room.Head != head {
			t.Fatal("a review moved the head")
		}
		if f.room.ReviewedRequests[req.Hash] != rec.Seq {
			t.Fatal("review not remembered")
		}
	})

	t.Run("a rejection changes no membership", func(t *testing.T) {
		f := activeRoom(t, restricted)
		req := f.joinRequest("bob", obj{"role": "speaker"})
		f.must("mod", TypeJoinReview, review(req, "reject", ""))
		if _, ok := f.room.Member(agent("bob")); ok {
			t.Fatal("rejected applicant became a member")
		}
	})

	t.Run("expiry does not pass the end time", func(t *testing.T) {
		f := activeRoom(t, restricted)
		if got := f.room.JoinRequestExpiry(DefaultLimits(), tEnd-1000); got != tEnd {
			t.Fatalf("expiry %d", got)
		}
		if got := f.room.JoinRequestExpiry(DefaultLimits(), tStart); got != tStart+24*3600_000 && got != tEnd {
			t.Fatalf("expiry %d", got)
		}
	})
}
