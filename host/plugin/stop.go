package plugin

import (
	"context"
	"sync"
)

// Stopping a guest.
//
// A guest's machine code runs until it returns: the Go runtime cannot
// preempt it, and wazero's runtime does not look at the call's context
// (the plugin's runtimes do not use WithCloseOnContextDone, which cost a
// call into Go at every loop iteration of a guest). The module as
// wasmguard rewrote it has checkpoints instead, at every function entry
// and loop iteration: the guest returns to Go at least every
// wasmguard.YieldEvery of them (so that the scheduler and the garbage
// collector's stop-the-world are never held up for long), and traps at the
// next checkpoint once its stop flag is set and its fuel emptied. A call,
// and an instance's initialisation, set them when their context ends:
// the deadline passed, the caller gave up, or the plugin was closed.

// stopWhenDone sets the instance's stop flag when ctx ends, until the
// returned release is called. release waits for a stop in progress and
// clears the flag again, so that an instance whose call finished just as
// its context ended can serve the next one; an instance that was stopped
// mid-call trapped and is discarded.
func (i *instance) stopWhenDone(ctx context.Context) (release func()) {
	var mu sync.Mutex
	released, fired := false, false
	cancel := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if released {
			return
		}
		fired = true
		i.stop.Set(1)
		i.fuel.Set(0)
	})
	return func() {
		cancel()
		mu.Lock()
		defer mu.Unlock()
		released = true
		if fired {
			i.stop.Set(0)
		}
	}
}
