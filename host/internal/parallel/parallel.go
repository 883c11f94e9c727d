// Package parallel runs the independent iterations of a loop on several
// goroutines: the one worker pool of the hash and signature checks that
// verification spreads over every core (host/proto/adp, host/room).
package parallel

import (
	"sync"
	"sync/atomic"
)

// For calls fn(0) … fn(n-1) on up to workers goroutines, each taking the
// next index until none is left, and returns once every call has returned.
// With workers <= 1 (or n <= 1) it calls them in order on the calling
// goroutine. fn must be safe to call concurrently for different indexes.
func For(n, workers int, fn func(i int)) {
	workers = min(workers, n)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(i)
			}
		}()
	}
	wg.Wait()
}
