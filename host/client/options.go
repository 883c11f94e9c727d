package client

import (
	"context"
	"log/slog"
	"time"

	"apconnect/host/identity"
)

// Defaults of Options.
const (
	// DefaultMaxResponseBytes bounds a list page (events, rooms, join
	// requests, statuses, profile history).
	DefaultMaxResponseBytes = 4 << 20
	// DefaultMaxResourceBytes bounds a single resource (a room, a record,
	// a join request, a status, a profile, an error body).
	DefaultMaxResourceBytes = 256 << 10
	// DefaultMaxArchiveBytes bounds a whole archive download.
	DefaultMaxArchiveBytes = 256 << 20
	// DefaultMaxStreamEventBytes bounds one SSE line and one SSE event.
	DefaultMaxStreamEventBytes = 1 << 20
	// DefaultStreamIdleTimeout is how long a live stream may stay silent
	// (no event and no heartbeat comment) before it is reported dead.
	DefaultStreamIdleTimeout = 90 * time.Second
	// DefaultTokenLifetime is how long each request JWT stays valid from
	// the moment it is minted (its exp - now).
	DefaultTokenLifetime = 60 * time.Second
	// TokenBackdate is how far before now a request JWT's iat is set, so a
	// host whose clock runs up to this much behind still accepts it.
	TokenBackdate = 30 * time.Second
	// MaxTokenLifetime is the longest TokenLifetime: with the backdated
	// iat, exp - iat is then identity.MaxTokenLifetime.
	MaxTokenLifetime = identity.MaxTokenLifetime - TokenBackdate
)

// Options tune a Host or ProfileService. The zero value is usable: every
// zero field takes its default.
type Options struct {
	// Timeout bounds each request attempt, body included (default: the
	// *http.Client's Timeout when it has one, else DefaultTimeout). For a
	// live stream it bounds only the wait for the response headers.
	Timeout time.Duration
	// MaxResponseBytes bounds list pages (DefaultMaxResponseBytes).
	MaxResponseBytes int64
	// MaxResourceBytes bounds single resources and error bodies
	// (DefaultMaxResourceBytes).
	MaxResourceBytes int64
	// MaxArchiveBytes bounds an archive download (DefaultMaxArchiveBytes).
	MaxArchiveBytes int64
	// MaxStreamEventBytes bounds one SSE line and one assembled SSE event
	// (DefaultMaxStreamEventBytes).
	MaxStreamEventBytes int
	// StreamIdleTimeout reports a live stream dead when nothing — not even
	// a heartbeat comment — arrives for this long
	// (DefaultStreamIdleTimeout).
	StreamIdleTimeout time.Duration
	// Retry is the retry policy of reads (zero fields take defaults).
	Retry RetryPolicy
	// Clock is the time source for request JWTs and Retry-After dates
	// (time.Now).
	Clock func() time.Time
	// Logger receives one debug line per request attempt and warnings on
	// retries: method, path, status, attempt, duration. Never headers,
	// tokens or bodies. Nil discards.
	Logger *slog.Logger
	// TokenLifetime is how long each request JWT stays valid once minted,
	// exp - now (DefaultTokenLifetime; capped at MaxTokenLifetime). Its iat
	// is TokenBackdate before now.
	TokenLifetime time.Duration
	// StreamTokenLifetime is TokenLifetime for the JWT of a live stream
	// subscription (MaxTokenLifetime by default and at most). Hosts close
	// a stream when its JWT expires (D-26), so this is how often a
	// stream resubscribes.
	StreamTokenLifetime time.Duration
	// Gate, when set, is asked before each request attempt and live
	// subscription — before its JWT is minted — whether the request's
	// context may reach the service's origin; an error refuses the request
	// and is returned as it is. The connector's engine sets it to its grant
	// check (host/engine Gate).
	Gate func(ctx context.Context, origin string) error
}

// withDefaults returns o with every zero field set to its default.
func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if o.MaxResourceBytes <= 0 {
		o.MaxResourceBytes = DefaultMaxResourceBytes
	}
	if o.MaxArchiveBytes <= 0 {
		o.MaxArchiveBytes = DefaultMaxArchiveBytes
	}
	if o.MaxStreamEventBytes <= 0 {
		o.MaxStreamEventBytes = DefaultMaxStreamEventBytes
	}
	if o.StreamIdleTimeout <= 0 {
		o.StreamIdleTimeout = DefaultStreamIdleTimeout
	}
	o.Retry = o.Retry.withDefaults()
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.TokenLifetime <= 0 {
		o.TokenLifetime = DefaultTokenLifetime
	}
	if o.TokenLifetime > MaxTokenLifetime {
		o.TokenLifetime = MaxTokenLifetime
	}
	if o.StreamTokenLifetime <= 0 || o.StreamTokenLifetime > MaxTokenLifetime {
		o.StreamTokenLifetime = MaxTokenLifetime
	}
	return o
}
