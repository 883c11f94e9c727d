package discourse

import (
	"testing"
	"time"
)

// TestFanoutNeverBlocks: a subscriber that stops reading is dropped when its
// buffer is full; the writer's fan-out never waits, and other subscribers
// keep receiving.
func TestFanoutNeverBlocks(t *testing.T) {
	t.Parallel()
	h := newLiveHub()
	slow := &subscriber{roomID: "r", agent: "slow", items: make(chan item, 2), done: make(chan struct{})}
	fast := &subscriber{roomID: "r", agent: "fast", items: make(chan item, 100), done: make(chan struct{})}
	h.add(slow)
	h.add(fast)
	all := func(*subscriber) (bool, string) { return true, "" }
	start := time.Now()
	for i := 0; i < 10; i++ {
		h.fanout("r", item{event: eventRecord, data: []byte{byte(i)}}, all)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("fan-out took %s", d)
	}
	select {
	case <-slow.done:
	default:
		t.Fatal("the slow subscriber was not dropped")
	}
	if slow.reason == "" || len(fast.items) != 10 || h.count("r") != 1 {
		t.Fatalf("reason %q, fast got %d, %d subscribers left", slow.reason, len(fast.items), h.count("r"))
	}
	// Ending the room queues an end marker after what is queued.
	h.endRoom("r", "ended")
	var last item
	for len(fast.items) > 0 {
		last = <-fast.items
	}
	if last.end != "ended" || h.count("r") != 0 {
		t.Fatalf("last item %+v, %d subscribers", last, h.count("r"))
	}
}
