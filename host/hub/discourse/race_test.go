package discourse_test

import (
	"net/http"
	"sync"
	"testing"

	"apconnect/host/adp"
	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
)

// TestHeadRace: 8 agents submit head-bound writes on the same head at once,
// round after round. Exactly one is accepted per head; every loser gets
// room_head_mismatch with the ADP 5.1 data naming the winner as the current
// head; the chain has no gaps.
func TestHeadRace(t *testing.T) {
	f := newFx(t, withLimits(func(l *hub.Limits) { l.Discourse.Rules.MessageRate = -1 }))
	as := agents(150, 9)
	creator, racers := as[0], as[1:]
	id := f.create(creator, nil)
	for _, a := range racers {
		f.join(a, id, adp.RoleSpeaker)
	}
	const rounds = 12
	for round := 0; round < rounds; round++ {
		head, last := f.h.RoomHead(t, id, creator)
		bodies := make([][]byte, len(racers))
		for i, a := range racers {
			bodies[i] = a.ADPEvent(t, f.clock.Now(), adp.TypeMessageCreate, id, &head,
				obj{"content_type": "text/plain", "content": "race"})
		}
		resps := make([]*hubtest.Response, len(racers))
		var start, done sync.WaitGroup
		start.Add(1)
		for i := range racers {
			done.Add(1)
			go func(i int) {
				defer done.Done()
				start.Wait()
				resps[i] = f.h.Post("/v1/rooms/"+id, bodies[i])
			}(i)
		}
		start.Done()
		done.Wait()
		var winner *adp.Record
		for _, r := range resps {
			if r.Status == http.StatusOK {
				if winner != nil {
					t.Fatalf("round %d: two writes accepted on head %d", round, head.Seq)
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
	}
	recs := f.records(id, nil)
	if want := 1 + len(racers) + rounds; len(recs) != want {
		t.Fatalf("%d records, want %d", len(recs), want)
	}
	if _, err := adp.VerifyChain(id, adp.Link{}, recs); err != nil {
		t.Fatalf("chain: %v", err)
	}
}
