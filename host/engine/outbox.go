package engine

import (
	"context"
	"fmt"
	"time"

	"apconnect/host/capability"
	"apconnect/host/identity"
	"apconnect/host/store"
)

// outboxInterval paces the background resubmission.
const outboxInterval = 5 * time.Second

// Outcome is what became of a resubmitted outbox entry.
type Outcome int

const (
	// Unknown: the outcome is still unknown (the service could not be
	// reached); the entry is kept and tried again.
	Unknown Outcome = iota
	// Accepted: the service accepted the envelope (now or before); the
	// entry is closed as done.
	Accepted
	// Refused: the service refused it for good and it was never accepted;
	// the entry is closed as failed.
	Refused
)

// Submitter resubmits the outbox entries of one kind whose outcome stayed
// unknown (the process stopped, or the service was unreachable after
// signing). Each protocol module registers one per kind it writes.
type Submitter interface {
	// Resubmit sends the stored envelope of entry again — an exact
	// resubmission is an idempotent lookup on the service — with a context
	// that carries the entry's grant, applies what the service answered and
	// says what became of it, with the result to record (Accepted) or the
	// reason (Unknown, Refused).
	Resubmit(ctx context.Context, entry *store.OutboxEntry, env *identity.Envelope) (Outcome, []byte, error)
}

// registration is a Submitter with the grant its kind needs.
type registration struct {
	capability capability.Capability
	submitter  Submitter
}

// RegisterSubmitter registers the Submitter of an outbox kind and the
// capability resubmitting it needs on the entry's origin. Modules call it
// when they are built, before Start.
func (e *Engine) RegisterSubmitter(kind string, c capability.Capability, s Submitter) {
	if _, dup := e.submitters[kind]; dup {
		panic("engine: two submitters for outbox kind " + kind)
	}
	e.submitters[kind] = registration{capability: c, submitter: s}
}

// outboxLoop resubmits pending outbox entries at start and then
// periodically.
func (e *Engine) outboxLoop(ctx context.Context) {
	t := time.NewTicker(outboxInterval)
	defer t.Stop()
	for {
		e.ResubmitOutbox(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// ResubmitOutbox resubmits the pending outbox entries whose lease ended
// through the Submitter of their kind and returns how many it closed. An
// entry whose origin the operator no longer grants its capability is not
// sent: it stays pending with permission_denied as its error (doctor and
// the operator's view show it), so restoring the grant sends it.
func (e *Engine) ResubmitOutbox(ctx context.Context) int {
	now := e.NowMS()
	var entries []*store.OutboxEntry
	err := e.Store.Write(ctx, func(tx *store.Tx) error {
		var err error
		entries, err = tx.LeaseOutbox(ctx, now, now+OutboxLease.Milliseconds(), 20)
		return err
	})
	if err != nil {
		return 0
	}
	closed := 0
	for _, entry := range entries {
		if e.resubmit(ctx, entry) {
			closed++
		}
	}
	return closed
}

// resubmit sends one entry again; it reports whether the entry was closed.
func (e *Engine) resubmit(ctx context.Context, entry *store.OutboxEntry) bool {
	env, err := identity.ParseEnvelope(entry.Envelope)
	if err != nil {
		e.CloseOutbox(ctx, entry.ID, store.OutboxFailed, nil, "stored envelope unreadable: "+err.Error())
		return true
	}
	reg, ok := e.submitters[entry.Kind]
	if !ok {
		// A kind no module of this build writes: keep it for one that does.
		e.holdOutbox(ctx, entry, fmt.Errorf("no module resubmits outbox entries of kind %q", entry.Kind))
		return false
	}
	gctx, err := e.Need(ctx, entry.Service, reg.capability)
	if err != nil {
		e.holdOutbox(ctx, entry, err)
		return false
	}
	outcome, result, err := reg.submitter.Resubmit(gctx, entry, env)
	switch outcome {
	case Accepted:
		e.Done(ctx, entry.ID, result)
		return true
	case Refused:
		e.CloseOutbox(ctx, entry.ID, store.OutboxFailed, nil, fmt.Sprint(err))
		return true
	}
	e.ReleaseOutbox(ctx, entry.ID, err)
	return false
}

// holdOutbox keeps an entry pending without sending it, with the reason as
// its error, until the next round of the resubmission looks again (a
// restored grant sends it then; checking costs no request).
func (e *Engine) holdOutbox(ctx context.Context, entry *store.OutboxEntry, reason error) {
	now := e.NowMS()
	e.outboxWrite(ctx, "holding an outbox entry", entry.ID, func(ctx context.Context, tx *store.Tx) error {
		return tx.HoldOutbox(ctx, entry.ID, now, now+outboxInterval.Milliseconds(), reason.Error())
	})
}
