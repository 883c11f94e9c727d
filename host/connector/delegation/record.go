package delegation

import (
	"context"
	"errors"
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
// recorded before (one it granted and another controller revoked since).
// A failure is logged: the call's result stands either way.
func (m *Module) record(ctx context.Context, service, source string, seen []sighting) {
	now := m.NowMS()
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
	if len(rows) == 0 {
		return
	}
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
