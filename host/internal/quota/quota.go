// Package quota keeps one token bucket per key, on golang.org/x/time/rate:
// the hub's per-agent quotas (ADP section 20, profile updates) and the
// connector's local write backpressure, which mirrors them, are both a
// Buckets.
//
// A quota of n per period is a bucket of n units refilling continuously at
// n per period: a burst of n at once, then one every period/n. Over any
// span of one period at most 2n pass, the same bound as n per fixed window,
// but never 2n at once around a window boundary.
package quota

import (
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// sweepEvery is how many takes pass between sweeps of full buckets.
const sweepEvery = 1024

// slack is how early a unit may be taken: the clocks behind quotas count
// milliseconds (ADP created_at, the hub clock), and the float arithmetic of
// the refill may leave a unit due a few nanoseconds after the millisecond
// it is due in.
const slack = time.Millisecond

// Buckets is a set of token buckets, one per key, made on first use. It is
// safe for concurrent use; the zero value is ready.
type Buckets[K comparable] struct {
	mu      sync.Mutex
	buckets map[K]*bucket
	takes   int
}

type bucket struct {
	lim *rate.Limiter
	n   int
	per time.Duration
	// last is the latest time the bucket was used: times before it count
	// as it, so a clock read a little out of order (two requests racing)
	// grants no refill twice.
	last time.Time
}

// Unit is one unit taken from a bucket. Return gives it back.
type Unit[K comparable] struct {
	b        *Buckets[K]
	key      K
	bk       *bucket
	returned atomic.Bool
}

// Return gives the unit back to its bucket (the operation it paid for did
// not happen). A second Return, or Return on nil, does nothing; so does a
// Return after the bucket was drained or swept.
func (u *Unit[K]) Return() {
	if u == nil || u.returned.Swap(true) {
		return
	}
	u.b.mu.Lock()
	defer u.b.mu.Unlock()
	bk := u.bk
	if u.b.buckets[u.key] != bk {
		return
	}
	bk.fill(min(bk.lim.TokensAt(bk.last)+1, float64(bk.n)), bk.last)
}

// limitOf is the refill rate of n per per.
func limitOf(n int, per time.Duration) rate.Limit {
	return rate.Limit(float64(n) / per.Seconds())
}

// fill sets the bucket to hold k units (0 ≤ k ≤ n) at now, for its quota
// bk.n per bk.per. rate.Limiter has no setter for its units, only for its
// rate: a bucket that holds k units at now is an empty bucket that has
// refilled since now − k/rate.
func (bk *bucket) fill(k float64, now time.Time) {
	limit := limitOf(bk.n, bk.per)
	lim := rate.NewLimiter(limit, bk.n)
	lim.AllowN(now.Add(-time.Duration(k/float64(limit)*float64(time.Second))), bk.n)
	bk.lim = lim
}

// Take takes one unit for key at now from a bucket of n units refilling n
// per per. When the bucket is empty it takes nothing and returns how long
// until a unit is available. n ≤ 0 or per ≤ 0 means unlimited: (nil, 0).
// A key whose quota changes keeps its bucket's units (up to the new n),
// refilling at the new rate.
func (b *Buckets[K]) Take(key K, n int, per time.Duration, now time.Time) (*Unit[K], time.Duration) {
	if n <= 0 || per <= 0 {
		return nil, 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sweep(now)
	bk := b.bucket(key, n, per, now)
	if short := 1 - bk.lim.TokensAt(bk.last); short > 0 {
		if wait := time.Duration(short / float64(bk.lim.Limit()) * float64(time.Second)); wait >= slack {
			return nil, wait
		}
	}
	bk.lim.ReserveN(bk.last, 1)
	return &Unit[K]{b: b, key: key, bk: bk}, 0
}

// Drain empties key's bucket at now (the host refused a write with
// rate_limited: its count is ahead of ours). Units taken before it are not
// given back any more.
func (b *Buckets[K]) Drain(key K, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	old, ok := b.buckets[key]
	if !ok {
		return
	}
	if now.Before(old.last) {
		now = old.last
	}
	bk := &bucket{n: old.n, per: old.per, last: now}
	bk.fill(0, now)
	b.buckets[key] = bk
}

// bucket returns key's bucket at the quota n per per, making or adjusting
// it. b.mu is held.
func (b *Buckets[K]) bucket(key K, n int, per time.Duration, now time.Time) *bucket {
	bk, ok := b.buckets[key]
	if !ok {
		if b.buckets == nil {
			b.buckets = map[K]*bucket{}
		}
		bk = &bucket{lim: rate.NewLimiter(limitOf(n, per), n), n: n, per: per, last: now}
		b.buckets[key] = bk
	}
	if now.After(bk.last) {
		bk.last = now
	}
	if bk.n != n || bk.per != per {
		k := min(bk.lim.TokensAt(bk.last), float64(n))
		bk.n, bk.per = n, per
		bk.fill(k, bk.last)
	}
	return bk
}

// sweep drops full buckets now and then, so memory stays bounded by the
// keys used recently: a full bucket is the same as none. b.mu is held.
func (b *Buckets[K]) sweep(now time.Time) {
	b.takes++
	if b.takes < sweepEvery {
		return
	}
	b.takes = 0
	for k, bk := range b.buckets {
		if bk.lim.TokensAt(now) >= float64(bk.n) {
			delete(b.buckets, k)
		}
	}
}

// Len is the number of buckets held (for tests of the sweep).
func (b *Buckets[K]) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.buckets)
}
