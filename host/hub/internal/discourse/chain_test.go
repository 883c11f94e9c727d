package discourse_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"apconnect/host/hub/hubtest"
	"apconnect/host/proto/adp"
)

// TestChainEndToEnd drives a room through every freshness class and checks
// after each write that the room resource's seq/head follow ADP 5.1 (the
// head moves for genesis, head-bound and contract records, not for signal
// records), then that the records fetched over HTTP verify with
// adp.VerifyChain and replay (adp.Replay) to the state the hub serves.
func TestChainEndToEnd(t *testing.T) {
	t.Parallel()
	f := newFx(t)
	as := agents(110, 4)
	creator, sp, obs := as[0], as[1], as[2]
	id := f.create(creator, obj{"types": arr{obj{"use": "adp:reactions/1.0"}, obj{"use": "adp:moderation/1.0"}}})
	wantHead := f.last(id)
	steps := []struct {
		by      *hubtest.Agent
		typ     string
		payload obj
		class   adp.Class
	}{
		{sp, adp.TypeRoomJoin, obj{"role": "speaker"}, adp.ClassSignal},
		{obs, adp.TypeRoomJoin, obj{"role": "observer", "perspective": "watcher"}, adp.ClassSignal},
		{sp, adp.TypeMessageCreate, obj{"content_type": "text/plain", "content": "one"}, adp.ClassMessage},
		{obs, "reaction.create", obj{"event_id": "", "reaction": "agree"}, adp.ClassSignal},
		{creator, adp.TypeRoomUpdate, obj{"guidance": "be brief"}, adp.ClassContract},
		{sp, "steer.create", obj{"instruction": "focus"}, adp.ClassSignal},
		{creator, "turn.update", obj{"turn_id": 1, "speaker": sp.ID}, adp.ClassControl},
		{creator, adp.TypeTypeDefine, obj{"type": "x.note", "kind": "message", "title": "Note", "schema": obj{"type": "object"}}, adp.ClassContract},
		{sp, "x.note", obj{"n": 1}, adp.ClassMessage},
		{creator, adp.TypeRoleUpdate, obj{"member": obs.ID, "role": "speaker"}, adp.ClassSignal},
		{obs, adp.TypeRoomLeave, obj{}, adp.ClassSignal},
		{creator, adp.TypeMessageCreate, obj{"content_type": "text/markdown", "content": "# two"}, adp.ClassMessage},
		{sp, "reaction.create", obj{"event_id": "", "reaction": "important"}, adp.ClassSignal},
	}
	var accepted []json.RawMessage
	for i, s := range steps {
		if s.typ == "reaction.create" {
			s.payload["event_id"] = f.records(id, nil)[0].EnvelopeHash()
		}
		rec := f.must(s.by, id, s.typ, s.payload)
		r := f.h.Get(t, "/v1/rooms/"+id, nil)
		var res struct {
			Seq        int64    `json:"seq"`
			PreHash    *string  `json:"pre_hash"`
			Hash       string   `json:"hash"`
			AcceptedAt int64    `json:"accepted_at"`
			Head       adp.Link `json:"head"`
		}
		r.Decode(t, &res)
		if s.class.AdvancesHead() {
			wantHead = rec.Link()
		}
		if res.Seq != rec.Seq || res.Hash != rec.Hash || res.PreHash == nil || *res.PreHash != rec.PreHash ||
			res.AcceptedAt != rec.AcceptedAt || res.Head != wantHead {
			t.Fatalf("step %d (%s, %s): resource seq %d head %v, record %d, want head %v", i, s.typ, s.class, res.Seq, res.Head, rec.Seq, wantHead)
		}
		b, _ := json.Marshal(rec)
		accepted = append(accepted, b)
	}
	if wantHead.Seq == f.last(id).Seq {
		t.Fatal("the fixture should end on trailing signal records (head below seq)")
	}

	// Every page of history has the kernel shape; pages chain.
	r := f.h.Get(t, "/v1/rooms/"+id+"/events?after_seq=3&limit=4", nil)
	wantStatus(t, r, http.StatusOK)
	wantShape(t, "roomEventsResponse", r.Body)
	var page struct {
		Result []json.RawMessage `json:"result"`
		Next   string            `json:"next_cursor"`
	}
	r.Decode(t, &page)
	if len(page.Result) != 4 || page.Next == "" {
		t.Fatalf("page after 3: %d records, cursor %q", len(page.Result), page.Next)
	}
	first, _ := adp.ParseRecord(page.Result[0])
	if first.Seq != 4 {
		t.Fatalf("after_seq=3 starts at %d", first.Seq)
	}
	last := f.h.Get(t, "/v1/rooms/"+id+"/events?after_seq=14", nil)
	var tail struct {
		Result []json.RawMessage `json:"result"`
		Next   *string           `json:"next_cursor"`
	}
	last.Decode(t, &tail)
	if len(tail.Result) != 0 || tail.Next != nil {
		t.Fatalf("after the last record: %s", last.Body)
	}
	for _, bad := range []string{"after_seq=-1", "after_seq=x", "limit=0", "cursor=zz", "since=3"} {
		wantError(t, f.h.Get(t, "/v1/rooms/"+id+"/events?"+bad, nil), 400, "invalid_request")
	}

	recs := f.records(id, nil)
	if len(recs) != len(steps)+1 {
		t.Fatalf("%d records", len(recs))
	}
	for i, raw := range accepted {
		b, _ := json.Marshal(recs[i+1])
		if !jsonEq(t, json.RawMessage(b), raw) {
			t.Fatalf("record %d differs from its write response", i+2)
		}
	}
	res, err := adp.VerifyChain(id, adp.Link{}, recs)
	if err != nil {
		t.Fatalf("VerifyChain: %v", err)
	}
	_, lastLink := f.h.RoomHead(t, id, nil)
	if res.Last != lastLink {
		t.Fatalf("chain ends at %v, the room at %v", res.Last, lastLink)
	}
	rep := adp.Replay(&adp.Rules{Limits: adp.DefaultLimits(), HostOrigin: f.h.Origin()}, recs)
	if !rep.OK() {
		t.Fatalf("replay problems: %+v", rep.Problems)
	}
	if rep.Room.Head != wantHead || rep.LastSeq != lastLink.Seq {
		t.Fatalf("replayed head %v, want %v", rep.Room.Head, wantHead)
	}
	served := decodeJSON(t, f.h.Get(t, "/v1/rooms/"+id, nil).Body)
	if !jsonEq(t, rep.Room.Resource(f.clock.Now().UnixMilli(), f.h.Origin()+"/v1/rooms/"+id), served) {
		t.Fatalf("replayed resource differs from the served one")
	}
}
