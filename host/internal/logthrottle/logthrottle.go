// Package logthrottle rate-limits log lines that a remote party can cause
// at will (one per malformed item a host streams, say), so that a hostile
// or broken peer cannot flood apconnect's stderr, which MCP clients keep on
// disk. A Throttle lets a burst of lines through, then one per interval,
// and counts the lines it holds back: the next line it lets through carries
// the count, so the operator knows how much was not shown.
package logthrottle

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Defaults for remote-caused warnings: a burst of 10, then one line every
// 10 seconds.
const (
	DefaultBurst    = 10
	DefaultInterval = 10 * time.Second
)

// SuppressedKey is the attribute that reports lines held back since the
// previous line that was logged.
const SuppressedKey = "suppressed"

// Throttle limits one kind of log line. The zero value is not usable; make
// one with New. It is safe for concurrent use.
type Throttle struct {
	lim *rate.Limiter

	mu         sync.Mutex
	suppressed uint64
}

// New returns a Throttle that lets burst lines through at once and then one
// per interval.
func New(interval time.Duration, burst int) *Throttle {
	return &Throttle{lim: rate.NewLimiter(rate.Every(interval), burst)}
}

// Allow reports whether a line may be logged now. When it may, it also
// returns how many lines were held back since the last one allowed (and
// starts counting again); when it may not, the line is counted.
func (t *Throttle) Allow() (ok bool, suppressed uint64) {
	return t.allowAt(time.Now())
}

func (t *Throttle) allowAt(now time.Time) (bool, uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.lim.AllowN(now, 1) {
		t.suppressed++
		return false, 0
	}
	n := t.suppressed
	t.suppressed = 0
	return true, n
}

// Suppressed returns how many lines are held back and not yet reported.
func (t *Throttle) Suppressed() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.suppressed
}

// Log writes msg with attrs to logger at level when the throttle allows it,
// adding SuppressedKey when lines were held back before it.
func (t *Throttle) Log(ctx context.Context, logger *slog.Logger, level slog.Level, msg string, attrs ...slog.Attr) {
	if !logger.Enabled(ctx, level) {
		return
	}
	ok, n := t.Allow()
	if !ok {
		return
	}
	if n > 0 {
		attrs = append(attrs, slog.Uint64(SuppressedKey, n))
	}
	logger.LogAttrs(ctx, level, msg, attrs...)
}
