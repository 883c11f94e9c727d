package adp

import (
	"fmt"
	"strings"
	"testing"
)

// replayAt returns recs (a clean history) followed by copies records that
// carry the envelope of the record at seq src again, each accepted a second
// after the one before, chained and hashed correctly, optionally redacted.
func replayAt(t *testing.T, recs []*Record, src int64, copies int, redact bool) []*Record {
	t.Helper()
	out := append([]*Record(nil), recs...)
	env := recs[src-1].Envelope
	for range copies {
		last := out[len(out)-1]
		rec, err := NewRecord(last.RoomID, last.Link(), last.AcceptedAt+1000, env)
		if err != nil {
			t.Fatal(err)
		}
		if redact {
			if rec, err = rec.Redact(); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, rec)
	}
	return out
}

// readAll verifies recs as a connector does (VerifyGenesis, then
// VerifyRecord and Apply) with an envelope index over every earlier record
// and a record-hash window of three; it returns the first error.
func readAll(t *testing.T, rules *Rules, recs []*Record) error {
	t.Helper()
	room, err := VerifyGenesis(rules, recs[0])
	if err != nil {
		return err
	}
	index := map[string]int64{recs[0].EnvelopeHash(): 1}
	window := map[int64]string{1: recs[0].Hash}
	opt := CheckOptions{
		Records:             RecordHashFunc(func(seq int64) (string, bool) { h, ok := window[seq]; return h, ok }),
		TrustUnknownAnchors: true,
		Envelopes:           EnvelopeSeqFunc(func(id string) (int64, bool) { s, ok := index[id]; return s, ok }),
	}
	for _, rec := range recs[1:] {
		if err := room.VerifyRecord(rules, rec, opt); err != nil {
			return err
		}
		if err := room.Apply(rules, rec); err != nil {
			return err
		}
		index[rec.EnvelopeHash()] = rec.Seq
		window[rec.Seq] = rec.Hash
		delete(window, rec.Seq-3)
	}
	return nil
}

// A history in which two records carry one signed envelope is refused by
// the reader and by archive verification, naming both seqs, whatever the
// envelope's type and however far apart the copies are; redaction of
// either copy does not hide it. A later envelope with a lower nonce is not
// a replay.
func TestReplayedEnvelopeRefused(t *testing.T) {
	t.Parallel()
	f := activeRoom(t, nil)
	msg := f.must("alice", TypeMessageCreate, obj{"content_type": "text/plain", "content": "hello"})
	f.must("alice", TypeMessageCreate, obj{"content_type": "text/plain", "content": "second"})
	for i := range 5 {
		f.must("alice", TypeMessageCreate, obj{"content_type": "text/plain", "content": fmt.Sprintf("filler %d", i)})
	}
	clean := f.records
	n := int64(len(clean))
	redactedOriginal := append([]*Record(nil), clean...)
	red, err := clean[msg.Seq-1].Redact()
	if err != nil {
		t.Fatal(err)
	}
	redactedOriginal[msg.Seq-1] = red
	rules := &Rules{Limits: VerifierLimits(), HostOrigin: testHost}

	cases := []struct {
		name        string
		recs        []*Record
		first, copy int64 // 0: no replay
	}{
		{"clean", clean, 0, 0},
		{"the last record replayed three times", replayAt(t, clean, n, 3, false), n, n + 1},
		{"a message replayed long after", replayAt(t, clean, msg.Seq, 1, false), msg.Seq, n + 1},
		{"the copy redacted", replayAt(t, clean, msg.Seq, 1, true), msg.Seq, n + 1},
		{"the original redacted", redactedOriginal, 0, 0},
		{"the original redacted, then replayed", append(redactedOriginal, replayAt(t, clean, msg.Seq, 1, false)[n:]...), msg.Seq, n + 1},
		{"a join replayed", replayAt(t, clean, 2, 1, false), 2, n + 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := readAll(t, rules, tc.recs)
			rep := Replay(rules, tc.recs)
			if tc.first == 0 {
				if err != nil || !rep.OK() {
					t.Fatalf("a clean history refused: %v %+v", err, rep.Problems)
				}
				return
			}
			wantCode(t, err, CodeReplayedEnvelope)
			e := AsError(err)
			if e.Data["seq"] != tc.copy || e.Data["first_seq"] != tc.first ||
				!strings.Contains(e.Message, fmt.Sprintf("seq %d and seq %d", tc.first, tc.copy)) {
				t.Fatalf("error does not name both seqs %d and %d: %v %v", tc.first, tc.copy, e.Message, e.Data)
			}
			var found bool
			for _, p := range rep.Problems {
				if p.Code == CodeReplayedEnvelope && p.Seq == tc.copy && strings.Contains(p.Message, fmt.Sprintf("seq %d and seq %d", tc.first, tc.copy)) {
					found = true
				}
			}
			if !found {
				t.Fatalf("archive verification did not report the replay at seq %d: %+v", tc.copy, rep.Problems)
			}
		})
	}

	t.Run("a lower nonce is not a replay", func(t *testing.T) {
		g := activeRoom(t, nil)
		g.must("alice", TypeMessageCreate, obj{"content_type": "text/plain", "content": "high"})
		g.nonce -= 100 // a nonce cache that expired: the host accepted a lower nonce
		g.must("alice", TypeMessageCreate, obj{"content_type": "text/plain", "content": "low"})
		last := g.records[len(g.records)-1]
		if prev := g.records[len(g.records)-2]; last.Envelope.Event.Nonce >= prev.Envelope.Event.Nonce {
			t.Fatalf("fixture: nonce %d after %d", last.Envelope.Event.Nonce, prev.Envelope.Event.Nonce)
		}
		if err := readAll(t, rules, g.records); err != nil {
			t.Fatal(err)
		}
		if rep := Replay(rules, g.records); !rep.OK() {
			t.Fatalf("%+v", rep.Problems)
		}
	})
}

func TestCheckReplayed(t *testing.T) {
	t.Parallel()
	f := activeRoom(t, nil)
	rec := f.must("alice", TypeMessageCreate, obj{"content_type": "text/plain", "content": "x"})
	id := rec.EnvelopeHash()
	for _, tc := range []struct {
		name string
		look EnvelopeLookup
		code string
	}{
		{"no index", nil, ""},
		{"unknown", EnvelopeSeqFunc(func(string) (int64, bool) { return 0, false }), ""},
		{"itself", EnvelopeSeqFunc(func(string) (int64, bool) { return rec.Seq, true }), ""},
		{"a later record (a stale index)", EnvelopeSeqFunc(func(string) (int64, bool) { return rec.Seq + 5, true }), ""},
		{"an earlier record", EnvelopeSeqFunc(func(h string) (int64, bool) { return 1, h == id }), CodeReplayedEnvelope},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckReplayed(rec, tc.look)
			if ErrorCode(err) != tc.code {
				t.Fatalf("got %v, want %q", err, tc.code)
			}
			if tc.code != "" && AsError(err).Pointer != "/envelope/hash" {
				t.Fatalf("pointer %q", AsError(err).Pointer)
			}
		})
	}
	// Check, which judges live writes, ignores the index: a host answers
	// an exact resubmission before any room rule.
	opt := f.options()
	opt.Envelopes = EnvelopeSeqFunc(func(string) (int64, bool) { return 1, true })
	if err := f.room.Check(f.rules, f.event("alice", TypeMessageCreate, obj{"content_type": "text/plain", "content": "y"}), opt); err != nil {
		t.Fatalf("Check used the reader's index: %v", err)
	}
}
