package parallel

import (
	"sync/atomic"
	"testing"
)

func TestForCallsEveryIndexOnce(t *testing.T) {
	for _, tc := range []struct{ n, workers int }{{0, 4}, {1, 4}, {7, 1}, {7, 0}, {100, 3}, {3, 8}} {
		calls := make([]atomic.Int32, tc.n)
		For(tc.n, tc.workers, func(i int) { calls[i].Add(1) })
		for i := range calls {
			if c := calls[i].Load(); c != 1 {
				t.Fatalf("n=%d workers=%d: index %d called %d times", tc.n, tc.workers, i, c)
			}
		}
	}
}

func TestForRunsInlineWithOneWorker(t *testing.T) {
	var order []int
	For(5, 1, func(i int) { order = append(order, i) }) // no race: one goroutine
	for i, v := range order {
		if v != i {
			t.Fatalf("order %v", order)
		}
	}
	if len(order) != 5 {
		t.Fatalf("order %v", order)
	}
}
