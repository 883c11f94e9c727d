package connector

import (
	"time"

	"apconnect/host/internal/quota"
)

// rateLimiter is the local write backpressure: a bucket per room and quota
// class mirroring the host's per-agent quotas (ADP 20) in the hub's shape
// (package quota), so a runaway agent is stopped before it signs, and
// burns no nonce, instead of being refused by the host.
type rateLimiter struct {
	buckets quota.Buckets[bucketKey]
}

type bucketKey struct {
	room  int64
	class string
}

func newRateLimiter() *rateLimiter { return &rateLimiter{} }

// take takes one unit for (room, class) at rate events per minute (a
// bucket of that capacity refilling continuously). It returns the unit,
// to Return when the write is refused before it is sent, or, when the
// budget is spent, how long until a unit is available (rounded up to the
// millisecond). rate 0 means unlimited (a nil unit, which may be
// returned too).
func (r *rateLimiter) take(room int64, class string, rate int, now time.Time) (*quota.Unit[bucketKey], time.Duration) {
	unit, wait := r.buckets.Take(bucketKey{room, class}, rate, time.Minute, now)
	if wait > 0 {
		wait = (wait + time.Millisecond - 1).Truncate(time.Millisecond)
	}
	return unit, wait
}

// drain empties a bucket (the host refused with rate_limited).
func (r *rateLimiter) drain(room int64, class string, now time.Time) {
	r.buckets.Drain(bucketKey{room, class}, now)
}
