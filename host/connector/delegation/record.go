package delegation

import (
	"context"
	"errors"
	"sync"
	"time"

	proto "apconnect/host/proto/delegation"
	"apconnect/host/store"
)

// The local record of the credentials the agent has seen
// (store.DelegationCredential): those it signed an event of — its grants
// and revocations, and any whose latest event it signed — and those naming
// it as subject, as its tools last returned them, with the last check's
// verdict. The services hold the credentials and every check reads them
// again; the record is for the operator's view and changes no tool's
// result.

// recordTimeout bounds writing the record, which runs even when the call's
// context ended.
const recordTimeout = 10 * time.Second

// sighting is one credential a tool returned, and what it made of it.
type sighting struct {
	cred   *proto.Credential
	signed bool
	check  *store.DelegationVerdict
}

// record records the credentials of one call at service that concern the
// agent — signed by it or naming it as subject — and refreshes those
// recorded before (one it granted and another controller revoked since),
// and returns once they are written. A failure is logged: the call's
// result stands either way.
func (m *Module) record(ctx context.Context, service, source string, seen []sighting) {
	m.recordBehind(ctx, service, source, seen)
	m.rec.flush()
}

// recordBehind is record without the wait: the rows are written by the
// module's recorder after the call returns, in the order of the calls
// (a check's verdict never overwrites a later one). A check uses it — its
// SQLite write was a fifth of the check's time, and no tool reads the
// record — and Flush (or Close) waits for it.
func (m *Module) recordBehind(ctx context.Context, service, source string, seen []sighting) {
	now := m.NowMS()
	rows := m.recordRows(service, source, seen, now)
	if len(rows) == 0 {
		return
	}
	m.rec.enqueue(func() { m.writeRecord(ctx, service, rows) })
}

// recordRows are the rows of one call's sightings.
func (m *Module) recordRows(service, source string, seen []sighting, now int64) []*store.DelegationCredential {
	rows := make([]*store.DelegationCredential, 0, len(seen))
	for _, s := range seen {
		c := s.cred
		row := &store.DelegationCredential{Service: service, ID: c.ID, Principal: c.PrincipalID, Subject: c.Subject,
			Controller: c.Controller, EventID: c.EventID, Status: string(c.StatusAt(now)), Scopes: c.Scopes, Audiences: c.Audiences,
			AcceptedAt: c.AcceptedAt, Signed: s.signed || c.Controller == m.Self, Source: source, SeenAt: now, Check: s.check}
		if c.ExpiresAt != nil {
			row.ExpiresAt = *c.ExpiresAt
		}
		rows = append(rows, row)
	}
	return rows
}

// writeRecord writes the rows of one call in one transaction.
func (m *Module) writeRecord(ctx context.Context, service string, rows []*store.DelegationCredential) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	err := m.Store.Write(dctx, func(tx *store.Tx) error {
		for _, r := range rows {
			if !r.Signed && r.Subject != m.Self {
				if _, err := tx.DelegationCredential(dctx, r.Service, r.ID); errors.Is(err, store.ErrNotFound) {
					continue
				} else if err != nil {
					return err
				}
			}
			if err := tx.RecordDelegationCredential(dctx, r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		m.Log.Warn("recording delegation credentials", "service", service, "err", err)
	}
}

// Flush waits until the record of every call that returned before it is
// written (a check's is written behind the call).
func (m *Module) Flush() { m.rec.flush() }

// StartBackground does nothing: the module's only background work is its
// recorder, which runs while it has rows to write.
func (m *Module) StartBackground(context.Context) {}

// StopBackground waits for the recorder, so that no call's record is lost
// at a clean stop.
func (m *Module) StopBackground() error {
	m.rec.flush()
	return nil
}

// recorder runs queued writes one at a time, in order, on a goroutine that
// lives while the queue is not empty.
type recorder struct {
	mu   sync.Mutex
	jobs []func()
	done chan struct{} // nil while idle; closed when the queue drains
}

// enqueue adds a job, starting the worker when it is idle.
func (r *recorder) enqueue(job func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.jobs = append(r.jobs, job)
	if r.done == nil {
		r.done = make(chan struct{})
		go r.run(r.done)
	}
}

// run drains the queue, then closes done.
func (r *recorder) run(done chan struct{}) {
	for {
		r.mu.Lock()
		if len(r.jobs) == 0 {
			r.done = nil
			r.mu.Unlock()
			close(done)
			return
		}
		job := r.jobs[0]
		r.jobs[0] = nil
		r.jobs = r.jobs[1:]
		r.mu.Unlock()
		job()
	}
}

// flush waits until the queue is empty and its last job has run.
func (r *recorder) flush() {
	r.mu.Lock()
	done := r.done
	r.mu.Unlock()
	if done != nil {
		<-done
	}
}
