package adp

import (
	"strings"
	"testing"

	"apconnect/host/identity"
)

// stdPolicy is the fixture policy: "mod" invited as moderator, "vip" and
// "alice" as speakers, "olga" as observer, speakers and observers open.
func stdPolicy() obj {
	return obj{"invites": obj{
		agent("mod"): "moderator", agent("vip"): "speaker",
		agent("alice"): "speaker", agent("olga"): "observer",
	}, "open_roles": arr{"speaker", "observer"}}
}

// activeRoom is a public, active room with creator, mod (moderator), alice
// (speaker) and olga (observer).
func activeRoom(t testing.TB, extra obj) *fixture {
	t.Helper()
	if extra == nil {
		extra = obj{}
	}
	pol, ok := extra["policy"].(obj)
	if !ok {
		pol = stdPolicy()
		extra["policy"] = pol
	}
	if _, ok := pol["invites"]; !ok {
		pol["invites"] = obj{agent("mod"): "moderator"}
	}
	if inv := pol["invites"].(obj); inv[agent("alice")] == nil {
		inv[agent("alice")] = "speaker"
	}
	if extra["visibility"] == "private" {
		delete(pol, "open_roles")
	}
	f := newFixture(t, extra)
	f.at(tStart + 1000)
	f.must("mod", TypeRoomJoin, obj{"role": "moderator"})
	f.must("alice", TypeRoomJoin, obj{"role": "speaker", "perspective": "skeptic"})
	if f.room.CanJoinDirectly(agent("olga"), RoleObserver) {
		f.must("olga", TypeRoomJoin, obj{"role": "observer"})
	}
	return f
}

type ruleCase struct {
	name  string
	extra obj // room.create payload overrides; nil for the default
	run   func(f *fixture) error
	want  string
}

func runRuleCases(t *testing.T, cases []ruleCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := activeRoom(t, tc.extra)
			err := tc.run(f)
			wantCode(t, err, tc.want)
		})
	}
}

func TestFreshness51(t *testing.T) {
	msg := func(text string) obj { return obj{"content_type": "text/plain", "content": text} }
	turnsRoom := obj{"types": arr{obj{"use": "adp:moderation/1.0"}}}
	runRuleCases(t, []ruleCase{
		{"messages on the same base do not conflict", nil, func(f *fixture) error {
			base := f.room.Head
			f.must("alice", TypeMessageCreate, msg("one"))
			return f.submit(f.eventAt("mod", TypeMessageCreate, msg("two"), base))
		}, ""},
		{"a message based on a later message", nil, func(f *fixture) error {
			one := f.must("alice", TypeMessageCreate, msg("one"))
			return f.submit(f.eventAt("mod", TypeMessageCreate, msg("two"), one.Link()))
		}, ""},
		{"a message based on a signal record after the head", nil, func(f *fixture) error {
			return f.submit(f.eventAt("alice", TypeMessageCreate, msg("x"), f.room.Last.Link()))
		}, ""},
		{"a message behind a contract write", nil, func(f *fixture) error {
			old := f.room.Head
			f.must("creator", TypeRoomUpdate, obj{"guidance": "short"})
			return f.submit(f.eventAt("alice", TypeMessageCreate, msg("x"), old))
		}, CodeRoomHeadMismatch},
		{"a message at the head seq with another hash", nil, func(f *fixture) error {
			base := f.room.Head
			base.Hash = f.records[1].Hash
			return f.submit(f.eventAt("alice", TypeMessageCreate, msg("x"), base))
		}, CodeBaseRecordMismatch},
		{"stale and wrongly anchored is base_record_mismatch", nil, func(f *fixture) error {
			f.must("creator", TypeRoomUpdate, obj{"guidance": "short"})
			return f.submit(f.eventAt("alice", TypeMessageCreate, msg("x"), Link{Seq: 2, Hash: f.records[0].Hash}))
		}, CodeBaseRecordMismatch},
		{"control behind the head", turnsRoom, func(f *fixture) error {
			old := f.room.Head
			f.must("creator", "turn.update", obj{"turn_id": 1, "speaker": agent("alice")})
			return f.submit(f.eventAt("creator", "turn.update", obj{"turn_id": 2, "speaker": agent("alice")}, old))
		}, CodeRoomHeadMismatch},
		{"control after messages at the head", turnsRoom, func(f *fixture) error {
			base := f.room.Head
			f.must("alice", TypeMessageCreate, msg("one"))
			return f.submit(f.eventAt("creator", "turn.update", obj{"turn_id": 1, "speaker": agent("alice")}, base))
		}, ""},
		{"contract anchored past the latest record", nil, func(f *fixture) error {
			base := Link{Seq: f.room.Last.Seq + 1, Hash: f.room.Last.Hash}
			return f.submit(f.eventAt("creator", TypeRoomUpdate, obj{"topic": "x"}, base))
		}, CodeBaseRecordMismatch},
		{"contract anchored on a wrong hash", nil, func(f *fixture) error {
			base := Link{Seq: 2, Hash: f.records[0].Hash}
			return f.submit(f.eventAt("creator", TypeRoomUpdate, obj{"topic": "x"}, base))
		}, CodeBaseRecordMismatch},
		{"signal anchored on a wrong hash", nil, func(f *fixture) error {
			base := Link{Seq: 3, Hash: f.records[0].Hash}
			return f.submit(f.eventAt("bob", TypeRoomJoin, obj{"role": "speaker"}, base))
		}, CodeBaseRecordMismatch},
		{"contract anchored on an old record is accepted", nil, func(f *fixture) error {
			f.must("alice", TypeMessageCreate, msg("one"))
			return f.submit(f.eventAt("creator", TypeRoomUpdate, obj{"topic": "New"}, f.records[1].Link()))
		}, ""},
		{"signal anchored on an old record is accepted", nil, func(f *fixture) error {
			return f.submit(f.eventAt("bob", TypeRoomJoin, obj{"role": "speaker"}, f.records[0].Link()))
		}, ""},
	})

	t.Run("mismatch data", func(t *testing.T) {
		f := activeRoom(t, nil)
		old := f.room.Head
		f.must("creator", TypeRoomUpdate, obj{"guidance": "short"})
		err := f.submit(f.eventAt("alice", TypeMessageCreate, obj{"content_type": "text/plain", "content": "two"}, old))
		e := AsError(err)
		want := map[string]any{
			"base_seq": old.Seq, "base_hash": old.Hash,
			"current_seq": f.room.Head.Seq, "current_hash": f.room.Head.Hash,
			"events_url": testHost + "/v1/rooms/" + testRoom + "/events?after_seq=" + itoa(int(old.Seq)),
		}
		if len(e.Data) != len(want) {
			t.Fatalf("data %v", e.Data)
		}
		for k, v := range want {
			if e.Data[k] != v {
				t.Errorf("data[%s] = %v, want %v", k, e.Data[k], v)
			}
		}
	})

	t.Run("heads move by class", func(t *testing.T) {
		f := activeRoom(t, obj{"types": arr{obj{"use": "adp:reactions/1.0"}}})
		head := f.room.Head
		if head.Seq != 1 {
			t.Fatalf("joins moved the head to %d", head.Seq)
		}
		msg := f.must("alice", TypeMessageCreate, obj{"content_type": "text/plain", "content": "hi"})
		if f.room.Head != head {
			t.Fatal("a message moved the head")
		}
		f.must("olga", "reaction.create", obj{"event_id": msg.EnvelopeHash(), "reaction": "agree"})
		if f.room.Head != head || f.room.Last.Seq != msg.Seq+1 {
			t.Fatal("a signal moved the head")
		}
		upd := f.must("creator", TypeRoomUpdate, obj{"guidance": "be brief"})
		if f.room.Head != upd.Link() {
			t.Fatal("a contract write did not become the head")
		}
	})

	t.Run("anchor lookup", func(t *testing.T) {
		f := activeRoom(t, nil)
		env := f.eventAt("bob", TypeRoomJoin, obj{"role": "speaker"}, f.records[1].Link())
		opt := f.options()
		opt.Records = nil
		wantCode(t, f.room.Check(f.rules, env, opt), CodeBaseRecordMismatch)
		opt.TrustUnknownAnchors = true
		wantCode(t, f.room.Check(f.rules, env, opt), "")
		// Known anchors (latest, head) need no lookup.
		opt.TrustUnknownAnchors = false
		wantCode(t, f.room.Check(f.rules, f.eventAt("bob", TypeRoomJoin, obj{"role": "speaker"}, f.room.Last.Link()), opt), "")
	})
}

func TestRoomCreate83(t *testing.T) {
	otherKey := agent("x")
	badID := otherKey[:len(otherKey)-1] + flipLast(otherKey)
	cases := []struct {
		name  string
		extra obj
		want  string
	}{
		{"accepted", obj{}, ""},
		{"host mismatch", obj{"host": "https://other.example"}, CodeHostMismatch},
		{"host that is not a serialized origin", obj{"host": "https://HUB.example:443"}, CodeInvalidEvent},
		{"host with a trailing slash", obj{"host": testHost + "/"}, CodeInvalidEvent},
		{"blank topic", obj{"topic": "  \t "}, CodeInvalidEvent},
		{"topic of a byte order mark", obj{"topic": "\ufeff"}, CodeInvalidEvent},
		{"topic of a zero-width space is not blank", obj{"topic": "\u200b"}, ""},
		{"missing visibility", obj{"visibility": nil}, CodeInvalidEvent},
		{"unknown payload field", obj{"moderators": arr{}}, CodeInvalidEvent},
		{"start equals end", obj{"end_time": tStart}, CodeInvalidEvent},
		{"start after end", obj{"start_time": tEnd + 1}, CodeInvalidEvent},
		{"too short", obj{"end_time": tStart + 60_000}, CodeInvalidEvent},
		{"too long", obj{"end_time": tStart + 8*24*3600_000}, CodeInvalidEvent},
		{"max_speakers 0", obj{"policy": obj{"max_speakers": 0}}, CodeInvalidEvent},
		{"malformed invited id", obj{"policy": obj{"invites": obj{badID: "speaker"}}}, CodeInvalidEvent},
		{"invite value not a role", obj{"policy": obj{"invites": obj{otherKey: "owner"}}}, CodeInvalidEvent},
		{"open_roles moderator", obj{"policy": obj{"open_roles": arr{"moderator"}}}, CodeInvalidEvent},
		{"open_roles unknown", obj{"policy": obj{"open_roles": arr{"guest"}}}, CodeInvalidEvent},
		{"open_roles duplicate", obj{"policy": obj{"open_roles": arr{"speaker", "speaker"}}}, CodeInvalidEvent},
		{"observer_allowed is no policy member", obj{"policy": obj{"observer_allowed": true}}, CodeInvalidEvent},
		{"open roles in a private room", obj{"visibility": "private", "policy": obj{"open_roles": arr{"observer"}}}, CodeInvalidEvent},
		{"no open roles in a private room", obj{"visibility": "private", "policy": obj{"open_roles": arr{}}}, ""},
		{"type definition with a version", obj{"types": arr{obj{"type": "x.note", "kind": "message", "title": "N", "version": "1.0", "schema": obj{}}}}, CodeInvalidEvent},
		{"type definition with a blank title", obj{"types": arr{obj{"type": "x.note", "kind": "message", "title": " ", "schema": obj{}}}}, CodeInvalidEvent},
		{"custom type under message.", obj{"types": arr{obj{"type": "message.custom", "kind": "message", "title": "N", "schema": obj{}}}}, CodeInvalidEvent},
		{"invalid type declaration", obj{"types": arr{obj{"type": "x.note", "kind": "message", "schema": obj{}}}}, CodeInvalidEvent},
		{"custom type with a reserved prefix", obj{"types": arr{obj{"type": "room.note", "kind": "message", "title": "N", "schema": obj{}}}}, CodeInvalidEvent},
		{"custom type named like a built-in", obj{"types": arr{obj{"type": "message.create", "kind": "message", "title": "N", "schema": obj{}}}}, CodeInvalidEvent},
		{"duplicate inline type", obj{"types": arr{
			obj{"type": "x.note", "kind": "message", "title": "N", "schema": obj{}},
			obj{"type": "x.note", "kind": "message", "title": "N", "schema": obj{}},
		}}, CodeTypeConflict},
		{"inline type duplicating a pack type", obj{"types": arr{
			obj{"use": "adp:reactions/1.0"},
			obj{"type": "reaction.create", "kind": "signal", "title": "R", "schema": obj{}},
		}}, CodeTypeConflict},
		{"unregistered pack", obj{"types": arr{obj{"use": "adp:polls/1.0"}}}, CodePackUnavailable},
		{"external pack without a resolver", obj{"types": arr{obj{"pack": "https://packs.example/p.json", "digest": strings.Repeat("A", 43)}}}, CodePackUnavailable},
		{"external pack digest in the 0f87fee form", obj{"types": arr{obj{"pack": "https://packs.example/p.json", "digest": "sha256:" + strings.Repeat("A", 43)}}}, CodeInvalidEvent},
		{"pack import with both forms", obj{"types": arr{obj{"use": "adp:reactions/1.0", "pack": "https://packs.example/p.json", "digest": strings.Repeat("A", 43)}}}, CodeInvalidEvent},
		{"schema outside the profile", obj{"types": arr{obj{"type": "x.note", "kind": "message", "title": "N", "schema": obj{"$ref": "https://evil.example/s.json"}}}}, CodeInvalidTypeSchema},
		{"subset names a type the pack lacks", obj{"types": arr{obj{"use": "adp:reactions/1.0", "types": arr{"poll.vote"}}}}, CodeTypeConflict},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := sign(t, "creator", identity.Event{Type: TypeRoomCreate, CreatedAt: t0, Payload: jsonValue(t, createPayload(tc.extra))})
			wantCode(t, CheckCreate(newRules(), env), tc.want)
		})
	}

	t.Run("top-level room fields", func(t *testing.T) {
		env := sign(t, "creator", identity.Event{Type: TypeRoomCreate, CreatedAt: t0, Payload: jsonValue(t, createPayload(nil))})
		env.Event.Fields = map[string]any{FieldRoomID: testRoom} // added after signing
		wantCode(t, CheckCreate(newRules(), env), CodeInvalidEvent)
	})

	t.Run("integers written with an exponent", func(t *testing.T) {
		p, err := identity.ParseStrict([]byte(`{"host":"https://hub.example","topic":"T","visibility":"public","start_time":1.80000006e12,"end_time":1800007260000}`))
		if err != nil {
			t.Fatal(err)
		}
		env := sign(t, "creator", identity.Event{Type: TypeRoomCreate, CreatedAt: t0, Payload: p})
		wantCode(t, CheckCreate(newRules(), env), "")
		rec, _ := NewRecord(testRoom, Link{}, t0, env)
		room, err := NewRoom(newRules(), rec)
		if err != nil || room.StartTime != tStart {
			t.Fatalf("start %d: %v", room.StartTime, err)
		}
	})

	t.Run("too many types", func(t *testing.T) {
		rules := newRules()
		rules.Limits.MaxTypes = 2
		env := sign(t, "creator", identity.Event{Type: TypeRoomCreate, CreatedAt: t0, Payload: jsonValue(t, createPayload(obj{"types": arr{obj{"use": "adp:deliberation/1.0"}}}))})
		wantCode(t, CheckCreate(rules, env), CodeRateLimited)
	})

	t.Run("creator becomes an active moderator", func(t *testing.T) {
		f := newFixture(t, nil)
		m, ok := f.room.Member(agent("creator"))
		if !ok || !m.Active || m.Role != RoleModerator || m.JoinedSeq != 1 {
			t.Fatalf("creator member %+v", m)
		}
		if f.room.StatusAt(t0) != RoomScheduled || f.room.StatusAt(tStart) != RoomActive || f.room.StatusAt(tEnd) != RoomEnded {
			t.Fatal("lifecycle from times")
		}
	})
}

// flipLast returns a different base64url character with the same high bits,
// making a non-canonical encoding of the same key.
func flipLast(s string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	i := strings.IndexByte(alphabet, s[len(s)-1])
	return string(alphabet[i^1])
}

func TestRoomUpdate84(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"accepted", nil, func(f *fixture) error {
			return f.submit(f.event("mod", TypeRoomUpdate, obj{"topic": "New topic", "end_time": tEnd + 60_000}))
		}, ""},
		{"ended by time", nil, func(f *fixture) error {
			f.at(tEnd)
			return f.submit(f.event("creator", TypeRoomUpdate, obj{"topic": "late"}))
		}, CodeRoomNotActive},
		{"closed", nil, func(f *fixture) error {
			f.must("creator", TypeRoomClose, obj{"reason": "done"})
			return f.submit(f.event("creator", TypeRoomUpdate, obj{"topic": "late"}))
		}, CodeRoomNotActive},
		{"not a manager", nil, func(f *fixture) error {
			return f.submit(f.event("alice", TypeRoomUpdate, obj{"topic": "mine"}))
		}, CodePermissionDenied},
		{"empty payload", nil, func(f *fixture) error {
			return f.submit(f.event("creator", TypeRoomUpdate, obj{}))
		}, CodeInvalidEvent},
		{"field outside the updatable set", nil, func(f *fixture) error {
			return f.submit(f.event("creator", TypeRoomUpdate, obj{"visibility": "private"}))
		}, CodeInvalidEvent},
		{"blank topic", nil, func(f *fixture) error {
			return f.submit(f.event("creator", TypeRoomUpdate, obj{"topic": "   "}))
		}, CodeInvalidEvent},
		{"topic of a byte order mark", nil, func(f *fixture) error {
			return f.submit(f.event("creator", TypeRoomUpdate, obj{"topic": "\ufeff"}))
		}, CodeInvalidEvent},
		{"observer_allowed in a policy", nil, func(f *fixture) error {
			return f.submit(f.event("creator", TypeRoomUpdate, obj{"policy": obj{"observer_allowed": false}}))
		}, CodeInvalidEvent},
		{"open roles for a private room", obj{"visibility": "private"}, func(f *fixture) error {
			return f.submit(f.event("creator", TypeRoomUpdate, obj{"policy": obj{"open_roles": arr{"speaker"}}}))
		}, CodeInvalidEvent},
		{"start_time while active", nil, func(f *fixture) error {
			return f.submit(f.event("creator", TypeRoomUpdate, obj{"start_time": tStart + 5000}))
		}, CodeInvalidEvent},
		{"effective start after end", obj{}, func(f *fixture) error {
			return f.submit(f.event("creator", TypeRoomUpdate, obj{"end_time": tStart - 1}))
		}, CodeInvalidEvent},
		{"effective duration too long", nil, func(f *fixture) error {
			return f.submit(f.event("creator", TypeRoomUpdate, obj{"end_time": tStart + 8*24*3600_000}))
		}, CodeInvalidEvent},
		{"active room shortened to the past", nil, func(f *fixture) error {
			f.at(tStart + 20*60_000)
			return f.submit(f.event("creator", TypeRoomUpdate, obj{"end_time": tStart + 15*60_000}))
		}, CodeInvalidEvent},
		{"policy violates 8.3", nil, func(f *fixture) error {
			return f.submit(f.event("creator", TypeRoomUpdate, obj{"policy": obj{"open_roles": arr{"moderator"}}}))
		}, CodeInvalidEvent},
	})

	t.Run("cancelled", func(t *testing.T) {
		f := newFixture(t, nil)
		f.must("creator", TypeRoomCancel, obj{})
		wantCode(t, f.submit(f.event("creator", TypeRoomUpdate, obj{"topic": "x"})), CodeRoomNotActive)
	})

	t.Run("scheduled room starts early and clears fields", func(t *testing.T) {
		f := newFixture(t, obj{"guidance": "old", "tags": arr{"a"}, "policy": obj{"max_speakers": 3}})
		f.at(t0 + 1000)
		f.must("creator", TypeRoomUpdate, obj{"start_time": t0 + 500, "guidance": "", "tags": arr{}, "policy": obj{}})
		if st := f.room.StatusAt(f.now); st != RoomActive {
			t.Fatalf("status %s", st)
		}
		if f.room.Guidance != "" || f.room.Tags != nil || !f.room.Policy.IsZero() {
			t.Fatalf("fields not cleared: %q %v %+v", f.room.Guidance, f.room.Tags, f.room.Policy)
		}
	})
}

func TestCloseCancel(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"close by a speaker", nil, func(f *fixture) error { return f.submit(f.event("alice", TypeRoomClose, obj{})) }, CodePermissionDenied},
		{"cancel an active room", nil, func(f *fixture) error { return f.submit(f.event("creator", TypeRoomCancel, obj{})) }, CodeRoomNotActive},
		{"close with an unknown field", nil, func(f *fixture) error {
			return f.submit(f.event("creator", TypeRoomClose, obj{"why": "x"}))
		}, CodeInvalidEvent},
		{"writes after close", nil, func(f *fixture) error {
			f.must("mod", TypeRoomClose, obj{"reason": "done"})
			if f.room.StatusAt(f.now) != RoomEnded || f.room.Closed.By != agent("mod") {
				f.t.Fatal("close did not end the room")
			}
			return f.submit(f.event("alice", TypeMessageCreate, obj{"content_type": "text/plain", "content": "x"}))
		}, CodeRoomNotActive},
	})
	t.Run("close a scheduled room", func(t *testing.T) {
		f := newFixture(t, nil)
		wantCode(t, f.submit(f.event("creator", TypeRoomClose, obj{})), CodeRoomNotActive)
		f.must("creator", TypeRoomCancel, obj{"reason": "no quorum"})
		if f.room.StatusAt(tStart+1) != RoomCancelled {
			t.Fatal("not cancelled")
		}
		wantCode(t, f.submit(f.event("bob", TypeRoomJoin, obj{"role": "speaker"})), CodeRoomNotActive)
	})
}

func TestJoin92(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"open role in a public room", nil, func(f *fixture) error {
			return f.submit(f.event("bob", TypeRoomJoin, obj{"role": "speaker", "perspective": "p"}))
		}, ""},
		{"invited with exactly that role", nil, func(f *fixture) error {
			return f.submit(f.event("vip", TypeRoomJoin, obj{"role": "speaker"}))
		}, ""},
		{"ended", nil, func(f *fixture) error {
			f.at(tEnd + 1)
			return f.submit(f.event("bob", TypeRoomJoin, obj{"role": "speaker"}))
		}, CodeRoomNotActive},
		{"already an active member", nil, func(f *fixture) error {
			return f.submit(f.event("alice", TypeRoomJoin, obj{"role": "speaker"}))
		}, CodePermissionDenied},
		{"creator joining", nil, func(f *fixture) error {
			return f.submit(f.event("creator", TypeRoomJoin, obj{"role": "speaker"}))
		}, CodePermissionDenied},
		{"banned even when invited", nil, func(f *fixture) error {
			f.must("creator", TypeMemberRemove, obj{"member": agent("vip"), "ban": true})
			return f.submit(f.event("vip", TypeRoomJoin, obj{"role": "speaker"}))
		}, CodeMemberBanned},
		{"max_speakers exceeded", obj{"policy": obj{"max_speakers": 4, "open_roles": arr{"speaker"}}}, func(f *fixture) error {
			// creator, mod and alice speak; the fourth speaking seat goes to bob.
			f.must("bob", TypeRoomJoin, obj{"role": "speaker"})
			return f.submit(f.event("carol", TypeRoomJoin, obj{"role": "speaker"}))
		}, CodeMaxSpeakersExceeded},
		{"a public room's default admits observers", obj{"policy": obj{"invites": obj{agent("mod"): "moderator"}}}, func(f *fixture) error {
			return f.submit(f.event("bob", TypeRoomJoin, obj{"role": "observer"}))
		}, ""},
		{"a public room's default does not admit speakers", obj{"policy": obj{"invites": obj{agent("mod"): "moderator"}}}, func(f *fixture) error {
			return f.submit(f.event("bob", TypeRoomJoin, obj{"role": "speaker"}))
		}, CodeApprovalRequired},
		{"a restricted room's open roles admit directly", obj{"visibility": "restricted", "policy": obj{"open_roles": arr{"speaker"}, "invites": obj{agent("mod"): "moderator", agent("alice"): "speaker"}}}, func(f *fixture) error {
			return f.submit(f.event("bob", TypeRoomJoin, obj{"role": "speaker"}))
		}, ""},
		{"moderator is never an open role", nil, func(f *fixture) error {
			return f.submit(f.event("bob", TypeRoomJoin, obj{"role": "moderator"}))
		}, CodeApprovalRequired},
		{"invited with another role", nil, func(f *fixture) error {
			return f.submit(f.event("vip", TypeRoomJoin, obj{"role": "moderator"}))
		}, CodeApprovalRequired},
		{"restricted room without invitation or open roles", obj{"visibility": "restricted", "policy": obj{"invites": obj{agent("mod"): "moderator", agent("alice"): "speaker"}}}, func(f *fixture) error {
			return f.submit(f.event("bob", TypeRoomJoin, obj{"role": "observer"}))
		}, CodeApprovalRequired},
		{"private room invitee", obj{"visibility": "private"}, func(f *fixture) error {
			return f.submit(f.event("vip", TypeRoomJoin, obj{"role": "speaker"}))
		}, ""},
		{"role missing", nil, func(f *fixture) error {
			return f.submit(f.event("bob", TypeRoomJoin, obj{"perspective": "p"}))
		}, CodeInvalidEvent},
	})
	t.Run("explicitly empty open roles", func(t *testing.T) {
		f := newFixture(t, obj{"policy": obj{"open_roles": arr{}}})
		wantCode(t, f.submit(f.event("bob", TypeRoomJoin, obj{"role": "observer"})), CodeApprovalRequired)
	})
	t.Run("observer quota", func(t *testing.T) {
		f := activeRoom(t, nil)
		f.rules.Limits.MaxObservers = 1
		wantCode(t, f.submit(f.event("bob", TypeRoomJoin, obj{"role": "observer"})), CodeRateLimited)
	})
	t.Run("scheduled rooms accept joins", func(t *testing.T) {
		f := newFixture(t, nil)
		wantCode(t, f.submit(f.event("bob", TypeRoomJoin, obj{"role": "speaker"})), "")
	})
}

func TestLeave93(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"member leaves", nil, func(f *fixture) error {
			if err := f.submit(f.event("alice", TypeRoomLeave, obj{"reason": "done"})); err != nil {
				return err
			}
			m, _ := f.room.Member(agent("alice"))
			if m.Active || m.Departure != DepartureLeft || m.LeftSeq != f.room.Last.Seq {
				f.t.Fatalf("member after leave %+v", m)
			}
			// and may join again
			return f.submit(f.event("alice", TypeRoomJoin, obj{"role": "observer"}))
		}, ""},
		{"creator cannot leave", nil, func(f *fixture) error {
			return f.submit(f.event("creator", TypeRoomLeave, obj{}))
		}, CodePermissionDenied},
		{"non-member", nil, func(f *fixture) error {
			return f.submit(f.event("bob", TypeRoomLeave, obj{}))
		}, CodePermissionDenied},
	})
}

func TestRoleUpdate94(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"demote to observer", nil, func(f *fixture) error {
			if err := f.submit(f.event("mod", TypeRoleUpdate, obj{"member": agent("alice"), "role": "observer", "reason": "mute"})); err != nil {
				return err
			}
			return f.submit(f.event("alice", TypeMessageCreate, obj{"content_type": "text/plain", "content": "x"}))
		}, CodePermissionDenied},
		{"by a speaker", nil, func(f *fixture) error {
			return f.submit(f.event("alice", TypeRoleUpdate, obj{"member": agent("olga"), "role": "speaker"}))
		}, CodePermissionDenied},
		{"member not active", nil, func(f *fixture) error {
			return f.submit(f.event("creator", TypeRoleUpdate, obj{"member": agent("bob"), "role": "speaker"}))
		}, CodeNotFound},
		{"max_speakers", obj{"policy": obj{"max_speakers": 3, "invites": obj{agent("mod"): "moderator"}}}, func(f *fixture) error {
			return f.submit(f.event("creator", TypeRoleUpdate, obj{"member": agent("olga"), "role": "speaker"}))
		}, CodeMaxSpeakersExceeded},
		{"speaker to moderator does not add a speaking seat", obj{"policy": obj{"max_speakers": 3, "invites": obj{agent("mod"): "moderator"}}}, func(f *fixture) error {
			return f.submit(f.event("creator", TypeRoleUpdate, obj{"member": agent("alice"), "role": "moderator"}))
		}, ""},
		{"creator demoted keeps creator permission", nil, func(f *fixture) error {
			f.must("creator", TypeRoleUpdate, obj{"member": agent("creator"), "role": "observer"})
			return f.submit(f.event("creator", TypeMessageCreate, obj{"content_type": "text/plain", "content": "still here"}))
		}, ""},
	})
}

func TestRemove95(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"remove and ban", nil, func(f *fixture) error {
			if err := f.submit(f.event("mod", TypeMemberRemove, obj{"member": agent("alice"), "ban": true, "reason": "spam"})); err != nil {
				return err
			}
			m, _ := f.room.Member(agent("alice"))
			if m.Active || m.Departure != DepartureBanned || !f.room.IsBanned(agent("alice")) {
				f.t.Fatalf("after ban %+v", m)
			}
			return f.submit(f.event("alice", TypeRoomJoin, obj{"role": "speaker"}))
		}, CodeMemberBanned},
		{"member missing", nil, func(f *fixture) error {
			return f.submit(f.event("creator", TypeMemberRemove, obj{"ban": true}))
		}, CodeInvalidEvent},
		{"member malformed", nil, func(f *fixture) error {
			return f.submit(f.event("creator", TypeMemberRemove, obj{"member": "did:agent:nope"}))
		}, CodeInvalidEvent},
		{"creator cannot be removed", nil, func(f *fixture) error {
			return f.submit(f.event("mod", TypeMemberRemove, obj{"member": agent("creator"), "ban": true}))
		}, CodePermissionDenied},
		{"self removal", nil, func(f *fixture) error {
			return f.submit(f.event("mod", TypeMemberRemove, obj{"member": agent("mod")}))
		}, CodeInvalidRequest},
		{"non-member without ban", nil, func(f *fixture) error {
			return f.submit(f.event("mod", TypeMemberRemove, obj{"member": agent("bob")}))
		}, CodeNotFound},
		{"pre-emptive ban of a non-member", nil, func(f *fixture) error {
			if err := f.submit(f.event("mod", TypeMemberRemove, obj{"member": agent("bob"), "ban": true})); err != nil {
				return err
			}
			return f.submit(f.event("bob", TypeRoomJoin, obj{"role": "observer"}))
		}, CodeMemberBanned},
		{"by a speaker", nil, func(f *fixture) error {
			return f.submit(f.event("alice", TypeMemberRemove, obj{"member": agent("olga")}))
		}, CodePermissionDenied},
	})
}

func TestMessage11(t *testing.T) {
	big := strings.Repeat("x", 70<<10)
	runRuleCases(t, []ruleCase{
		{"accepted with references and mentions", nil, func(f *fixture) error {
			first := f.must("alice", TypeMessageCreate, obj{"content_type": "text/plain", "content": "one"})
			env := f.envelope("alice", identity.Event{
				Type:    TypeMessageCreate,
				Payload: jsonValue(f.t, obj{"content_type": "text/markdown", "content": "two", "references": arr{first.EnvelopeHash()}}), Fields: Fields{RoomID: testRoom, Base: &Link{Seq: f.room.Head.Seq, Hash: f.room.Head.Hash}, Mentions: []string{agent("mod")}}.Map()})
			return f.submit(env)
		}, ""},
		{"json content object", nil, func(f *fixture) error {
			return f.submit(f.event("alice", TypeMessageCreate, obj{"content_type": "application/vnd.x+json", "content": obj{"a": 1}}))
		}, ""},
		{"scheduled room", nil, func(f *fixture) error {
			f.at(t0 + 1)
			return f.submit(f.event("creator", TypeMessageCreate, obj{"content_type": "text/plain", "content": "early"}))
		}, CodeRoomNotActive},
		{"observer", nil, func(f *fixture) error {
			return f.submit(f.event("olga", TypeMessageCreate, obj{"content_type": "text/plain", "content": "x"}))
		}, CodePermissionDenied},
		{"non-member", nil, func(f *fixture) error {
			return f.submit(f.event("bob", TypeMessageCreate, obj{"content_type": "text/plain", "content": "x"}))
		}, CodePermissionDenied},
		{"empty content_type", nil, func(f *fixture) error {
			return f.submit(f.event("alice", TypeMessageCreate, obj{"content_type": "", "content": "x"}))
		}, CodeInvalidEvent},
		{"blank content_type", nil, func(f *fixture) error {
			return f.submit(f.event("alice", TypeMessageCreate, obj{"content_type": "  ", "content": "x"}))
		}, CodeInvalidEvent},
		{"content neither string nor object", nil, func(f *fixture) error {
			return f.submit(f.event("alice", TypeMessageCreate, obj{"content_type": "text/plain", "content": 5}))
		}, CodeInvalidEvent},
		{"object content whatever the media type (as 0.12.6)", nil, func(f *fixture) error {
			return f.submit(f.event("alice", TypeMessageCreate, obj{"content_type": "text/plain", "content": obj{"a": 1}}))
		}, ""},
		{"reference outside the room", nil, func(f *fixture) error {
			return f.submit(f.event("alice", TypeMessageCreate, obj{"content_type": "text/plain", "content": "x", "references": arr{strings.Repeat("A", 43)}}))
		}, CodeInvalidEvent},
		{"payload too large", nil, func(f *fixture) error {
			return f.submit(f.event("alice", TypeMessageCreate, obj{"content_type": "text/plain", "content": big}))
		}, CodePayloadTooLarge},
	})
}

func TestTypeDefine124(t *testing.T) {
	note := func(kind string, schema obj) obj {
		return obj{"type": "x.note", "kind": kind, "title": "Note", "schema": schema}
	}
	runRuleCases(t, []ruleCase{
		{"inline definition", nil, func(f *fixture) error {
			return f.submit(f.event("mod", TypeTypeDefine, note("message", obj{"type": "object"})))
		}, ""},
		{"by a speaker", nil, func(f *fixture) error {
			return f.submit(f.event("alice", TypeTypeDefine, note("message", obj{})))
		}, CodePermissionDenied},
		{"redefinition changes kind", nil, func(f *fixture) error {
			f.must("creator", TypeTypeDefine, note("message", obj{}))
			return f.submit(f.event("creator", TypeTypeDefine, note("signal", obj{})))
		}, CodeTypeConflict},
		{"pack import redefines with another kind", nil, func(f *fixture) error {
			f.must("creator", TypeTypeDefine, obj{"type": "poll.vote", "kind": "message", "title": "V", "schema": obj{}})
			return f.submit(f.event("creator", TypeTypeDefine, obj{"use": "adp:deliberation/1.0"}))
		}, CodeTypeConflict},
		{"subset names a foreign type", nil, func(f *fixture) error {
			return f.submit(f.event("creator", TypeTypeDefine, obj{"use": "adp:deliberation/1.0", "types": arr{"poll.vote", "turn.update"}}))
		}, CodeTypeConflict},
		{"override names a foreign type", nil, func(f *fixture) error {
			return f.submit(f.event("creator", TypeTypeDefine, obj{"use": "adp:deliberation/1.0", "overrides": obj{"turn.update": obj{"roles": arr{"speaker"}}}}))
		}, CodeTypeConflict},
		{"override changes kind", nil, func(f *fixture) error {
			return f.submit(f.event("creator", TypeTypeDefine, obj{"use": "adp:deliberation/1.0", "overrides": obj{"poll.vote": obj{"kind": "message"}}}))
		}, CodeInvalidEvent},
		{"schema outside the profile", nil, func(f *fixture) error {
			return f.submit(f.event("creator", TypeTypeDefine, note("message", obj{"properties": obj{"a": obj{"pattern": "\\d+"}}})))
		}, CodeInvalidTypeSchema},
		{"ended", nil, func(f *fixture) error {
			f.at(tEnd)
			return f.submit(f.event("creator", TypeTypeDefine, note("message", obj{})))
		}, CodeRoomNotActive},
		{"scheduled rooms accept type.define", nil, func(f *fixture) error {
			f.at(t0 + 5)
			return f.submit(f.event("creator", TypeTypeDefine, note("message", obj{})))
		}, ""},
		{"too many types", nil, func(f *fixture) error {
			f.rules.Limits.MaxTypes = 3
			return f.submit(f.event("creator", TypeTypeDefine, obj{"use": "adp:deliberation/1.0"}))
		}, CodeRateLimited},
	})

	t.Run("redefinition keeps kind and governs", func(t *testing.T) {
		f := activeRoom(t, nil)
		f.must("creator", TypeTypeDefine, note("message", obj{"type": "object"}))
		f.must("alice", "x.note", obj{"any": 1})
		f.must("creator", TypeTypeDefine, note("message", obj{"type": "object", "required": arr{"text"}}))
		wantCode(t, f.submit(f.event("alice", "x.note", obj{"any": 1})), CodePayloadSchemaViolation)
		wantCode(t, f.submit(f.event("alice", "x.note", obj{"text": "hi"})), "")
		if len(f.room.Types) != 1 {
			t.Fatalf("registry %v", f.room.Types)
		}
	})
}

func TestCustomEvents126(t *testing.T) {
	withPacks := obj{"types": arr{
		obj{"use": "adp:reactions/1.0"},
		obj{"use": "adp:deliberation/1.0", "overrides": obj{"poll.vote": obj{"roles": arr{"moderator", "speaker", "observer"}}}},
		obj{"use": "adp:moderation/1.0", "overrides": obj{"steer.create": obj{"status": "disabled"}}},
		obj{"type": "x.big", "kind": "message", "title": "Big", "schema": obj{}, "max_payload_hint": 200 << 10},
		obj{"type": "x.when", "kind": "signal", "title": "When", "schema": obj{"type": "object", "properties": obj{"at": obj{"type": "string", "format": "date-time"}, "uri": obj{"type": "string", "format": "uri"}}}},
	}}
	question := obj{"question": "Why?", "priority": 10}
	runRuleCases(t, []ruleCase{
		{"message kind by a speaker", withPacks, func(f *fixture) error {
			return f.submit(f.event("alice", "question.create", question))
		}, ""},
		{"undefined type", withPacks, func(f *fixture) error {
			return f.submit(f.event("alice", "artifact.create", obj{}))
		}, CodeTypeNotDefined},
		{"disabled type", withPacks, func(f *fixture) error {
			return f.submit(f.event("alice", "steer.create", obj{"instruction": "x"}))
		}, CodeTypeDisabled},
		{"message kind by an observer", withPacks, func(f *fixture) error {
			return f.submit(f.event("olga", "question.create", question))
		}, CodePermissionDenied},
		{"control kind by a speaker", withPacks, func(f *fixture) error {
			return f.submit(f.event("alice", "turn.update", obj{"turn_id": 1, "speaker": agent("alice")}))
		}, CodePermissionDenied},
		{"control kind by a moderator", withPacks, func(f *fixture) error {
			return f.submit(f.event("mod", "turn.update", obj{"turn_id": 1, "speaker": agent("alice")}))
		}, ""},
		{"roles override widens to observers", withPacks, func(f *fixture) error {
			poll := f.must("alice", "poll.create", obj{"poll_id": "p1", "question": "Q", "options": arr{obj{"id": "a", "label": "A"}, obj{"id": "b", "label": "B"}}})
			return f.submit(f.event("olga", "poll.vote", obj{"poll_event_id": poll.EnvelopeHash(), "option_ids": arr{"a"}}))
		}, ""},
		{"signal by a non-member", withPacks, func(f *fixture) error {
			return f.submit(f.event("bob", "reaction.create", obj{"event_id": f.records[0].EnvelopeHash(), "reaction": "agree"}))
		}, CodePermissionDenied},
		{"payload schema violation", withPacks, func(f *fixture) error {
			return f.submit(f.event("alice", "reaction.create", obj{"event_id": "short", "reaction": "", "score": 500, "x": 1}))
		}, CodePayloadSchemaViolation},
		{"scheduled room", withPacks, func(f *fixture) error {
			f.at(t0 + 1)
			return f.submit(f.event("creator", "reaction.create", obj{"event_id": f.records[0].EnvelopeHash(), "reaction": "agree"}))
		}, CodeRoomNotActive},
		{"format is an annotation", withPacks, func(f *fixture) error {
			return f.submit(f.event("olga", "x.when", obj{"at": "yesterday", "uri": "not a uri"}))
		}, ""},
		{"max_payload_hint raises the limit", withPacks, func(f *fixture) error {
			return f.submit(f.event("alice", "x.big", obj{"blob": strings.Repeat("b", 100<<10)}))
		}, ""},
		{"max_payload_hint within the ceiling", withPacks, func(f *fixture) error {
			return f.submit(f.event("alice", "x.big", obj{"blob": strings.Repeat("b", 210<<10)}))
		}, CodePayloadTooLarge},
	})

	t.Run("violations are listed, sorted", func(t *testing.T) {
		f := activeRoom(t, withPacks)
		err := f.submit(f.event("alice", "reaction.create", obj{"event_id": "short", "reaction": "", "score": 500, "x": 1}))
		got := AsError(err).FieldErrors()
		want := []FieldError{
			{Path: "", Keyword: "additionalProperties"},
			{Path: "/event_id", Keyword: "pattern"},
			{Path: "/reaction", Keyword: "minLength"},
			{Path: "/score", Keyword: "maximum"},
		}
		if len(got) != len(want) {
			t.Fatalf("errors %+v", got)
		}
		for i := range want {
			if got[i].Path != want[i].Path || got[i].Keyword != want[i].Keyword || got[i].Message == "" {
				t.Errorf("error %d = %+v, want %+v", i, got[i], want[i])
			}
		}
		if AsError(err).Pointer != "/event/payload" {
			t.Errorf("pointer %q", AsError(err).Pointer)
		}
	})
}
