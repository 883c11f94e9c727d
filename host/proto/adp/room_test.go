package adp

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

// busyRoom drives a realistic room: packs, members of every role, messages,
// reactions, a poll, a redefinition, role changes, a ban, a reviewed join
// request, a contract update and a redacted message.
func busyRoom(t *testing.T) *fixture {
	t.Helper()
	f := activeRoom(t, obj{
		"visibility": "public",
		"tags":       arr{"review", "go"},
		"language":   "en",
		"extra":      obj{"board": obj{"lanes": arr{1, 2, 3}, "ratio": 0.5, "on": true, "none": nil, "title": "<b>A & B</b>"}},
		"policy":     obj{"invites": obj{agent("mod"): "moderator", agent("alice"): "speaker"}, "open_roles": arr{"speaker", "observer"}, "max_speakers": 10, "extra": obj{"k": "v"}},
		"types": arr{
			obj{"use": "adp:reactions/1.0"},
			obj{"use": "adp:deliberation/1.0", "types": arr{"poll.create", "poll.vote"}, "overrides": obj{"poll.vote": obj{"roles": arr{"moderator", "speaker", "observer"}}}},
			obj{"type": "review.finding", "kind": "message", "title": "Finding", "schema": obj{
				"type": "object", "required": arr{"severity"},
				"properties": obj{"severity": obj{"enum": arr{"low", "high"}}, "score": obj{"type": "number", "maximum": 9.5}},
			}, "extra": obj{"ui": obj{"color": "#f00"}}},
		},
	})
	msg := f.must("alice", TypeMessageCreate, obj{"content_type": "text/plain", "content": "<b>hello</b> & welcome"})
	f.must("olga", "reaction.create", obj{"event_id": msg.EnvelopeHash(), "reaction": "agree", "score": 40})
	poll := f.must("alice", "poll.create", obj{"poll_id": "p", "question": "Ship?", "options": arr{obj{"id": "y", "label": "Yes"}, obj{"id": "n", "label": "No"}}})
	f.must("olga", "poll.vote", obj{"poll_event_id": poll.EnvelopeHash(), "option_ids": arr{"y"}})
	f.must("alice", "review.finding", obj{"severity": "high", "score": 7.25})
	f.must("creator", TypeTypeDefine, obj{"type": "review.finding", "kind": "message", "title": "Finding v2", "schema": obj{"type": "object"}, "status": "deprecated"})
	f.must("bob", TypeRoomJoin, obj{"role": "speaker", "perspective": "security"})
	f.must("mod", TypeRoleUpdate, obj{"member": agent("bob"), "role": "observer", "reason": "mute"})
	f.must("mod", TypeMemberRemove, obj{"member": agent("bob"), "ban": true})
	req := f.joinRequest("bob", obj{"role": "speaker", "perspective": "reformed"})
	f.must("creator", TypeJoinReview, review(req, "approve", "speaker"))
	f.must("carol", TypeRoomJoin, obj{"role": "speaker"})
	f.must("carol", TypeRoomLeave, obj{"reason": "bye"})
	f.must("creator", TypeRoomUpdate, obj{"guidance": "Cite sources.", "policy": obj{"open_roles": arr{"observer"}, "invites": obj{agent("mod"): "moderator"}}})
	// A redacted message still consumes its seq and moves the head.
	env := f.event("alice", TypeMessageCreate, obj{"content_type": "text/plain", "content": "secret"})
	if err := f.room.Check(f.rules, env, f.options()); err != nil {
		t.Fatal(err)
	}
	rec, err := NewRecord(testRoom, f.room.Last.Link(), f.now, env)
	if err != nil {
		t.Fatal(err)
	}
	red, err := rec.Redact()
	if err != nil {
		t.Fatal(err)
	}
	if err := f.room.Apply(f.rules, red); err != nil {
		t.Fatal(err)
	}
	f.records = append(f.records, red)
	if f.room.Head == red.Link() || f.room.Last.Seq != red.Seq {
		t.Fatal("a redacted message moved the head (its class is message)")
	}
	return f
}

// snapshot is the JSON encoding of v (a room, or an archive line).
func snapshot(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRoomSnapshotRoundTrip(t *testing.T) {
	f := busyRoom(t)
	before := snapshot(t, f.room)
	var reloaded Room
	if err := json.Unmarshal(before, &reloaded); err != nil {
		t.Fatal(err)
	}
	if after := snapshot(t, &reloaded); !bytes.Equal(before, after) {
		t.Fatalf("round trip changed the snapshot\n%s\n%s", before, after)
	}
	if c := snapshot(t, f.room.Clone()); !bytes.Equal(before, c) {
		t.Fatal("Clone differs")
	}
	board := reloaded.Extra["board"].(map[string]any)
	if board["ratio"] != json.Number("0.5") || board["title"] != "<b>A & B</b>" || board["none"] != nil {
		t.Fatalf("opaque values not kept exactly: %#v", board)
	}

	// Continue on both: the reloaded room and the original must stay equal.
	startNonce, startRecords := f.nonce, slices.Clone(f.records)
	g := &fixture{t: t, rules: f.rules, room: &reloaded, records: slices.Clone(f.records), now: f.now, pending: f.pending}
	for _, fx := range []*fixture{f, g} {
		fx.nonce = startNonce
		fx.must("alice", "review.finding", obj{"anything": 1})
		fx.must("creator", TypeTypeDefine, obj{"use": "adp:deliberation/1.0", "types": arr{"question.create"}})
		fx.must("alice", "question.create", obj{"question": "And now?"})
		fx.must("olga", TypeRoomLeave, obj{})
		fx.must("mod", TypeRoomClose, obj{"reason": "done"})
	}
	if a, b := snapshot(t, f.room), snapshot(t, g.room); !bytes.Equal(a, b) {
		t.Fatalf("states diverged after reload\n%s\n%s", a, b)
	}
	// And a fresh replay of every record reaches the same state.
	rep := Replay(&Rules{Limits: DefaultLimits(), HostOrigin: testHost}, f.records)
	if len(rep.Problems) != 0 {
		t.Fatalf("replay problems %+v", rep.Problems)
	}
	if a, b := snapshot(t, f.room), snapshot(t, rep.Room); !bytes.Equal(a, b) {
		t.Fatalf("replay reached another state\n%s\n%s", a, b)
	}
	if len(startRecords) >= len(f.records) {
		t.Fatal("no records were added")
	}
}

func TestRoomSnapshotState(t *testing.T) {
	f := busyRoom(t)
	r := f.room
	bob, _ := r.Member(agent("bob"))
	if !bob.Active || bob.Role != RoleSpeaker || bob.Perspective != "reformed" || r.IsBanned(agent("bob")) {
		t.Errorf("bob %+v banned=%v", bob, r.IsBanned(agent("bob")))
	}
	carol, _ := r.Member(agent("carol"))
	if carol.Active || carol.Departure != DepartureLeft {
		t.Errorf("carol %+v", carol)
	}
	def, _ := r.Types.Lookup("review.finding")
	if def.Title != "Finding v2" || def.EffectiveStatus() != TypeDeprecated {
		t.Errorf("redefinition %+v", def)
	}
	if len(r.ActiveMembers()) != 5 {
		t.Errorf("active members %v", r.ActiveMembers())
	}
	if r.Guidance != "Cite sources." || len(r.Policy.EffectiveOpenRoles(r.Visibility)) != 1 {
		t.Errorf("contract %q %v", r.Guidance, r.Policy.EffectiveOpenRoles(r.Visibility))
	}
	alice, _ := r.Member(agent("alice"))
	if alice.LastEventSeq == 0 || alice.LastEventSeq >= r.Last.Seq {
		t.Errorf("alice last event %d (the redacted record has no actor)", alice.LastEventSeq)
	}

	res := r.Resource(f.now, testHost+"/v1/rooms/"+testRoom)
	head := res["head"].(map[string]any)
	if res["seq"] != r.Last.Seq || head["seq"] != r.Head.Seq || res["pre_hash"] != r.Last.PreHash || res["status"] != "active" {
		t.Errorf("resource %v", res)
	}
	if _, err := json.Marshal(res); err != nil {
		t.Fatal(err)
	}

	for _, bad := range []string{
		`{"id":"x"}`,
		`{"id":"r","id":"r"}`,
		`{"id":"room","unknown":1}`,
	} {
		var room Room
		if err := json.Unmarshal([]byte(bad), &room); ErrorCode(err) != CodeInvalidRequest {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

func TestApplyRejects(t *testing.T) {
	f := activeRoom(t, nil)
	env := f.event("alice", TypeMessageCreate, obj{"content_type": "text/plain", "content": "x"})
	rec, err := NewRecord(testRoom, f.room.Last.Link(), f.now, env)
	if err != nil {
		t.Fatal(err)
	}
	stale := *rec
	stale.Seq++
	wantCode(t, f.room.Apply(f.rules, &stale), CodeInvalidRecord)
	before := snapshot(t, f.room)
	other, _ := NewRecord(testRoom, Link{Seq: 1, Hash: f.records[0].Hash}, f.now, env)
	wantCode(t, f.room.Apply(f.rules, other), CodeChainBroken)
	// A type.define whose pack cannot be resolved leaves the room unchanged.
	td := f.event("creator", TypeTypeDefine, obj{"pack": "https://packs.example/x.json", "digest": "sha256:" + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"})
	tdRec, _ := NewRecord(testRoom, f.room.Last.Link(), f.now, td)
	wantCode(t, f.room.Apply(f.rules, tdRec), CodePackUnavailable)
	if !bytes.Equal(before, snapshot(t, f.room)) {
		t.Fatal("a failed Apply changed the room")
	}
	wantCode(t, f.room.Apply(f.rules, rec), "")
}
