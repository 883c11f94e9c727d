package discourse_test

import (
	"net/http"
	"sync"
	"testing"

	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	"apconnect/host/proto/adp"
)

// race submits one body per racer at the same moment and returns the
// responses.
func (f *fx) race(id string, bodies [][]byte) []*hubtest.Response {
	resps := make([]*hubtest.Response, len(bodies))
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range bodies {
		done.Add(1)
		go func(i int) {
			defer done.Done()
			start.Wait()
			resps[i] = f.h.Post("/v1/rooms/"+id, bodies[i])
		}(i)
	}
	start.Done()
	done.Wait()
	return resps
}

// TestHeadRace: 8 agents submit head-checked writes on the same head at
// once, round after round. Control writes move the head, so exactly one is
// accepted per head and every loser gets room_head_mismatch with the ADP
// 5.1 data naming the winner as the current head. Messages do not move it
// (SDK 0.12.6: messages never conflict), so every concurrent message on
// the head is accepted. The chain has no gaps.
func TestHeadRace(t *testing.T) {
	t.Parallel()
	f := newFx(t, withLimits(func(l *hub.Limits) { l.Discourse.Rules.MessageRate, l.Discourse.Rules.ControlRate = -1, -1 }))
	as := agents(150, 9)
	creator, racers := as[0], as[1:]
	id := f.create(creator, obj{"types": arr{obj{"type": "x.plan", "kind": "control", "title": "Plan",
		"roles": arr{"moderator", "speaker"}, "schema": obj{"type": "object"}}}})
	for _, a := range racers {
		f.join(a, id, adp.RoleSpeaker)
	}
	const rounds = 12
	for round := 0; round < rounds; round++ {
		head, last := f.h.RoomHead(t, id, creator)
		bodies := make([][]byte, len(racers))
		for i, a := range racers {
			bodies[i] = a.ADPEvent(t, f.clock.Now(), "x.plan", id, &head, obj{"step": round})
		}
		resps := f.race(id, bodies)
		var winner *adp.Record
		for _, r := range resps {
			if r.Status == http.StatusOK {
				if winner != nil {
					t.Fatalf("round %d: two control writes accepted on head %d", round, head.Seq)
				}
				winner, _ = adp.ParseRecord(r.Body)
			}
		}
		if winner == nil {
			t.Fatalf("round %d: no write accepted", round)
		}
		if winner.Seq != last.Seq+1 || winner.PreHash != last.Hash {
			t.Fatalf("round %d: winner at %d after record %d", round, winner.Seq, last.Seq)
		}
		for _, r := range resps {
			if r.Status == http.StatusOK {
				continue
			}
			data := wantError(t, r, http.StatusConflict, adp.CodeRoomHeadMismatch)
			want := obj{"base_seq": head.Seq, "base_hash": head.Hash, "current_seq": winner.Seq, "current_hash": winner.Hash,
				"events_url": f.h.Origin() + "/v1/rooms/" + id + "/events?after_seq=" + itoa(head.Seq)}
			if !jsonEq(t, data, want) {
				t.Fatalf("round %d: mismatch data %v, want %v", round, data, want)
			}
		}
		if h, _ := f.h.RoomHead(t, id, creator); h != winner.Link() {
			t.Fatalf("round %d: head %+v, want the winner %d", round, h, winner.Seq)
		}
	}
	// Concurrent messages on one head are all accepted, in some order, and
	// leave the head where it was.
	head, last := f.h.RoomHead(t, id, creator)
	bodies := make([][]byte, len(racers))
	for i, a := range racers {
		bodies[i] = a.ADPEvent(t, f.clock.Now(), adp.TypeMessageCreate, id, &head, obj{"content_type": "text/plain", "content": "race"})
	}
	seqs := map[int64]bool{}
	for i, r := range f.race(id, bodies) {
		if r.Status != http.StatusOK {
			t.Fatalf("message %d on the head: %d %s", i, r.Status, r.Body)
		}
		rec, _ := adp.ParseRecord(r.Body)
		seqs[rec.Seq] = true
	}
	for s := last.Seq + 1; s <= last.Seq+int64(len(racers)); s++ {
		if !seqs[s] {
			t.Fatalf("messages took seqs %v, want %d to %d", seqs, last.Seq+1, last.Seq+int64(len(racers)))
		}
	}
	if h, _ := f.h.RoomHead(t, id, creator); h != head {
		t.Fatalf("messages moved the head to %+v", h)
	}
	recs := f.records(id, nil)
	if want := 1 + 2*len(racers) + rounds; len(recs) != want {
		t.Fatalf("%d records, want %d", len(recs), want)
	}
	if _, err := adp.VerifyChain(id, adp.Link{}, recs); err != nil {
		t.Fatalf("chain: %v", err)
	}
}
