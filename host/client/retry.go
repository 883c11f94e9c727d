package client

import (
	"context"
	"math/rand/v2"
	"time"
)

// Defaults of RetryPolicy.
const (
	DefaultMaxAttempts   = 4
	DefaultBaseDelay     = 250 * time.Millisecond
	DefaultMaxDelay      = 5 * time.Second
	DefaultMaxElapsed    = 30 * time.Second
	DefaultMaxRetryAfter = 30 * time.Second
)

// RetryPolicy bounds the retries of reads (network errors, 429, 5xx). Zero
// fields take the defaults above; MaxAttempts 1 disables retries.
type RetryPolicy struct {
	// MaxAttempts is the most attempts of one read, the first included.
	MaxAttempts int
	// BaseDelay is the backoff before the first retry; it doubles per retry.
	BaseDelay time.Duration
	// MaxDelay caps one backoff delay.
	MaxDelay time.Duration
	// MaxElapsed bounds the total time of one read, retries and waits
	// included: no retry starts when its wait would end past it.
	MaxElapsed time.Duration
	// MaxRetryAfter is the longest Retry-After honoured; a 429 asking for
	// more is returned to the caller at once (its *Error carries RetryAfter).
	MaxRetryAfter time.Duration
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = DefaultBaseDelay
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = DefaultMaxDelay
	}
	if p.MaxDelay < p.BaseDelay {
		p.MaxDelay = p.BaseDelay
	}
	if p.MaxElapsed <= 0 {
		p.MaxElapsed = DefaultMaxElapsed
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = DefaultMaxRetryAfter
	}
	return p
}

// Backoff is an exponential backoff with jitter: the n-th delay is drawn
// uniformly from [d/2, d] where d = min(Base·2^n, Max). It is the pacing
// the client uses between read retries, exported for the engine's stream
// reconnects. The zero value uses DefaultBaseDelay and DefaultMaxDelay.
// A Backoff is not safe for concurrent use.
type Backoff struct {
	// Base is the first delay's upper bound.
	Base time.Duration
	// Max caps every delay.
	Max time.Duration
	n   int
}

// NewBackoff returns a Backoff paced by the policy's BaseDelay and MaxDelay.
func (p RetryPolicy) NewBackoff() *Backoff {
	p = p.withDefaults()
	return &Backoff{Base: p.BaseDelay, Max: p.MaxDelay}
}

// Next returns the next delay and advances the backoff.
func (b *Backoff) Next() time.Duration {
	base, maxd := b.Base, b.Max
	if base <= 0 {
		base = DefaultBaseDelay
	}
	if maxd <= 0 {
		maxd = DefaultMaxDelay
	}
	if maxd < base {
		maxd = base
	}
	d := base
	for i := 0; i < b.n && d < maxd; i++ {
		d *= 2
	}
	if d > maxd {
		d = maxd
	}
	b.n++
	half := d / 2
	return half + rand.N(d-half+1)
}

// Reset starts the backoff over (after a stream stayed up, say).
func (b *Backoff) Reset() { b.n = 0 }

// Attempts returns how many delays Next has handed out since the last Reset.
func (b *Backoff) Attempts() int { return b.n }

// Sleep waits for d or until ctx is done, returning ctx.Err() in that case.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
