package discourse_test

import (
	"net/http"
	"testing"
	"time"

	"apconnect/host/hub/hubtest"
	"apconnect/host/identity"
	"apconnect/host/proto/adp"
)

// The hub never records one signed envelope twice: an exact resubmission
// is answered with the original record whenever it comes (inside the live
// window, after the nonce cache forgot the actor, after the window), and
// the room does not grow. A later envelope with a lower nonce, once the
// nonce cache has expired, is a new envelope and is accepted: the reader
// must not refuse a lower nonce by itself, and the hub's history verifies.
func TestHubNeverRecordsAnEnvelopeTwice(t *testing.T) {
	t.Parallel()
	f := newFx(t)
	a, b := hubtest.NewAgent(0x51), hubtest.NewAgent(0x52)
	roomID := f.create(a, nil)
	f.join(b, roomID, adp.RoleSpeaker)
	head := f.head(roomID)
	body := b.ADPEvent(t, f.clock.Now(), adp.TypeMessageCreate, roomID, &head, obj{"content_type": "text/plain", "content": "once"})
	first := f.h.Post("/v1/rooms/"+roomID, body)
	wantStatus(t, first, http.StatusOK)
	count := len(f.records(roomID, nil))
	for _, step := range []struct {
		name    string
		advance time.Duration
	}{
		{"at once", 0},
		{"inside the window", 4 * time.Minute},
		{"after the nonce cache expired", 7 * time.Minute},
		{"long after the window", 24 * time.Hour},
	} {
		f.clock.Advance(step.advance)
		again := f.h.Post("/v1/rooms/"+roomID, body)
		if again.Status != http.StatusOK || string(again.Body) != string(first.Body) {
			t.Fatalf("%s: resubmission answered %d %s, want the original record %s", step.name, again.Status, again.Body, first.Body)
		}
		if n := len(f.records(roomID, nil)); n != count {
			t.Fatalf("%s: the room grew from %d to %d records", step.name, count, n)
		}
	}
	// The room is over by now; a fresh one for the lower nonce.
	roomID = f.create(a, nil)
	f.join(b, roomID, adp.RoleSpeaker)
	high := f.must(b, roomID, adp.TypeMessageCreate, obj{"content_type": "text/plain", "content": "high nonce"})
	f.clock.Advance(11 * time.Minute) // past the nonce cache's two windows
	head = f.head(roomID)
	seq, hash := head.Seq, head.Hash
	low := identity.Event{Protocol: adp.Protocol, Type: adp.TypeMessageCreate,
		CreatedAt: f.clock.Now().UnixMilli(), Nonce: high.Envelope.Event.Nonce - 1000, Payload: obj{"content_type": "text/plain", "content": "low nonce"}, Fields: adp.Fields{RoomID: roomID, Base: &adp.Link{Seq: seq, Hash: hash}}.Map()}
	wantStatus(t, f.h.Post("/v1/rooms/"+roomID, b.SignJSON(t, low)), http.StatusOK)
	recs := f.records(roomID, nil)
	if rep := adp.Replay(nil, recs); !rep.OK() {
		t.Fatalf("a history with a lower nonce after the cache expired does not verify: %+v", rep.Problems)
	}
}
