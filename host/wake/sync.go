package wake

import (
	"context"
	"errors"
	"net/http"
	"time"

	"apconnect/host/capability"
	"apconnect/host/client"
	"apconnect/host/connector"
)

// SyncJob is one module's periodic background sync, such as Agent Mail's
// mailbox sync: the resident connector runs it every Every whether or not
// a client is connected, in one process of the identity at a time (a lease
// in the store), only while the operator grants Need on one of its
// origins, and backs off after the service answers 429 or 5xx. What a
// round stores (inbox items included) is announced like anything a tool
// call stores.
type SyncJob struct {
	// Name names the job (its lease is sync:<Name>) and its logs.
	Name string
	// Every is the interval between rounds ([mail] sync_interval for mail).
	Every time.Duration
	// Need is the capability a round needs (capability.MailRead).
	Need capability.Capability
	// Origins returns the origins a round reaches (the relays of the
	// agent's mailboxes); a round runs only when Need is granted on at
	// least one, and none is reached without its grant. Called before each
	// round; empty: nothing to sync yet.
	Origins func() []string
	// Run does one round without an MCP session. Its context carries the
	// grant of Need on each granted origin (engine.Need). An error that is,
	// or wraps, a *client.Error with status 429 or 5xx backs the job off
	// (at least its Retry-After).
	Run func(ctx context.Context) error
}

// syncJobs are the connector's background syncs, one line each. Agent
// Mail's runs its module's session-free SyncOnce, which reads each route
// only with mail.read on its origin; a relay's 429 or 5xx (in the result's
// route errors) backs the job off.
func syncJobs(c *connector.Connector) []SyncJob {
	return []SyncJob{
		{Name: "mail", Every: c.Engine().Config.Mail.SyncInterval, Need: capability.MailRead, Origins: c.Engine().Origins, Run: mailSync(c)},
	}
}

// mailSync is the mail job's round.
func mailSync(c *connector.Connector) func(context.Context) error {
	return func(ctx context.Context) error {
		res, err := c.Mail().SyncOnce(ctx, "")
		if err != nil {
			return err
		}
		return res.Err()
	}
}

// maxBackoff caps the wait after repeated 429 or 5xx answers.
const maxBackoff = time.Hour

// runSync runs a job every Every while this process holds its lease.
func (s *Service) runSync(ctx context.Context, j SyncJob) {
	if j.Every <= 0 || j.Run == nil || j.Origins == nil {
		s.log.Warn("wake: a sync job without interval, origins or run is skipped", "job", j.Name)
		return
	}
	l := s.lease(syncJob+j.Name, j.Every+s.opts.LeaseTTL)
	defer l.release()
	failures := 0
	wait := time.Duration(0)
	for sleep(ctx, wait) {
		// The lease outlasts the wait before the next round, so another
		// process neither syncs in between nor ignores a backoff.
		wait = j.Every
		l.ttl = wait + s.opts.LeaseTTL
		held, _, err := l.hold(ctx)
		if err != nil || !held {
			continue
		}
		gctx, granted := s.granted(ctx, j)
		if len(granted) == 0 {
			continue // nothing to sync, or not granted: asked again next round
		}
		err = j.Run(gctx)
		if ctx.Err() != nil {
			return
		}
		if retry, ok := backoff(err); ok {
			failures++
			wait = max(retry, min(j.Every<<min(failures, 10), maxBackoff))
			l.ttl = wait + s.opts.LeaseTTL
			_, _, _ = l.hold(ctx)
			s.log.Warn("wake: background sync refused, backing off", "job", j.Name, "origins", granted, "wait", wait, "err", err)
			continue
		}
		failures = 0
		if err != nil {
			s.log.Warn("wake: background sync failed", "job", j.Name, "origins", granted, "err", err)
		}
	}
}

// granted returns ctx carrying the grant of j.Need on each of j's origins
// the operator grants it, and those origins.
func (s *Service) granted(ctx context.Context, j SyncJob) (context.Context, []string) {
	var granted []string
	for _, o := range j.Origins() {
		gctx, err := s.e.Need(ctx, o, j.Need)
		if err == nil {
			ctx, granted = gctx, append(granted, o)
		}
	}
	return ctx, granted
}

// backoff reports whether err is a 429 or 5xx answer, with the wait the
// service asked for (Retry-After, 0 when none).
func backoff(err error) (time.Duration, bool) {
	var ce *client.Error
	if !errors.As(err, &ce) {
		return 0, false
	}
	if ce.Status == http.StatusTooManyRequests || ce.Status >= 500 {
		return ce.RetryAfter, true
	}
	return 0, false
}
