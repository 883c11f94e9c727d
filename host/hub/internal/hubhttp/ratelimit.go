package hubhttp

import (
	"time"

	"apconnect/host/internal/quota"
)

// Rate is a quota: at most Limit operations per Per, as a token bucket (a
// burst of Limit, then one every Per/Limit; package quota). A zero Limit
// means unlimited.
type Rate struct {
	Limit int
	Per   time.Duration
}

// RateLimiter keeps a quota bucket per key. It is safe for concurrent use.
// The hub keeps one; services key it by protocol, actor and class (for
// ADP: message, signal, control/contract kinds).
type RateLimiter struct {
	buckets quota.Buckets[string]
}

// NewRateLimiter returns an empty limiter.
func NewRateLimiter() *RateLimiter { return &RateLimiter{} }

// Reservation is one counted operation; Cancel gives it back (for a write
// that was rejected after the quota was checked).
type Reservation struct {
	unit *quota.Unit[string]
}

// Cancel returns the reserved unit; a second Cancel does nothing.
func (r *Reservation) Cancel() {
	if r != nil {
		r.unit.Return()
	}
}

// Reserve counts one operation for key at now under rate. When the quota is
// exhausted it returns a rate_limited *Error whose Retry-After is the time
// until the next unit is available.
func (l *RateLimiter) Reserve(key string, rate Rate, now time.Time) (*Reservation, error) {
	unit, wait := l.buckets.Take(key, rate.Limit, rate.Per, now)
	if wait > 0 {
		return nil, RateLimited(wait, "rate limit of %d per %s exceeded", rate.Limit, rate.Per)
	}
	if unit == nil {
		return nil, nil
	}
	return &Reservation{unit: unit}, nil
}
