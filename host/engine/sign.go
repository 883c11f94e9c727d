package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"apconnect/host/capability"
	"apconnect/host/client"
	"apconnect/host/identity"
	"apconnect/host/store"
)

// The signing pipeline: sign → outbox → submit → resolve, one for every
// protocol.
//
// One transaction allocates the nonce (one sequence for the Agent ID,
// across every protocol and process), signs the event and stores the signed
// envelope in the outbox, so the envelope exists durably before it is sent
// and a nonce is never used twice. Writes to one origin are serialized in
// the process so the service sees the nonces in order. After the send:
//
//   - accepted: the caller applies the result and closes the entry (Done);
//   - refused with nonce_not_greater and a Max-Seen-Nonce within the bound
//     of Agent Identity 6.2 (another process of the same Agent ID, or an
//     older copy of this state, used greater nonces): the sequence is moved
//     past it and the event re-signed with a fresh nonce and created_at, at
//     most MaxNonceResigns times;
//   - refused otherwise: the entry is closed as failed and the error
//     returned;
//   - outcome unknown (network failure, 5xx, the call's context ended in
//     flight): the same envelope is resent up to three times, which the
//     service answers idempotently (an exact resubmission); if it stays
//     unknown the entry is released to the background resubmission, which
//     goes through the Submitter the module registered for its kind, and the
//     call returns submission_pending.

// MaxNonceResigns bounds the re-signs after a refused nonce.
const MaxNonceResigns = 3

// OutboxLease is how long a writer holds a fresh outbox entry before the
// background resubmission may take it over.
const OutboxLease = 60 * time.Second

// outboxWriteTimeout bounds an outbox bookkeeping write made after the tool
// call's context ended.
const outboxWriteTimeout = 10 * time.Second

// Write is one signed write: what is signed, where it goes and what it
// needs there.
type Write struct {
	// Kind is the outbox kind; the module registers a Submitter for it.
	Kind string
	// Origin is the service the envelope is submitted to.
	Origin string
	// Capability is the grant the write needs on Origin.
	Capability capability.Capability
	// Event is the event to sign; Sign sets its nonce (and on a re-sign its
	// created_at).
	Event identity.Event
	// Ref is the module's reference stored with the entry (a room id); the
	// engine does not read it.
	Ref string
	// BaseSeq is stored with the entry for the module (a room write's base).
	BaseSeq int64
	// Fill, when set, completes the event once its nonce (and created_at)
	// are fixed, inside the signing transaction, before it is signed: Agent
	// Mail seals a letter to an AAD that names the nonce.
	Fill func(ev *identity.Event) error
	// Also, when set, runs in the signing transaction once the outbox entry
	// is stored: the module's rows that must commit with the signature or
	// not at all (a mailbox key with its card, a sealed letter). An error
	// rolls everything back, the nonce included.
	Also func(tx *store.Tx, env *identity.Envelope, outbox int64) error
}

// Sign checks the gate, then allocates the nonce, signs w.Event and stores
// the signed envelope in the outbox in one transaction, leased to the caller
// for OutboxLease. It returns the envelope and the outbox entry's id. A
// refused gate signs nothing and uses no nonce.
func (e *Engine) Sign(ctx context.Context, w *Write) (*identity.Envelope, int64, error) {
	if err := e.Allow(w.Origin, w.Capability); err != nil {
		return nil, 0, err
	}
	ev := w.Event
	var env *identity.Envelope
	var id int64
	err := e.Store.Write(ctx, func(tx *store.Tx) error {
		nonce, err := tx.AllocateNonce(ctx, ev.CreatedAt)
		if err != nil {
			return err
		}
		ev.Nonce = nonce
		if w.Fill != nil {
			if err := w.Fill(&ev); err != nil {
				return err
			}
		}
		env, err = identity.SignEvent(e.signer, ev)
		if err != nil {
			return err
		}
		raw, err := json.Marshal(env)
		if err != nil {
			return err
		}
		now := e.NowMS()
		id, err = tx.AddOutbox(ctx, &store.OutboxEntry{Kind: w.Kind, Service: w.Origin, Ref: w.Ref, EventID: env.Hash, Nonce: nonce,
			BaseSeq: w.BaseSeq, Envelope: raw, LeaseUntil: now + OutboxLease.Milliseconds(), CreatedAt: now})
		if err == nil && w.Also != nil {
			err = w.Also(tx, env, id)
		}
		return err
	})
	if err != nil {
		return nil, 0, Wrap(err)
	}
	return env, id, nil
}

// Sent is what Submit returns for an accepted write.
type Sent[T any] struct {
	// Result is what send returned.
	Result T
	// Envelope is the signed envelope the service accepted.
	Envelope *identity.Envelope
	// Outbox is the entry's id: the caller closes it with Done once it has
	// applied the result.
	Outbox int64
}

// Submit runs w through the pipeline with send, which submits one signed
// envelope (with a context that carries w's grant). See the top of this
// file for what happens to each outcome. Before anything is signed the gate
// is checked (permission_denied uses no nonce).
func Submit[T any](e *Engine, ctx context.Context, w Write, send func(ctx context.Context, env *identity.Envelope) (T, error)) (*Sent[T], error) {
	gctx, err := e.Need(ctx, w.Origin, w.Capability)
	if err != nil {
		return nil, err
	}
	lock := e.submitLocks.Get(w.Origin)
	for resigns := 0; ; resigns++ {
		if err := lock.Lock(ctx); err != nil {
			return nil, err
		}
		env, id, err := e.Sign(ctx, &w)
		if err != nil {
			lock.Unlock()
			return nil, err
		}
		res, err := sendUnknownSafe(e, gctx, id, func() (T, error) { return send(gctx, env) })
		lock.Unlock()
		if err == nil {
			return &Sent[T]{Result: res, Envelope: env, Outbox: id}, nil
		}
		var pe *Error
		if errors.As(err, &pe) && pe.Code == CodeSubmissionPending {
			pe.Data = WithData(pe.Data, "event_id", env.Hash)
			return nil, pe
		}
		e.CloseOutbox(ctx, id, store.OutboxFailed, nil, err.Error())
		var he *client.Error
		if errors.As(err, &he) && he.Code == identity.CodeNonceNotGreater && he.MaxSeenNonce != "" && resigns < MaxNonceResigns {
			if err := e.ApplyMaxSeenNonce(ctx, he.MaxSeenNonce); err != nil {
				return nil, err
			}
			w.Event.CreatedAt = e.NowMS()
			continue
		}
		return nil, err
	}
}

// sendUnknownSafe calls send up to three times while the outcome stays
// unknown (network errors, 5xx): the same signed envelope is resubmitted,
// which the service answers idempotently. If it stays unknown the outbox
// entry is released for the background resubmission and the error is
// submission_pending.
func sendUnknownSafe[T any](e *Engine, ctx context.Context, id int64, send func() (T, error)) (T, error) {
	var zero T
	var last error
	for attempt := 0; attempt < 3; attempt++ {
		if attempt > 0 {
			if err := client.Sleep(ctx, time.Duration(attempt*attempt)*150*time.Millisecond); err != nil {
				break
			}
		}
		v, err := send()
		if err == nil {
			return v, nil
		}
		last = err
		if !UnknownOutcome(err) {
			return zero, err
		}
		now := e.NowMS()
		e.outboxWrite(ctx, "extending an outbox lease", id, func(ctx context.Context, tx *store.Tx) error {
			return tx.TouchOutbox(ctx, id, now, now+OutboxLease.Milliseconds(), err.Error())
		})
	}
	// Released, so the background resubmission may take the entry at once.
	now := e.NowMS()
	e.outboxWrite(ctx, "releasing an outbox entry", id, func(ctx context.Context, tx *store.Tx) error {
		return tx.ReleaseOutbox(ctx, id, now, fmt.Sprint(last))
	})
	return zero, &Error{Code: CodeSubmissionPending, Message: "the service could not be reached to confirm the write; it stays signed in the outbox and is resubmitted in the background (never twice)", Err: last}
}

// UnknownOutcome reports whether a write's failure leaves its outcome
// unknown (the envelope may have been accepted): a network failure, a 5xx,
// or the call's context ending while the request was in flight.
func UnknownOutcome(err error) bool {
	if client.IsNetwork(err) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var he *client.Error
	if errors.As(err, &he) {
		return he.Status >= 500
	}
	return false
}

// ApplyMaxSeenNonce moves the nonce sequence past a service's
// Max-Seen-Nonce (bounded by identity.MaxNonceJump).
func (e *Engine) ApplyMaxSeenNonce(ctx context.Context, header string) error {
	now := e.NowMS()
	return Wrap(e.Store.Write(ctx, func(tx *store.Tx) error {
		_, err := tx.ApplyMaxSeenNonce(ctx, now, header)
		return err
	}))
}

// Done closes an outbox entry as accepted, with the service's result.
func (e *Engine) Done(ctx context.Context, id int64, result []byte) {
	e.CloseOutbox(ctx, id, store.OutboxDone, result, "")
}

// CloseOutbox records the outcome of an outbox entry. It runs even when the
// tool call's context has ended (the outcome is known and must not be
// lost), within outboxWriteTimeout.
func (e *Engine) CloseOutbox(ctx context.Context, id int64, state string, result []byte, errText string) {
	now := e.NowMS()
	e.outboxWrite(ctx, "closing outbox entry", id, func(ctx context.Context, tx *store.Tx) error {
		return tx.CloseOutbox(ctx, id, state, result, errText, now)
	})
}

// ReleaseOutbox hands an entry the caller holds to the background
// resubmission (its outcome is still unknown).
func (e *Engine) ReleaseOutbox(ctx context.Context, id int64, reason error) {
	now := e.NowMS()
	e.outboxWrite(ctx, "releasing an outbox entry", id, func(ctx context.Context, tx *store.Tx) error {
		return tx.ReleaseOutbox(ctx, id, now, fmt.Sprint(reason))
	})
}

// outboxWrite runs an outbox bookkeeping transaction detached from the
// caller's cancellation (a lease released or an entry closed after the
// agent gave up must still be recorded), bounded by outboxWriteTimeout; a
// failure is logged, since the entry then keeps its lease and the
// background resubmission takes it over when the lease ends.
func (e *Engine) outboxWrite(ctx context.Context, what string, id int64, fn func(ctx context.Context, tx *store.Tx) error) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), outboxWriteTimeout)
	defer cancel()
	if err := e.Store.Write(dctx, func(tx *store.Tx) error { return fn(dctx, tx) }); err != nil {
		e.Log.Warn(what, "id", id, "err", err)
	}
}
