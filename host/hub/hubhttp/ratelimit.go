package hubhttp

import (
	"sync"
	"time"
)

// Rate is a quota: at most Limit operations per Per. A zero Limit means
// unlimited.
type Rate struct {
	Limit int
	Per   time.Duration
}

// RateLimiter counts operations per key in fixed windows. It is safe for
// concurrent use. The hub keeps one; services key it by protocol, actor and
// class (for ADP: message, signal, control/contract kinds).
type RateLimiter struct {
	mu      sync.Mutex
	windows map[string]*window
	sweeps  int
}

type window struct {
	start time.Time
	per   time.Duration
	count int
}

// NewRateLimiter returns an empty limiter.
func NewRateLimiter() *RateLimiter {
	return &RateLimiter{windows: map[string]*window{}}
}

// Reservation is one counted operation; Cancel gives it back (for a write
// that was rejected after the quota was checked).
type Reservation struct {
	l   *RateLimiter
	key string
	w   *window
}

// Cancel returns the reserved unit if its window is still current.
func (r *Reservation) Cancel() {
	if r == nil || r.l == nil {
		return
	}
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	if cur := r.l.windows[r.key]; cur == r.w && r.w.count > 0 {
		r.w.count--
	}
	r.l = nil
}

// Reserve counts one operation for key at now under rate. When the quota is
// exhausted it returns a rate_limited *Error whose Retry-After is the time
// until the window ends.
func (l *RateLimiter) Reserve(key string, rate Rate, now time.Time) (*Reservation, error) {
	if rate.Limit <= 0 || rate.Per <= 0 {
		return nil, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	w := l.windows[key]
	if w == nil || !now.Before(w.start.Add(w.per)) || now.Before(w.start) || w.per != rate.Per {
		w = &window{start: now, per: rate.Per}
		l.windows[key] = w
	}
	if w.count >= rate.Limit {
		return nil, RateLimited(w.start.Add(w.per).Sub(now), "rate limit of %d per %s exceeded", rate.Limit, rate.Per)
	}
	w.count++
	return &Reservation{l: l, key: key, w: w}, nil
}

// sweep drops expired windows now and then so memory stays bounded by the
// number of recently active keys.
func (l *RateLimiter) sweep(now time.Time) {
	l.sweeps++
	if l.sweeps < 1024 {
		return
	}
	l.sweeps = 0
	for k, w := range l.windows {
		if !now.Before(w.start.Add(w.per)) {
			delete(l.windows, k)
		}
	}
}
