package quota

import (
	"strconv"
	"sync"
	"testing"
	"time"
)

var t0 = time.UnixMilli(1_800_000_000_000)

func at(d time.Duration) time.Time { return t0.Add(d) }

// mustTake takes a unit or fails.
func mustTake(t *testing.T, b *Buckets[string], key string, n int, now time.Time) *Unit[string] {
	t.Helper()
	u, wait := b.Take(key, n, time.Minute, now)
	if u == nil || wait != 0 {
		t.Fatalf("take %s at %s: refused, wait %s", key, now.Sub(t0), wait)
	}
	return u
}

// mustWait asserts the bucket is empty and the wait is want.
func mustWait(t *testing.T, b *Buckets[string], key string, n int, now time.Time, want time.Duration) {
	t.Helper()
	u, wait := b.Take(key, n, time.Minute, now)
	if u != nil || wait.Round(time.Millisecond) != want {
		t.Fatalf("take %s at %s: unit %v, wait %s, want wait %s", key, now.Sub(t0), u != nil, wait, want)
	}
}

// A bucket of n lets n through at once, then one every period/n; keys are
// independent.
func TestBurstThenRefill(t *testing.T) {
	var b Buckets[string]
	for range 3 {
		mustTake(t, &b, "k", 3, t0)
	}
	mustWait(t, &b, "k", 3, t0, 20*time.Second)
	mustWait(t, &b, "k", 3, at(5*time.Second), 15*time.Second)
	mustTake(t, &b, "other", 3, t0)
	mustTake(t, &b, "k", 3, at(20*time.Second))
	mustWait(t, &b, "k", 3, at(20*time.Second), 20*time.Second)
	// A refused take consumed nothing: the next unit is still due at 40 s.
	mustTake(t, &b, "k", 3, at(40*time.Second))
	// After a full period the bucket is full again, and no fuller.
	for range 3 {
		mustTake(t, &b, "k", 3, at(10*time.Minute))
	}
	mustWait(t, &b, "k", 3, at(10*time.Minute), 20*time.Second)
}

// Each refill step gives exactly one unit, despite the float arithmetic: a
// unit due at a millisecond is available at it, and not twice.
func TestRefillIsExact(t *testing.T) {
	var b Buckets[string]
	for _, n := range []int{1, 3, 5, 7, 10, 60, 600} {
		key := strconv.Itoa(n)
		for range n {
			mustTake(t, &b, key, n, t0)
		}
		step := time.Minute / time.Duration(n)
		for i := 1; i <= 3*n; i++ {
			now := at(time.Duration(i) * step)
			mustTake(t, &b, key, n, now)
			if u, _ := b.Take(key, n, time.Minute, now); u != nil {
				t.Fatalf("n=%d: step %d let two through", n, i)
			}
		}
	}
}

// Return gives exactly one unit back, once, even after others took from
// the bucket meanwhile.
func TestReturn(t *testing.T) {
	var b Buckets[string]
	u1 := mustTake(t, &b, "k", 2, t0)
	mustTake(t, &b, "k", 2, at(time.Second))
	mustWait(t, &b, "k", 2, at(15*time.Second), 15*time.Second)
	u1.Return()
	u1.Return() // a second return gives nothing more back
	var nilUnit *Unit[string]
	nilUnit.Return()
	mustTake(t, &b, "k", 2, at(15*time.Second))
	mustWait(t, &b, "k", 2, at(15*time.Second), 15*time.Second)
	// The unit given back did not disturb the refill: the next is due at
	// 30 s as if u1 had never been taken.
	mustTake(t, &b, "k", 2, at(30*time.Second))
}

// Drain empties a bucket; units taken before it are not given back.
func TestDrain(t *testing.T) {
	var b Buckets[string]
	b.Drain("none", t0) // no bucket: nothing to do
	u := mustTake(t, &b, "k", 4, t0)
	b.Drain("k", at(time.Second))
	mustWait(t, &b, "k", 4, at(time.Second), 15*time.Second)
	u.Return()
	mustWait(t, &b, "k", 4, at(time.Second), 15*time.Second)
	mustTake(t, &b, "k", 4, at(16*time.Second))
}

// A changed quota keeps the bucket's use and refills at the new rate.
func TestQuotaChange(t *testing.T) {
	var b Buckets[string]
	mustTake(t, &b, "k", 2, t0)
	mustTake(t, &b, "k", 2, t0)
	mustWait(t, &b, "k", 4, t0, 15*time.Second)
	mustTake(t, &b, "k", 4, at(15*time.Second))
	if u, wait := b.Take("k", 0, time.Minute, t0); u != nil || wait != 0 {
		t.Fatal("a zero quota is not unlimited")
	}
	if u, wait := b.Take("k", 3, 0, t0); u != nil || wait != 0 {
		t.Fatal("a zero period is not unlimited")
	}
}

// A clock read out of order counts as the latest time seen: no refill is
// granted twice.
func TestClockOutOfOrder(t *testing.T) {
	var b Buckets[string]
	mustTake(t, &b, "k", 1, at(time.Minute))
	mustWait(t, &b, "k", 1, t0, time.Minute)
	mustWait(t, &b, "k", 1, at(90*time.Second), 30*time.Second)
}

// Full buckets are swept, so memory follows the keys used recently.
func TestSweep(t *testing.T) {
	var b Buckets[int]
	for i := range sweepEvery - 1 {
		b.Take(i, 5, time.Minute, t0)
	}
	if b.Len() != sweepEvery-1 {
		t.Fatalf("%d buckets", b.Len())
	}
	b.Take(-1, 5, time.Minute, at(time.Minute)) // the sweep runs first
	if b.Len() != 1 {
		t.Fatalf("%d buckets after the sweep, want 1", b.Len())
	}
}

// Concurrent takes never let more than the bucket through.
func TestConcurrentTakes(t *testing.T) {
	var b Buckets[string]
	var mu sync.Mutex
	got := 0
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			if u, _ := b.Take("k", 10, time.Hour, t0); u != nil {
				mu.Lock()
				got++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if got != 10 {
		t.Fatalf("%d takes passed, want 10", got)
	}
}
