package discourse_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	"apconnect/host/identity"
	"apconnect/host/proto/adp"
)

// rulesFx is a hub for the rejection-rule tests: the contract write quota
// is raised so a test may create and update many rooms (quotas have their
// own test).
func rulesFx(t *testing.T) *fx {
	return newFx(t, withLimits(func(l *hub.Limits) { l.Discourse.Rules.ControlRate = 1000 }))
}

// raw signs an ADP event object with the fixture clock and the agent's next
// nonce, letting the test put any top-level fields in.
func (f *fx) raw(a *hubtest.Agent, fields obj) []byte {
	f.t.Helper()
	now := f.clock.Now()
	ev := obj{"protocol": adp.Protocol, "actor": a.ID, "created_at": now.UnixMilli(), "nonce": a.NextNonce(now)}
	for k, v := range fields {
		ev[k] = v
	}
	return a.SignRaw(f.t, hubtest.JSONValue(f.t, ev).(map[string]any))
}

// TestFreshnessRules: the head rule of SDK 0.12.6 (PROTOCOL-0.12 §4.1,
// H-1) and the path rules of 15 over HTTP. Only genesis, contract and
// control records move the head; message and control writes must name an
// accepted record (base_record_mismatch, checked first) at or after the
// head (room_head_mismatch); contract and signal writes only anchor.
func TestFreshnessRules(t *testing.T) {
	t.Parallel()
	f := rulesFx(t)
	as := agents(40, 4)
	creator, sp, other := as[0], as[1], as[2]
	id := f.create(creator, obj{"types": arr{obj{"use": "adp:reactions/1.0"}, obj{"use": "adp:moderation/1.0"},
		obj{"type": "x.plan", "kind": "control", "title": "Plan", "roles": arr{"moderator", "speaker"}, "schema": obj{"type": "object"}}}})
	f.join(sp, id, adp.RoleSpeaker)
	genesis := adp.Link{Seq: 1, Hash: f.records(id, nil)[0].Hash}
	stale := f.head(id)
	msg := f.must(creator, id, adp.TypeMessageCreate, obj{"content_type": "text/plain", "content": "leaves the head"})
	if h := f.head(id); h != stale {
		t.Fatalf("a message moved the head: %v -> %v", stale, h)
	}
	f.must(creator, id, "x.plan", obj{"step": 1})
	now := f.head(id)
	if now.Seq != msg.Seq+1 {
		t.Fatalf("head %d after a control write at %d", now.Seq, msg.Seq+1)
	}
	text := func(s string) obj { return obj{"content_type": "text/plain", "content": s} }

	t.Run("message on a stale head is room_head_mismatch with the 5.1 data", func(t *testing.T) {
		r := f.sendAt(sp, id, adp.TypeMessageCreate, text("late"), stale)
		data := wantError(t, r, http.StatusConflict, adp.CodeRoomHeadMismatch)
		want := obj{"base_seq": stale.Seq, "base_hash": stale.Hash, "current_seq": now.Seq, "current_hash": now.Hash,
			"events_url": f.h.Origin() + "/v1/rooms/" + id + "/events?after_seq=" + itoa(stale.Seq)}
		for k, v := range want {
			if !jsonEq(t, data[k], v) {
				t.Fatalf("data.%s = %v, want %v (%v)", k, data[k], v, data)
			}
		}
	})
	t.Run("messages on the head and after it are accepted", func(t *testing.T) {
		first := f.must(sp, id, adp.TypeMessageCreate, text("on the head"))
		wantStatus(t, f.sendAt(creator, id, adp.TypeMessageCreate, text("on the same head"), now), http.StatusOK)
		wantStatus(t, f.sendAt(sp, id, adp.TypeMessageCreate, text("on a message after the head"), first.Link()), http.StatusOK)
		if h := f.head(id); h != now {
			t.Fatalf("messages moved the head: %v -> %v", now, h)
		}
	})
	t.Run("a wrongly anchored message is base_record_mismatch, stale or not", func(t *testing.T) {
		wantError(t, f.sendAt(sp, id, adp.TypeMessageCreate, text("x"), adp.Link{Seq: genesis.Seq, Hash: now.Hash}), http.StatusConflict, adp.CodeBaseRecordMismatch)
		wantError(t, f.sendAt(sp, id, adp.TypeMessageCreate, text("x"), adp.Link{Seq: now.Seq + 1, Hash: now.Hash}), http.StatusConflict, adp.CodeBaseRecordMismatch)
		wantError(t, f.sendAt(sp, id, adp.TypeMessageCreate, text("x"), adp.Link{Seq: 999, Hash: now.Hash}), http.StatusConflict, adp.CodeBaseRecordMismatch)
	})
	t.Run("control on a stale head is room_head_mismatch; on the head it moves it", func(t *testing.T) {
		wantError(t, f.sendAt(sp, id, "x.plan", obj{"step": 2}, stale), http.StatusConflict, adp.CodeRoomHeadMismatch)
		wantError(t, f.sendAt(creator, id, "claim.update", obj{"claim_id": "c1", "owner": sp.ID, "state": "claimed"}, stale), http.StatusConflict, adp.CodeRoomHeadMismatch)
		rec := f.must(creator, id, "claim.update", obj{"claim_id": "c1", "owner": sp.ID, "state": "claimed"})
		if h := f.head(id); h != rec.Link() {
			t.Fatalf("head %v after a control write at %d", h, rec.Seq)
		}
		now = rec.Link()
	})
	t.Run("contract write on an old anchor is accepted and moves the head", func(t *testing.T) {
		r := f.sendAt(creator, id, adp.TypeRoomUpdate, obj{"agenda": "new agenda"}, genesis)
		wantStatus(t, r, http.StatusOK)
		rec, _ := adp.ParseRecord(r.Body)
		if h := f.head(id); h.Seq != rec.Seq {
			t.Fatalf("head %d after a contract write at %d", h.Seq, rec.Seq)
		}
		now = rec.Link()
	})
	t.Run("contract write with a wrong base_hash is base_record_mismatch", func(t *testing.T) {
		bad := adp.Link{Seq: genesis.Seq, Hash: now.Hash}
		r := f.sendAt(creator, id, adp.TypeRoomUpdate, obj{"agenda": "x"}, bad)
		wantError(t, r, http.StatusConflict, adp.CodeBaseRecordMismatch)
	})
	t.Run("contract write anchored beyond the last record is base_record_mismatch", func(t *testing.T) {
		r := f.sendAt(creator, id, adp.TypeRoomUpdate, obj{"agenda": "x"}, adp.Link{Seq: 999, Hash: now.Hash})
		wantError(t, r, http.StatusConflict, adp.CodeBaseRecordMismatch)
	})
	t.Run("signal write with a wrong anchor is base_record_mismatch", func(t *testing.T) {
		r := f.sendAt(other, id, adp.TypeRoomJoin, obj{"role": "observer"}, adp.Link{Seq: 2, Hash: genesis.Hash})
		wantError(t, r, http.StatusConflict, adp.CodeBaseRecordMismatch)
	})
	t.Run("signal writes on an old anchor are accepted and leave the head", func(t *testing.T) {
		before := f.head(id)
		wantStatus(t, f.sendAt(other, id, adp.TypeRoomJoin, obj{"role": "observer"}, genesis), http.StatusOK)
		wantStatus(t, f.sendAt(sp, id, "reaction.create", obj{"event_id": msg.EnvelopeHash(), "reaction": "agree"}, genesis), http.StatusOK)
		wantStatus(t, f.sendAt(creator, id, "steer.create", obj{"instruction": "focus"}, genesis), http.StatusOK)
		if after := f.head(id); after != before {
			t.Fatalf("a signal write moved the head: %v -> %v", before, after)
		}
	})
	t.Run("an event without a base is invalid_event", func(t *testing.T) {
		r := f.h.Post("/v1/rooms/"+id, f.raw(sp, obj{"type": "message.create", "room_id": id,
			"payload": obj{"content_type": "text/plain", "content": "no base"}}))
		wantError(t, r, http.StatusBadRequest, identity.CodeInvalidEvent)
	})
	t.Run("path room id differing from event room_id is invalid_request", func(t *testing.T) {
		other := f.create(creator, nil)
		r := f.h.Post("/v1/rooms/"+other, sp.ADPEvent(t, f.clock.Now(), adp.TypeMessageCreate, id, ptr(f.head(id)),
			obj{"content_type": "text/plain", "content": "wrong path"}))
		wantError(t, r, http.StatusBadRequest, identity.CodeInvalidRequest)
	})
	t.Run("unknown room is room_not_found", func(t *testing.T) {
		r := f.h.Post("/v1/rooms/nosuchroom0000000000", sp.ADPEvent(t, f.clock.Now(), adp.TypeMessageCreate, "nosuchroom0000000000",
			ptr(now), obj{"content_type": "text/plain", "content": "x"}))
		wantError(t, r, http.StatusNotFound, adp.CodeRoomNotFound)
	})
	t.Run("room.create and room.join.request are refused at the room endpoint", func(t *testing.T) {
		r := f.h.Post("/v1/rooms/"+id, creator.ADPEvent(t, f.clock.Now(), adp.TypeRoomCreate, "", nil, f.roomPayload(nil)))
		wantError(t, r, http.StatusBadRequest, identity.CodeInvalidEvent)
		r = f.h.Post("/v1/rooms/"+id, other.ADPEvent(t, f.clock.Now(), adp.TypeJoinRequest, id, nil, obj{"role": "speaker"}))
		wantError(t, r, http.StatusBadRequest, identity.CodeInvalidEvent)
	})
	t.Run("another protocol is refused", func(t *testing.T) {
		r := f.h.Post("/v1/rooms/"+id, other.ProfileUpdate(t, f.clock.Now(), other.NextNonce(f.clock.Now()), `{"id":"`+other.ID+`","name":"x"}`))
		wantError(t, r, http.StatusBadRequest, identity.CodeInvalidEvent)
	})
}

func ptr[T any](v T) *T { return &v }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestCreateRules: every rejection of ADP 8.3, the section 8 response, and
// exact resubmission.
func TestCreateRules(t *testing.T) {
	t.Parallel()
	f := rulesFx(t)
	a := hubtest.NewAgent(50)
	now := f.clock.Now().UnixMilli()
	badSchema := obj{"type": "x.y", "kind": "message", "title": "X", "schema": obj{"$ref": "https://example.com/s.json"}}
	for _, c := range []struct {
		name   string
		body   func() []byte
		status int
		code   string
	}{
		{"carries room_id", func() []byte {
			return f.raw(a, obj{"type": "room.create", "room_id": "r1", "payload": f.roomPayload(nil)})
		}, 400, identity.CodeInvalidEvent},
		{"carries base_seq and base_hash", func() []byte {
			return f.raw(a, obj{"type": "room.create", "base_seq": 1, "base_hash": strings.Repeat("A", 43), "payload": f.roomPayload(nil)})
		}, 400, identity.CodeInvalidEvent},
		{"carries mentions", func() []byte {
			return f.raw(a, obj{"type": "room.create", "mentions": arr{}, "payload": f.roomPayload(nil)})
		}, 400, identity.CodeInvalidEvent},
		{"host of another origin", pl(f, a, obj{"host": "https://other.example"}), 400, adp.CodeHostMismatch},
		{"blank topic", pl(f, a, obj{"topic": " \t "}), 400, identity.CodeInvalidEvent},
		{"start_time equal to end_time", pl(f, a, obj{"start_time": now + 3600_000, "end_time": now + 3600_000}), 400, identity.CodeInvalidEvent},
		{"start_time after end_time", pl(f, a, obj{"start_time": now + 7200_000, "end_time": now + 3600_000}), 400, identity.CodeInvalidEvent},
		{"shorter than the minimum duration", pl(f, a, obj{"start_time": now, "end_time": now + 9*60_000}), 400, identity.CodeInvalidEvent},
		{"longer than the maximum duration", pl(f, a, obj{"start_time": now, "end_time": now + 8*24*3600_000}), 400, identity.CodeInvalidEvent},
		{"max_speakers below 1", pl(f, a, obj{"policy": obj{"max_speakers": 0}}), 400, identity.CodeInvalidEvent},
		{"invites a malformed Agent ID", pl(f, a, obj{"policy": obj{"invites": obj{"did:agent:nope": "speaker"}}}), 400, identity.CodeInvalidEvent},
		{"invites with a value that is not a role", pl(f, a, obj{"policy": obj{"invites": obj{a.ID: "owner"}}}), 400, identity.CodeInvalidEvent},
		{"open_roles contains moderator", pl(f, a, obj{"policy": obj{"open_roles": arr{"moderator"}}}), 400, identity.CodeInvalidEvent},
		{"open_roles contains an unknown role", pl(f, a, obj{"policy": obj{"open_roles": arr{"guest"}}}), 400, identity.CodeInvalidEvent},
		{"open_roles holds a duplicate", pl(f, a, obj{"policy": obj{"open_roles": arr{"speaker", "speaker"}}}), 400, identity.CodeInvalidEvent},
		// 0.12.6 has no observer_allowed: the closed policy refuses it.
		{"a policy with observer_allowed", pl(f, a, obj{"policy": obj{"observer_allowed": true}}), 400, identity.CodeInvalidEvent},
		{"a private room with open roles", pl(f, a, obj{"visibility": "private", "policy": obj{"open_roles": arr{"observer"}}}), 400, identity.CodeInvalidEvent},
		{"a host that is not a serialized origin", pl(f, a, obj{"host": strings.ToUpper(f.h.Origin()[:9]) + f.h.Origin()[9:]}), 400, identity.CodeInvalidEvent},
		{"a host with a trailing slash", pl(f, a, obj{"host": f.h.Origin() + "/"}), 400, identity.CodeInvalidEvent},
		{"an invalid type declaration", pl(f, a, obj{"types": arr{obj{"type": "x.y", "kind": "message"}}}), 400, identity.CodeInvalidEvent},
		{"a type schema outside the profile", pl(f, a, obj{"types": arr{badSchema}}), 400, adp.CodeInvalidTypeSchema},
		{"a pattern outside I-Regexp", pl(f, a, obj{"types": arr{obj{"type": "x.y", "kind": "message", "title": "X",
			"schema": obj{"type": "string", "pattern": "a.b"}}}}), 400, adp.CodeInvalidTypeSchema},
		{"a type declared twice", pl(f, a, obj{"types": arr{
			obj{"type": "x.y", "kind": "message", "title": "X", "schema": obj{}},
			obj{"type": "x.y", "kind": "signal", "title": "X", "schema": obj{}}}}), 409, adp.CodeTypeConflict},
		{"a registered pack the host does not have", pl(f, a, obj{"types": arr{obj{"use": "adp:nosuch/1.0"}}}), 502, adp.CodePackUnavailable},
		{"an external pack that cannot be fetched", pl(f, a, obj{"types": arr{obj{"pack": "https://127.0.0.1:1/pack.json",
			"digest": strings.Repeat("A", 43)}}}), 502, adp.CodePackUnavailable},
		{"an external pack digest with an algorithm prefix", pl(f, a, obj{"types": arr{obj{"pack": "https://127.0.0.1:1/pack.json",
			"digest": "sha256:" + strings.Repeat("A", 43)}}}), 400, identity.CodeInvalidEvent},
		{"a built-in type name", pl(f, a, obj{"types": arr{obj{"type": "message.create", "kind": "message", "title": "X", "schema": obj{}}}}), 400, identity.CodeInvalidEvent},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, f.h.Post("/v1/rooms", c.body()), c.status, c.code)
		})
	}

	t.Run("response of section 8 and exact resubmission", func(t *testing.T) {
		env := a.ADPEvent(t, f.clock.Now(), adp.TypeRoomCreate, "", nil, f.roomPayload(obj{"start_time": now + 3600_000, "end_time": now + 7200_000}))
		r := f.h.Post("/v1/rooms", env)
		wantStatus(t, r, http.StatusCreated)
		res := decodeJSON(t, r.Body)
		id, _ := res["id"].(string)
		if !adp.ValidRoomID(id) || len(id) != 20 || res["status"] != "scheduled" || res["url"] != f.h.Origin()+"/v1/rooms/"+id ||
			res["seq"] != float64(1) || res["pre_hash"] != nil || res["accepted_at"] != float64(now) || len(res) != 7 {
			t.Fatalf("room.create response %s", r.Body)
		}
		if loc := r.Header.Get("Location"); loc != res["url"] {
			t.Fatalf("Location %q", loc)
		}
		f.clock.Advance(10 * time.Minute) // past the live-write window
		again := f.h.Post("/v1/rooms", env)
		wantStatus(t, again, http.StatusCreated)
		if string(again.Body) != string(r.Body) {
			t.Fatalf("resubmission answered %s, want %s", again.Body, r.Body)
		}
		recs := f.records(id, nil)
		if len(recs) != 1 {
			t.Fatalf("resubmission created records: %d", len(recs))
		}
	})
}

// pl builds a room.create body with payload overrides.
func pl(f *fx, a *hubtest.Agent, over obj) func() []byte {
	return func() []byte {
		return a.ADPEvent(f.t, f.clock.Now(), adp.TypeRoomCreate, "", nil, f.roomPayload(over))
	}
}

// TestUpdateRules: every rejection of ADP 8.4, and the accepted forms.
func TestUpdateRules(t *testing.T) {
	t.Parallel()
	f := rulesFx(t)
	as := agents(55, 3)
	creator, sp := as[0], as[1]
	now := f.clock.Now().UnixMilli()
	active := f.create(creator, nil)
	f.join(sp, active, adp.RoleSpeaker)
	scheduled := f.create(creator, obj{"start_time": now + 3600_000, "end_time": now + 7200_000})

	for _, c := range []struct {
		name    string
		room    string
		by      *hubtest.Agent
		payload obj
		status  int
		code    string
	}{
		{"by a speaker", active, sp, obj{"topic": "mine"}, 403, identity.CodePermissionDenied},
		{"empty payload", active, creator, obj{}, 400, identity.CodeInvalidEvent},
		{"visibility is not updatable", active, creator, obj{"visibility": "private"}, 400, identity.CodeInvalidEvent},
		{"host is not updatable", active, creator, obj{"host": f.h.Origin()}, 400, identity.CodeInvalidEvent},
		{"types are not updatable", active, creator, obj{"types": arr{}}, 400, identity.CodeInvalidEvent},
		{"blank topic", active, creator, obj{"topic": "  "}, 400, identity.CodeInvalidEvent},
		{"start_time of an active room", active, creator, obj{"start_time": now + 60_000}, 400, identity.CodeInvalidEvent},
		{"effective start after end", scheduled, creator, obj{"start_time": now + 8000_000}, 400, identity.CodeInvalidEvent},
		{"effective duration below the minimum", scheduled, creator, obj{"end_time": now + 3600_000 + 60_000}, 400, identity.CodeInvalidEvent},
		{"effective duration beyond the maximum", scheduled, creator, obj{"end_time": now + 8*24*3600_000}, 400, identity.CodeInvalidEvent},
		{"active room ending at or before acceptance", active, creator, obj{"end_time": now}, 400, identity.CodeInvalidEvent},
		{"policy violating 8.3", active, creator, obj{"policy": obj{"open_roles": arr{"moderator"}}}, 400, identity.CodeInvalidEvent},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, f.send(c.by, c.room, adp.TypeRoomUpdate, c.payload), c.status, c.code)
		})
	}
	t.Run("scheduled room becomes active when start_time moves to now", func(t *testing.T) {
		f.must(creator, scheduled, adp.TypeRoomUpdate, obj{"start_time": now, "guidance": ""})
		res := decodeJSON(t, f.h.Get(t, "/v1/rooms/"+scheduled, nil).Body)
		if res["status"] != "active" || res["start_time"] != float64(now) {
			t.Fatalf("after the update: %v %v", res["status"], res["start_time"])
		}
	})
	t.Run("ended and cancelled rooms accept no update", func(t *testing.T) {
		closed := f.create(creator, nil)
		f.must(creator, closed, adp.TypeRoomClose, obj{"reason": "done"})
		wantError(t, f.send(creator, closed, adp.TypeRoomUpdate, obj{"topic": "late"}), 409, adp.CodeRoomNotActive)
		cancelled := f.create(creator, obj{"start_time": now + 3600_000, "end_time": now + 7200_000})
		f.must(creator, cancelled, adp.TypeRoomCancel, obj{})
		wantError(t, f.send(creator, cancelled, adp.TypeRoomUpdate, obj{"topic": "late"}), 409, adp.CodeRoomNotActive)
		// room.close of a scheduled room and room.cancel of an active one
		// are state violations too (12.2).
		sched := f.create(creator, obj{"start_time": now + 3600_000, "end_time": now + 7200_000})
		wantError(t, f.send(creator, sched, adp.TypeRoomClose, obj{}), 409, adp.CodeRoomNotActive)
		wantError(t, f.send(creator, active, adp.TypeRoomCancel, obj{}), 409, adp.CodeRoomNotActive)
	})
	t.Run("the room ends at end_time without a record", func(t *testing.T) {
		r := f.create(creator, obj{"start_time": now, "end_time": now + 20*60_000})
		before := len(f.records(r, nil))
		f.clock.Advance(21 * time.Minute)
		res := decodeJSON(t, f.h.Get(t, "/v1/rooms/"+r, nil).Body)
		if res["status"] != "ended" || len(f.records(r, nil)) != before {
			t.Fatalf("status %v, records %d -> %d", res["status"], before, len(f.records(r, nil)))
		}
		wantError(t, f.message(creator, r, "too late"), 409, adp.CodeRoomNotActive)
	})
}
