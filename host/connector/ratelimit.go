package connector

import (
	"math"
	"sync"
	"time"
)

// rateLimiter is the local write backpressure: a token bucket per room and
// quota class mirroring the host's per-agent quotas (ADP 20), so a runaway
// agent is stopped before it signs, and burns no nonce, instead of being
// refused by the host.
type rateLimiter struct {
	mu      sync.Mutex
	buckets map[bucketKey]*bucket
}

type bucketKey struct {
	room  int64
	class string
}

type bucket struct {
	tokens float64
	last   time.Time
	rate   int // per minute
}

func newRateLimiter() *rateLimiter { return &rateLimiter{buckets: map[bucketKey]*bucket{}} }

// take takes one token for (room, class) at rate events per minute (a
// bucket of that capacity refilling continuously). It returns 0 when the
// write may go ahead, otherwise how long until a token is available. rate 0
// means unlimited.
func (r *rateLimiter) take(room int64, class string, rate int, now time.Time) time.Duration {
	if rate <= 0 {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	k := bucketKey{room, class}
	b, ok := r.buckets[k]
	if !ok || b.rate != rate {
		b = &bucket{tokens: float64(rate), last: now, rate: rate}
		r.buckets[k] = b
	}
	perMS := float64(rate) / 60000
	if el := now.Sub(b.last); el > 0 {
		b.tokens = math.Min(float64(rate), b.tokens+float64(el.Milliseconds())*perMS)
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return 0
	}
	wait := math.Ceil((1 - b.tokens) / perMS)
	return time.Duration(wait) * time.Millisecond
}

// refund gives a token back (the write was refused before it was sent).
func (r *rateLimiter) refund(room int64, class string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if b, ok := r.buckets[bucketKey{room, class}]; ok {
		b.tokens = math.Min(float64(b.rate), b.tokens+1)
	}
}

// drain empties a bucket (the host refused with rate_limited).
func (r *rateLimiter) drain(room int64, class string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if b, ok := r.buckets[bucketKey{room, class}]; ok {
		b.tokens, b.last = 0, now
	}
}
