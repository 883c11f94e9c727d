package engine

import (
	"fmt"
	"time"

	"apconnect/host/internal/quota"
)

// Write budgets: the local backpressure every protocol's writes pass
// before anything is signed, so a runaway agent is stopped before it burns
// a nonce instead of being refused by the service (the connector spec's
// SHOULD). The engine keeps the buckets; each module names its budgets
// (a key: its protocol and the budget's scope, such as a room and quota
// class, or a letter's recipient) and their rates, with documented
// defaults the operator may override in config.toml.
type budgets struct {
	buckets quota.Buckets[string]
}

// Unit is one unit taken from a budget; Return it when the write is
// refused before it is sent. A nil Unit (an unlimited budget) may be
// returned too.
type Unit = quota.Unit[string]

// Take takes one unit of the budget key, which holds rate units refilling
// over per (rate 0: unlimited). When the budget is spent it returns
// rate_limited with data {retry_after_ms, local: true, budget}.
func (e *Engine) Take(key string, rate int, per time.Duration) (*Unit, error) {
	unit, wait := e.budgets.buckets.Take(key, rate, per, e.Now())
	if wait <= 0 {
		return unit, nil
	}
	wait = (wait + time.Millisecond - 1).Truncate(time.Millisecond)
	return nil, &Error{Code: CodeRateLimited,
		Message:    fmt.Sprintf("the local write budget %s is spent; retry in %d ms", key, wait.Milliseconds()),
		RetryAfter: wait, Data: map[string]any{"retry_after_ms": wait.Milliseconds(), "local": true, "budget": key}}
}

// Drain empties a budget (the service refused a write with rate_limited).
func (e *Engine) Drain(key string) { e.budgets.buckets.Drain(key, e.Now()) }
