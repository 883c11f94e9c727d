package room_test

import (
	"strings"
	"testing"

	"apconnect/host/proto/adp"
	"apconnect/host/room"
	"apconnect/host/room/roomtest"
)

// A host that copies a signed message.create into records 4, 5 and 6
// (records 1–3 clean) is refused at seq 4, naming seq 3: within one batch,
// and across batches through the caller's envelope index even though the
// first copy is no longer in the batch (or the record window).
func TestProcessRefusesReplayedEnvelope(t *testing.T) {
	t.Parallel()
	c := roomtest.NewChain(t, host, "room1", alice, nil)
	c.Join(t, carol, "speaker")
	m := c.Message(t, carol, "Bob, please review", bob.ID)
	for range 3 {
		c.Accept(t, m.Envelope)
	}
	want := func(t *testing.T, res *room.Result, applied int) {
		t.Helper()
		f := res.Failure
		if f == nil || f.Code != adp.CodeReplayedEnvelope || f.Seq != 4 || !strings.Contains(f.Message, "seq 3 and seq 4") {
			t.Fatalf("failure %+v, want replayed_envelope at seq 4 naming seq 3", f)
		}
		if len(res.Applied) != applied || res.State.Room.Last.Seq != 3 {
			t.Fatalf("applied %d up to seq %d", len(res.Applied), res.State.Room.Last.Seq)
		}
	}
	p := proc(bob.ID)

	t.Run("one batch", func(t *testing.T) {
		want(t, p.Process(nil, c.Records, room.Options{}), 3)
	})
	t.Run("a later batch, through the index", func(t *testing.T) {
		first := mustProcess(t, p, nil, c.Records[:3])
		idx := room.EnvelopeSeqs{}
		idx.Add(first.Applied)
		for _, batch := range [][]*adp.Record{c.Records[3:], c.Records[3:4]} {
			want(t, p.ProcessPrepared(first.State, p.Prepare(batch), room.Options{Envelopes: idx.Lookup}), 0)
		}
		// Without the index the copy passes every other check: the
		// message did not move the head.
		if res := p.Process(first.State, c.Records[3:4], room.Options{}); res.Failure != nil {
			t.Fatalf("without the index: %+v", res.Failure)
		}
	})
	t.Run("the index of a later record is not a replay", func(t *testing.T) {
		// An index entry at the record's own seq (the same record seen
		// again) or after it does not refuse it.
		first := mustProcess(t, p, nil, c.Records[:2])
		idx := room.EnvelopeSeqs{m.EnvelopeHash(): 3}
		res := p.Process(first.State, c.Records[2:3], room.Options{Envelopes: idx.Lookup})
		if res.Failure != nil || len(res.Applied) != 1 {
			t.Fatalf("%+v", res.Failure)
		}
	})
	t.Run("envelope ids of a prepared batch", func(t *testing.T) {
		ids := p.Prepare(c.Records).EnvelopeIDs()
		if len(ids) != 6 || ids[2] != m.EnvelopeHash() || ids[5] != m.EnvelopeHash() || ids[0] != c.Records[0].EnvelopeHash() {
			t.Fatalf("ids %v", ids)
		}
	})
}
