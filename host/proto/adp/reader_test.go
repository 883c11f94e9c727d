package adp

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestReaderFlow replays a hub's records the way the connector does: parse,
// VerifyGenesis, then VerifyRecord and Apply per record with a bounded
// window of record hashes, snapshotting midway.
func TestReaderFlow(t *testing.T) {
	hub := busyRoom(t)
	rules := &Rules{Limits: VerifierLimits(), HostOrigin: testHost}
	wire := func(r *Record) *Record {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := ParseRecord(b)
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	room, err := VerifyGenesis(rules, wire(hub.records[0]))
	if err != nil {
		t.Fatal(err)
	}
	window := map[int64]string{1: hub.records[0].Hash}
	opt := CheckOptions{
		Records:             RecordHashFunc(func(seq int64) (string, bool) { h, ok := window[seq]; return h, ok }),
		TrustUnknownAnchors: true,
	}
	for i, hr := range hub.records[1:] {
		rec := wire(hr)
		if err := room.VerifyRecord(rules, rec, opt); err != nil {
			t.Fatalf("seq %d: %v", rec.Seq, err)
		}
		if err := room.Apply(rules, rec); err != nil {
			t.Fatalf("seq %d: %v", rec.Seq, err)
		}
		window[rec.Seq] = rec.Hash
		delete(window, rec.Seq-3) // keep a window of three hashes
		if i == 7 {
			b, _ := json.Marshal(room)
			room = &Room{}
			if err := json.Unmarshal(b, room); err != nil {
				t.Fatal(err)
			}
		}
	}
	a, _ := json.Marshal(room)
	b, _ := json.Marshal(hub.room)
	if !bytes.Equal(a, b) {
		t.Fatalf("reader state differs from the hub's\n%s\n%s", a, b)
	}

	t.Run("host binding", func(t *testing.T) {
		_, err := VerifyGenesis(&Rules{HostOrigin: "https://other.example"}, hub.records[0])
		wantCode(t, err, CodeHostMismatch)
	})
	t.Run("tampered envelope", func(t *testing.T) {
		rec := wire(hub.records[0])
		rec.Envelope.Event.CreatedAt++
		_, err := VerifyGenesis(rules, rec)
		wantCode(t, err, CodeInvalidEventHash)
	})
	t.Run("redacted record of an unknown type", func(t *testing.T) {
		f := activeRoom(t, nil)
		env := f.event("alice", TypeMessageCreate, obj{"content_type": "text/plain", "content": "x"})
		rec, _ := NewRecord(testRoom, f.room.Last.Link(), f.now, env)
		red, _ := rec.Redact()
		red.Redaction.Type = "x.unknown"
		red.Hash, _ = red.ComputeHash()
		wantCode(t, f.room.VerifyRecord(f.rules, red, f.options()), CodeTypeNotDefined)
	})
}

func TestSharedRulesConcurrently(t *testing.T) {
	rules := newRules()
	const url = "https://packs.example/triage-1.0.json"
	doc := triagePack(t)
	rules.Packs = StaticPacks{url: doc}
	digest := PackDigest(doc)
	// Parallel subtests share one Rules: pack cache, schema cache, kernel.
	t.Run("group", func(t *testing.T) {
		for i := range 8 {
			t.Run(itoa(i), func(t *testing.T) {
				t.Parallel()
				f := newFixtureWith(t, rules, obj{"topic": "room " + itoa(i), "types": arr{obj{"pack": url, "digest": digest}, obj{"use": "adp:reactions/1.0"}}})
				f.at(tStart + 1)
				f.must("alice", TypeRoomJoin, obj{"role": "speaker"})
				f.must("alice", "triage.label", obj{"label": "bug"})
				wantCode(t, f.submit(f.event("alice", "triage.label", obj{"label": "BUG"})), CodePayloadSchemaViolation)
			})
		}
	})
}

func TestPermissionHelpers(t *testing.T) {
	f := activeRoom(t, obj{"visibility": "private", "types": arr{obj{"use": "adp:moderation/1.0"}}})
	r := f.room
	cases := []struct {
		who, typ string
		want     bool
	}{
		{"creator", "turn.update", true},
		{"mod", "turn.update", true},
		{"alice", "turn.update", false},
		{"alice", "steer.create", true},
		{"olga", "steer.create", false},
		{"olga", TypeMessageCreate, false},
		{"olga", TypeRoomLeave, true},
		{"alice", TypeRoomUpdate, false},
		{"mod", TypeMemberRemove, true},
		{"bob", TypeMessageCreate, false},
		{"alice", "x.unknown", false},
	}
	for _, tc := range cases {
		if got := r.MaySend(agent(tc.who), tc.typ); got != tc.want {
			t.Errorf("%s may send %s: %v", tc.who, tc.typ, got)
		}
	}
	if !r.CanReadRoom(agent("vip")) || r.CanReadRoom(agent("bob")) || r.CanReadRoom("") {
		t.Error("CanReadRoom on a private room")
	}
	if !r.CanReadEvents(agent("alice")) || r.CanReadEvents(agent("vip")) {
		t.Error("CanReadEvents on a private room")
	}
	if !r.CanJoinDirectly(agent("vip"), RoleSpeaker) || r.CanJoinDirectly(agent("bob"), RoleObserver) {
		t.Error("CanJoinDirectly")
	}
	if r.SpeakerCount() != 3 || r.ObserverCount() != 1 || r.MaxSpeakers(DefaultLimits()) != 100 || r.MaxSpeakers(VerifierLimits()) != 0 {
		t.Error("counts")
	}

	for typ, want := range map[string]int{TypeMessageCreate: 5, TypeRoomUpdate: 10, TypeRoomJoin: 60, "turn.update": 10, "steer.create": 60} {
		got, err := RateLimit(DefaultLimits(), typ, r.Types)
		if err != nil || got != want {
			t.Errorf("rate of %s: %d %v", typ, got, err)
		}
	}
	reg := Registry{{Type: "x.hint", Kind: KindSignal, RateHint: 7}}
	if got, _ := RateLimit(DefaultLimits(), "x.hint", reg); got != 7 {
		t.Errorf("rate_hint: %d", got)
	}
	if got, _ := RateLimit(VerifierLimits(), "x.hint", reg); got != 0 {
		t.Errorf("verifier rate: %d", got)
	}
	// A hint cannot lift a rate past the host ceiling (section 20).
	greedy := Registry{{Type: "x.greedy", Kind: KindMessage, RateHint: 1_000_000}}
	if got, _ := RateLimit(DefaultLimits(), "x.greedy", greedy); got != 120 {
		t.Errorf("rate_hint above the ceiling: %d", got)
	}
	uncapped := DefaultLimits()
	uncapped.MaxRateHint = 0
	if got, _ := RateLimit(uncapped, "x.greedy", greedy); got != 1_000_000 {
		t.Errorf("rate_hint without a ceiling: %d", got)
	}
}
