package adp

import (
	"slices"
	"testing"

	"apconnect/host/identity"
)

// reader is a room as a reader follows it: records are verified with
// VerifyRecord (the historical dialect) and applied.
type reader struct {
	t       *testing.T
	rules   *Rules
	room    *Room
	records []*Record
	now     int64
	nonce   int64
}

// readGenesis verifies a room.create payload as a reader and, for
// comparison, reports what a host says of it.
func readGenesis(t *testing.T, payload obj) (*reader, error, error) {
	t.Helper()
	env := sign(t, "creator", identity.Event{Type: TypeRoomCreate, CreatedAt: t0, Nonce: t0, Payload: jsonValue(t, createPayload(payload))})
	hostErr := CheckCreate(newRules(), env)
	rec, err := NewRecord(testRoom, Link{}, t0, env)
	if err != nil {
		t.Fatal(err)
	}
	rd := &reader{t: t, rules: newRules(), now: tStart + 1000, nonce: t0}
	rd.room, err = VerifyGenesis(rd.rules, rec)
	if err == nil {
		rd.records = []*Record{rec}
	}
	return rd, hostErr, err
}

func (rd *reader) options() CheckOptions {
	return CheckOptions{Now: rd.now, Records: RecordHashFunc(func(seq int64) (string, bool) {
		if seq < 1 || seq > int64(len(rd.records)) {
			return "", false
		}
		return rd.records[seq-1].Hash, true
	})}
}

// read signs an event by name on base and reports what a host says of it
// (Check) and what a reader says (VerifyRecord, then Apply when accepted).
func (rd *reader) read(name, typ string, payload any, base Link) (hostErr, readErr error) {
	rd.t.Helper()
	rd.nonce++
	env := sign(rd.t, name, identity.Event{
		Type: typ, CreatedAt: rd.now, Nonce: rd.nonce, Payload: jsonValue(rd.t, payload), Fields: Fields{RoomID: testRoom, Base: &Link{Seq: base.Seq, Hash: base.Hash}}.Map()})
	hostErr = rd.room.Check(rd.rules, env, rd.options())
	rec, err := NewRecord(testRoom, rd.room.Last.Link(), rd.now, env)
	if err != nil {
		rd.t.Fatal(err)
	}
	if readErr = rd.room.VerifyRecord(rd.rules, rec, rd.options()); readErr != nil {
		return hostErr, readErr
	}
	if err := rd.room.Apply(rd.rules, rec); err != nil {
		rd.t.Fatalf("Apply after VerifyRecord: %v", err)
	}
	rd.records = append(rd.records, rec)
	return hostErr, nil
}

// mustRead is read that fails unless the reader accepts.
func (rd *reader) mustRead(name, typ string, payload any, base Link) (hostErr error) {
	rd.t.Helper()
	hostErr, err := rd.read(name, typ, payload, base)
	if err != nil {
		rd.t.Fatalf("reader refused %s by %s: %v", typ, name, err)
	}
	return hostErr
}

// TestReaderFollowsConcurrentMessages is H-3 of design/PROTOCOL-0.12.md: two
// messages on the same base, then a contract write, then a message behind it.
func TestReaderFollowsConcurrentMessages(t *testing.T) {
	rd, hostErr, err := readGenesis(t, obj{"policy": obj{"invites": obj{agent("alice"): "speaker"}}})
	if hostErr != nil || err != nil {
		t.Fatal(hostErr, err)
	}
	heads := []int64{rd.room.Head.Seq}
	step := func(name, typ string, payload any, base Link) {
		t.Helper()
		wantCode(t, rd.mustRead(name, typ, payload, base), "") // the host accepts it too
		heads = append(heads, rd.room.Head.Seq)
	}
	genesis := rd.records[0].Link()
	msg := func(s string) obj { return obj{"content_type": "text/plain", "content": s} }
	step("alice", TypeRoomJoin, obj{"role": "speaker"}, genesis)
	step("creator", TypeMessageCreate, msg("first"), genesis)
	step("alice", TypeMessageCreate, msg("second"), genesis)
	second := rd.records[len(rd.records)-1].Link()
	step("creator", TypeRoomUpdate, obj{"guidance": "short"}, second)
	if want := []int64{1, 1, 1, 1, 5}; !slices.Equal(heads, want) {
		t.Fatalf("head after each record %v, want %v", heads, want)
	}
	hostErr, err = rd.read("alice", TypeMessageCreate, msg("late"), second)
	wantCode(t, hostErr, CodeRoomHeadMismatch)
	wantCode(t, err, CodeRoomHeadMismatch)
}

// TestReaderAcceptsHistoriesOfTheOlderRules checks that a reader verifies
// what a host following the 0f87fee drafts accepted, while a host following
// the current rules refuses it.
func TestReaderAcceptsHistoriesOfTheOlderRules(t *testing.T) {
	t.Run("observer_allowed and the older open-role default", func(t *testing.T) {
		rd, hostErr, err := readGenesis(t, obj{"policy": obj{"observer_allowed": true}})
		wantCode(t, hostErr, CodeInvalidEvent)
		if err != nil {
			t.Fatal(err)
		}
		// Public, no open_roles: speakers joined openly under the older rules.
		hostErr, err = rd.read("bob", TypeRoomJoin, obj{"role": "speaker"}, rd.room.Head)
		wantCode(t, hostErr, CodeApprovalRequired)
		wantCode(t, err, "")
		if rd.room.Policy.ObserverAllowed == nil || !*rd.room.Policy.ObserverAllowed {
			t.Fatal("observer_allowed not kept")
		}
	})
	t.Run("open roles in a private room", func(t *testing.T) {
		_, hostErr, err := readGenesis(t, obj{"visibility": "private", "policy": obj{"open_roles": arr{"observer"}}})
		wantCode(t, hostErr, CodeInvalidEvent)
		wantCode(t, err, "")
	})
	t.Run("a type definition with a version", func(t *testing.T) {
		rd, hostErr, err := readGenesis(t, obj{"types": arr{obj{"type": "x.note", "kind": "message", "title": "Note", "version": "1.0", "schema": obj{"type": "object"}}}})
		wantCode(t, hostErr, CodeInvalidEvent)
		if err != nil {
			t.Fatal(err)
		}
		if def, ok := rd.room.Types.Lookup("x.note"); !ok || def.Value()["version"] != nil {
			t.Fatalf("definition %+v", def)
		}
	})
	t.Run("a custom type under message.", func(t *testing.T) {
		_, hostErr, err := readGenesis(t, obj{"types": arr{obj{"type": "message.note", "kind": "message", "title": "Note", "schema": obj{}}}})
		wantCode(t, hostErr, CodeInvalidEvent)
		wantCode(t, err, "")
	})
	t.Run("a topic of U+FEFF", func(t *testing.T) {
		_, hostErr, err := readGenesis(t, obj{"topic": "\ufeff"})
		wantCode(t, hostErr, CodeInvalidEvent)
		wantCode(t, err, "")
	})
	t.Run("a host named before normalization", func(t *testing.T) {
		_, hostErr, err := readGenesis(t, obj{"host": "https://HUB.example:443"})
		wantCode(t, hostErr, CodeInvalidEvent)
		wantCode(t, err, "")
	})
	t.Run("steer.create with a target", func(t *testing.T) {
		rd, hostErr, err := readGenesis(t, obj{"types": arr{obj{"use": "adp:moderation/1.0"}}})
		if hostErr != nil || err != nil {
			t.Fatal(hostErr, err)
		}
		steer := obj{"instruction": "wrap up", "target": agent("alice")}
		hostErr, err = rd.read("creator", "steer.create", steer, rd.room.Head)
		wantCode(t, hostErr, CodePayloadSchemaViolation)
		wantCode(t, err, "")
		// Payloads neither definition accepts stay refused.
		_, err = rd.read("creator", "steer.create", obj{"target": agent("alice")}, rd.room.Head)
		wantCode(t, err, CodePayloadSchemaViolation)
	})
	t.Run("an external pack with a prefixed digest and another id", func(t *testing.T) {
		const url = "https://packs.example/legacy.json"
		doc := triagePack(t) // its pack id is triageURL, not url
		rd, _, err := readGenesis(t, obj{})
		if err != nil {
			t.Fatal(err)
		}
		rd.rules.Packs = StaticPacks{url: doc}
		hostErr := rd.mustRead("creator", TypeTypeDefine, obj{"pack": url, "digest": legacyDigest("sha3-256", doc)}, rd.room.Head)
		wantCode(t, hostErr, CodeInvalidEvent)
		if _, ok := rd.room.Types.Lookup("triage.label"); !ok {
			t.Fatal("the older pooling of pack types was not applied")
		}
	})
}
