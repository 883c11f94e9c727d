package discourse_test

import (
	"testing"
	"time"

	"apconnect/host/hub/hubtest"
	"apconnect/host/proto/adp"
)

// TestLifecycleByTime: ADP 7 — a scheduled room becomes active at
// start_time and ends at end_time from the clock alone: no record marks
// either transition, and each state's write rules apply.
func TestLifecycleByTime(t *testing.T) {
	t.Parallel()
	f := newFx(t)
	creator, sp := hubtest.NewAgent(250), hubtest.NewAgent(251)
	now := f.clock.Now().UnixMilli()
	id := f.create(creator, obj{"start_time": now + 10*60_000, "end_time": now + 30*60_000})
	status := func() string { return decodeJSON(t, f.h.Get(t, "/v1/rooms/"+id, nil).Body)["status"].(string) }
	if status() != "scheduled" {
		t.Fatalf("status %s", status())
	}
	f.join(sp, id, adp.RoleSpeaker) // membership writes are allowed while scheduled
	wantError(t, f.message(sp, id, "early"), 409, adp.CodeRoomNotActive)
	records := len(f.records(id, nil))

	f.clock.Advance(10 * time.Minute) // exactly start_time
	if status() != "active" {
		t.Fatalf("at start_time: %s", status())
	}
	if n := len(f.records(id, nil)); n != records {
		t.Fatalf("activation wrote %d records", n-records)
	}
	wantStatus(t, f.message(sp, id, "now"), 200)
	wantError(t, f.send(creator, id, adp.TypeRoomCancel, obj{}), 409, adp.CodeRoomNotActive)

	f.clock.Advance(20 * time.Minute) // exactly end_time
	if status() != "ended" {
		t.Fatalf("at end_time: %s", status())
	}
	if n := len(f.records(id, nil)); n != records+1 {
		t.Fatalf("ending wrote records: %d", n-records-1)
	}
	for _, typ := range []string{adp.TypeRoomUpdate, adp.TypeRoomClose, adp.TypeRoomLeave} {
		wantError(t, f.send(creator, id, typ, obj{"topic": "x"}), 409, adp.CodeRoomNotActive)
	}
	wantError(t, f.joinRequest(hubtest.NewAgent(252), id, obj{"role": "speaker"}), 409, adp.CodeRoomNotActive)
}
