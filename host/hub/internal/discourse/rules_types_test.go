package discourse_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"apconnect/host/hub/hubtest"
	"apconnect/host/identity"
	"apconnect/host/proto/adp"
)

// TestMessageRules: every rejection of ADP 11 and the mentions bounds of 5.
func TestMessageRules(t *testing.T) {
	t.Parallel()
	f := rulesFx(t)
	as := agents(90, 5)
	creator, sp, obs, outsider := as[0], as[1], as[2], as[3]
	id := f.create(creator, nil)
	f.join(sp, id, adp.RoleSpeaker)
	f.join(obs, id, adp.RoleObserver)
	other := f.create(creator, nil)
	foreign := f.records(other, nil)[0].EnvelopeHash()
	msg := func(p obj) obj {
		out := obj{"content_type": "text/plain", "content": "hi"}
		for k, v := range p {
			if v == nil {
				delete(out, k)
			} else {
				out[k] = v
			}
		}
		return out
	}
	mentions := func(n int) arr {
		out := arr{}
		for i := 0; i < n; i++ {
			out = append(out, hubtest.NewAgent(byte(200+i%50)+byte(i/50)).ID)
		}
		return out
	}
	for _, c := range []struct {
		name   string
		by     *hubtest.Agent
		body   func() []byte
		status int
		code   string
	}{
		{"by a non-member", outsider, ev(f, outsider, id, msg(nil)), 403, identity.CodePermissionDenied},
		{"by an observer", obs, ev(f, obs, id, msg(nil)), 403, identity.CodePermissionDenied},
		{"empty content_type", sp, ev(f, sp, id, msg(obj{"content_type": ""})), 400, identity.CodeInvalidEvent},
		{"blank content_type", sp, ev(f, sp, id, msg(obj{"content_type": "  "})), 400, identity.CodeInvalidEvent},
		{"content neither string nor object", sp, ev(f, sp, id, msg(obj{"content": 42})), 400, identity.CodeInvalidEvent},
		{"missing content", sp, ev(f, sp, id, msg(obj{"content": nil})), 400, identity.CodeInvalidEvent},
		{"reference to another room's event", sp, ev(f, sp, id, msg(obj{"references": arr{foreign}})), 400, identity.CodeInvalidEvent},
		{"reference to an unknown event", sp, ev(f, sp, id, msg(obj{"references": arr{strings.Repeat("A", 43)}})), 400, identity.CodeInvalidEvent},
		{"duplicate references", sp, ev(f, sp, id, msg(obj{"references": arr{foreign, foreign}})), 400, identity.CodeInvalidEvent},
		{"unknown payload member", sp, ev(f, sp, id, msg(obj{"html": "<b>"})), 400, identity.CodeInvalidEvent},
		{"payload beyond 64 KiB", sp, ev(f, sp, id, msg(obj{"content": strings.Repeat("x", 65<<10)})), 413, identity.CodePayloadTooLarge},
		{"33 mentions", sp, func() []byte {
			return f.raw(sp, obj{"type": "message.create", "room_id": id, "base_seq": f.head(id).Seq, "base_hash": f.head(id).Hash,
				"mentions": mentions(33), "payload": msg(nil)})
		}, 400, identity.CodeInvalidEvent},
		{"duplicate mentions", sp, func() []byte {
			return f.raw(sp, obj{"type": "message.create", "room_id": id, "base_seq": f.head(id).Seq, "base_hash": f.head(id).Hash,
				"mentions": arr{obs.ID, obs.ID}, "payload": msg(nil)})
		}, 400, identity.CodeInvalidEvent},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, f.h.Post("/v1/rooms/"+id, c.body()), c.status, c.code)
		})
	}
	t.Run("accepted forms", func(t *testing.T) {
		first := f.message(sp, id, "first")
		wantStatus(t, first, 200)
		ref, _ := adp.ParseRecord(first.Body)
		wantStatus(t, f.send(sp, id, adp.TypeMessageCreate, obj{"content_type": "application/vnd.x+json", "content": obj{"k": "v"},
			"references": arr{ref.EnvelopeHash()}, "extra": obj{}}), 200)
		r := f.h.Post("/v1/rooms/"+id, sp.ADPEvent(t, f.clock.Now(), adp.TypeMessageCreate, id, ptr(f.head(id)), msg(nil)))
		wantStatus(t, r, 200)
		// D-24: object content whatever the media type, as 0.12.6 accepts.
		wantStatus(t, f.send(creator, id, adp.TypeMessageCreate, obj{"content_type": "text/plain", "content": obj{"a": 1}}), 200)
	})
	t.Run("rate limited with Retry-After", func(t *testing.T) {
		// sp has sent 3 messages this minute; the quota is 5.
		wantStatus(t, f.message(sp, id, "4"), 200)
		wantStatus(t, f.message(sp, id, "5"), 200)
		r := f.message(sp, id, "6")
		wantError(t, r, http.StatusTooManyRequests, identity.CodeRateLimited)
		if ra := r.Header.Get("Retry-After"); ra == "" || ra == "0" {
			t.Fatalf("Retry-After %q", ra)
		}
		// A new minute brings a new quota, and a rejected write (here: a
		// stale head) does not count against it.
		f.clock.Advance(time.Minute)
		stale := f.head(id)
		wantStatus(t, f.send(creator, id, adp.TypeRoomUpdate, obj{"agenda": "moves the head"}), 200)
		wantError(t, f.sendAt(sp, id, adp.TypeMessageCreate, msg(nil), stale), 409, adp.CodeRoomHeadMismatch)
		for i := 0; i < 5; i++ {
			wantStatus(t, f.message(sp, id, "again"), 200)
		}
		wantError(t, f.message(sp, id, "over"), http.StatusTooManyRequests, identity.CodeRateLimited)
		// The quota is per room: the same agent may still write elsewhere.
		f.join(sp, other, adp.RoleSpeaker)
		wantStatus(t, f.message(sp, other, "elsewhere"), 200)
	})
	t.Run("scheduled and ended rooms", func(t *testing.T) {
		sched := f.create(creator, obj{"start_time": f.clock.Now().UnixMilli() + 3600_000, "end_time": f.clock.Now().UnixMilli() + 7200_000})
		wantError(t, f.message(creator, sched, "early"), 409, adp.CodeRoomNotActive)
		closed := f.create(creator, nil)
		f.must(creator, closed, adp.TypeRoomClose, obj{})
		wantError(t, f.message(creator, closed, "late"), 409, adp.CodeRoomNotActive)
	})
}

// ev builds a body-producing func for a room event on the current head.
func ev(f *fx, a *hubtest.Agent, roomID string, payload obj) func() []byte {
	return func() []byte {
		return a.ADPEvent(f.t, f.clock.Now(), adp.TypeMessageCreate, roomID, ptr(f.head(roomID)), payload)
	}
}

// TestTypeRules: type.define (ADP 12.4) and custom event validation (12.6).
func TestTypeRules(t *testing.T) {
	t.Parallel()
	f := rulesFx(t)
	as := agents(100, 4)
	creator, sp, obs := as[0], as[1], as[2]
	finding := obj{"type": "review.finding", "kind": "message", "title": "Finding",
		"schema": obj{"type": "object", "required": arr{"severity"}, "additionalProperties": false,
			"properties": obj{"severity": obj{"type": "string", "enum": arr{"low", "high"}}, "note": obj{"type": "string"}}}}
	id := f.create(creator, obj{"types": arr{
		obj{"use": "adp:reactions/1.0"},
		obj{"use": "adp:deliberation/1.0", "overrides": obj{"poll.vote": obj{"roles": arr{"moderator", "speaker", "observer"}}}},
		obj{"use": "adp:moderation/1.0", "types": arr{"turn.update"}},
		finding,
	}})
	f.join(sp, id, adp.RoleSpeaker)
	f.join(obs, id, adp.RoleObserver)

	t.Run("type.define rules", func(t *testing.T) {
		for _, c := range []struct {
			name    string
			by      *hubtest.Agent
			payload obj
			status  int
			code    string
		}{
			{"by a speaker", sp, obj{"type": "x.note", "kind": "signal", "title": "N", "schema": obj{}}, 403, identity.CodePermissionDenied},
			{"redefinition changing the kind", creator, obj{"type": "review.finding", "kind": "signal", "title": "F", "schema": obj{}}, 409, adp.CodeTypeConflict},
			{"pack import redefining a kind", creator, obj{"use": "adp:reactions/1.0"}, 200, ""},
			{"subset naming a type the pack lacks", creator, obj{"use": "adp:curation/1.0", "types": arr{"poll.create"}}, 409, adp.CodeTypeConflict},
			{"override naming a type the pack lacks", creator, obj{"use": "adp:curation/1.0", "overrides": obj{"nope.x": obj{"status": "disabled"}}}, 409, adp.CodeTypeConflict},
			{"override changing the schema", creator, obj{"use": "adp:curation/1.0", "overrides": obj{"graph.update": obj{"schema": obj{}}}}, 400, identity.CodeInvalidEvent},
			{"a schema outside the profile", creator, obj{"type": "x.bad", "kind": "signal", "title": "B", "schema": obj{"$dynamicRef": "#x"}}, 400, adp.CodeInvalidTypeSchema},
			{"a reserved type name", creator, obj{"type": "room.custom", "kind": "signal", "title": "B", "schema": obj{}}, 400, identity.CodeInvalidEvent},
			{"an unknown registered pack", creator, obj{"use": "adp:nosuch/1.0"}, 502, adp.CodePackUnavailable},
			{"a schema beyond 16 KiB", creator, obj{"type": "x.big", "kind": "signal", "title": "B",
				"schema": obj{"description": strings.Repeat("d", 17<<10)}}, 400, adp.CodeInvalidTypeSchema},
		} {
			t.Run(c.name, func(t *testing.T) {
				r := f.send(c.by, id, adp.TypeTypeDefine, c.payload)
				if c.code == "" {
					wantStatus(t, r, c.status)
					return
				}
				wantError(t, r, c.status, c.code)
			})
		}
	})
	vote := func(by *hubtest.Agent) *hubtest.Response {
		return f.send(by, id, "poll.vote", obj{"poll_event_id": strings.Repeat("A", 43), "option_ids": arr{"a"}})
	}
	t.Run("custom event rules", func(t *testing.T) {
		wantError(t, f.send(sp, id, "no.such", obj{}), 400, adp.CodeTypeNotDefined)
		wantError(t, f.send(obs, id, "review.finding", obj{"severity": "low"}), 403, identity.CodePermissionDenied)
		wantError(t, f.send(sp, id, "turn.update", obj{"turn_id": 1, "speaker": sp.ID}), 403, identity.CodePermissionDenied)
		r := f.send(sp, id, "review.finding", obj{"severity": "urgent"})
		data := wantError(t, r, 400, adp.CodePayloadSchemaViolation)
		if errs, _ := data["errors"].([]any); len(errs) == 0 {
			t.Fatalf("no field errors: %s", r.Body)
		}
		wantStatus(t, f.send(sp, id, "review.finding", obj{"severity": "high", "note": "<script>"}), 200)
		wantStatus(t, vote(obs), 200) // the roles override lets observers vote
		// A signal-kind custom event does not move the head; a
		// control-kind one does, and is head-bound.
		before := f.head(id)
		wantStatus(t, f.send(sp, id, "reaction.create", obj{"event_id": before.Hash, "reaction": "agree"}), 200)
		if f.head(id) != before {
			t.Fatal("a signal-kind custom event moved the head")
		}
		wantStatus(t, f.send(creator, id, "turn.update", obj{"turn_id": 1, "speaker": sp.ID}), 200)
		if f.head(id) == before {
			t.Fatal("a control-kind custom event did not move the head")
		}
		wantError(t, f.sendAt(creator, id, "turn.update", obj{"turn_id": 2, "speaker": sp.ID}, before), 409, adp.CodeRoomHeadMismatch)
	})
	t.Run("deprecated types stay usable, disabled ones are type_disabled", func(t *testing.T) {
		f.must(creator, id, adp.TypeTypeDefine, obj{"use": "adp:deliberation/1.0", "types": arr{"poll.vote"},
			"overrides": obj{"poll.vote": obj{"status": "deprecated", "roles": arr{"moderator", "speaker", "observer"}}}})
		wantStatus(t, vote(obs), 200)
		f.must(creator, id, adp.TypeTypeDefine, obj{"use": "adp:deliberation/1.0", "types": arr{"poll.vote"},
			"overrides": obj{"poll.vote": obj{"status": "disabled"}}})
		wantError(t, vote(sp), 409, adp.CodeTypeDisabled)
	})
	t.Run("a redefinition's schema governs later events", func(t *testing.T) {
		loose := obj{"type": "review.finding", "kind": "message", "title": "Finding", "schema": obj{"type": "object"}}
		f.must(creator, id, adp.TypeTypeDefine, loose)
		wantStatus(t, f.send(sp, id, "review.finding", obj{"anything": true}), 200)
	})
	t.Run("max_payload_hint lowers the payload limit", func(t *testing.T) {
		f.must(creator, id, adp.TypeTypeDefine, obj{"type": "x.tiny", "kind": "signal", "title": "T", "schema": obj{}, "max_payload_hint": 16})
		wantError(t, f.send(sp, id, "x.tiny", obj{"text": strings.Repeat("y", 40)}), 413, identity.CodePayloadTooLarge)
		wantStatus(t, f.send(sp, id, "x.tiny", obj{"t": 1}), 200)
	})
	t.Run("the materialized registry is in the room resource", func(t *testing.T) {
		res := decodeJSON(t, f.h.Get(t, "/v1/rooms/"+id, nil).Body)
		types := map[string]obj{}
		for _, v := range res["types"].([]any) {
			d := v.(map[string]any)
			types[d["type"].(string)] = d
		}
		if types["poll.vote"]["status"] != "disabled" || types["review.finding"]["kind"] != "message" || types["x.tiny"] == nil || types["reaction.create"] == nil {
			t.Fatalf("registry %v", res["types"])
		}
	})
}
