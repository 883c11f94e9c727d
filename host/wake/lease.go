package wake

import (
	"context"
	"time"

	"apconnect/host/store"
)

// Job names of the leases.
const (
	commandJob = "command:"
	syncJob    = "sync:"
)

// lease is one job's lease, held by this process (Service.holder) in the
// store: several processes of an identity contend for it, one holds it,
// and another takes it over once it lapses (its holder stopped renewing)
// or is released.
type lease struct {
	s   *Service
	job string
	ttl time.Duration
}

func (s *Service) lease(job string, ttl time.Duration) *lease {
	return &lease{s: s, job: job, ttl: ttl}
}

// holdTx takes or renews the lease inside tx; fresh is true when this
// process took it now (from no one, or from a holder that stopped).
func (l *lease) holdTx(ctx context.Context, tx *store.Tx) (held, fresh bool, err error) {
	now := l.s.e.NowMS()
	return tx.AcquireLease(ctx, l.job, l.s.holder, now, now+l.ttl.Milliseconds())
}

// otherHolds reports whether another process holds the lease now (a read:
// contenders look before they write).
func (l *lease) otherHolds(ctx context.Context) bool {
	cur, ok, err := l.s.st.Read().Lease(ctx, l.job)
	return err == nil && ok && cur.Holder != l.s.holder && cur.Until > l.s.e.NowMS()
}

// hold takes or renews the lease in a transaction of its own.
func (l *lease) hold(ctx context.Context) (held, fresh bool, err error) {
	err = l.s.st.Write(ctx, func(tx *store.Tx) error {
		held, fresh, err = l.holdTx(ctx, tx)
		return err
	})
	return held, fresh, err
}

// keep renews the lease every third of its TTL until ctx ends (while a
// command runs, so no other process takes the command over meanwhile).
func (l *lease) keep(ctx context.Context) {
	t := time.NewTicker(l.ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, _, err := l.hold(ctx); err != nil && ctx.Err() == nil {
			l.s.log.Warn("renewing a wake lease", "job", l.job, "err", err)
		}
	}
}

// release gives the lease up, so another process may take the job at once.
func (l *lease) release() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := l.s.st.Write(ctx, func(tx *store.Tx) error { return tx.ReleaseLease(ctx, l.job, l.s.holder) }); err != nil {
		l.s.log.Warn("releasing a wake lease", "job", l.job, "err", err)
	}
}
