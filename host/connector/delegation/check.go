package delegation

import (
	"context"
	"crypto/sha3"
	"fmt"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"apconnect/host/capability"
	"apconnect/host/client"
	"apconnect/host/engine"
	"apconnect/host/identity"
	proto "apconnect/host/proto/delegation"
	"apconnect/host/store"
)

// DelegationCheck is agent_protocols_delegation_check: a relying party's
// check. The principal is resolved at its own id (a document read for a
// check serves the next checks for PrincipalTTL); its authoritative
// service (its delegation_service, never a URL a presenter supplies)
// answers a public existence query for subject (default: the active agent)
// and the principal; every credential's whole history is read (every page)
// and each record's signature checked, then proto.VerifyCredential says
// whether it is usable for audience now, with every failed check in
// reasons. A revoked or expired credential is listed, not usable. Reads the
// host; signs nothing.
//
// When the same check ran before, the histories of the credentials it found
// then are read while the query is asked, and each is used only if it ends
// with the latest event of the credential the query returns now (otherwise
// it is read again): every answer rests on reads of this call.
func (m *Module) DelegationCheck(ctx context.Context, in DelegationCheckInput) (*DelegationCheckResult, error) {
	if _, err := m.allowPrincipal(in.PrincipalID); err != nil {
		return nil, err
	}
	subject := in.Subject
	if subject == "" {
		subject = m.Self
	}
	if !identity.ValidAgentID(subject) {
		return nil, engine.Invalid("subject %q is not an Agent ID", subject)
	}
	doc, err := m.checkPrincipal(ctx, in.PrincipalID)
	if err != nil {
		return nil, err
	}
	gctx, svc, err := m.serviceOf(ctx, doc, capability.DelegationRead)
	if err != nil {
		return nil, err
	}
	key := checkKey{principal: doc.ID, subject: subject, id: in.ID, cursor: in.Cursor, limit: in.Limit}
	early := m.startHistories(gctx, svc, m.lastCheck(key), doc.ID)
	defer early.wait()
	q := &proto.QueryRequest{Subject: subject, PrincipalID: doc.ID, ID: in.ID, Cursor: in.Cursor, Limit: in.Limit}
	page, err := svc.Query(gctx, q, false)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	out := &DelegationCheckResult{CanonicalID: doc.ID, QueryURL: page.URL, Delegations: make([]Verdict, len(page.Credentials)),
		Complete: page.NextCursor == "", NextCursor: page.NextCursor}
	ids := make([]string, len(page.Credentials))
	var g errgroup.Group
	g.SetLimit(maxHistoryReads)
	for i, cred := range page.Credentials {
		ids[i] = cred.ID
		g.Go(func() error {
			a, ok := early.history(cred)
			if !ok {
				a = historyAnswer{}
				a.records, a.err = svc.AllEvents(gctx, cred.ID)
			}
			out.Delegations[i] = m.verify(cred, a, doc, in.Audience)
			return nil
		})
	}
	_ = g.Wait()
	m.rememberCheck(key, ids)
	now := m.NowMS()
	seen := make([]sighting, len(page.Credentials))
	for i, cred := range page.Credentials {
		v := out.Delegations[i]
		seen[i] = sighting{cred: cred, check: &store.DelegationVerdict{Audience: in.Audience, Verified: v.Verified, Usable: v.Usable,
			Reasons: v.Reasons, At: now}}
	}
	m.recordBehind(ctx, svc.Origin(), store.DelegationFromCheck, seen)
	return out, nil
}

// PrincipalTTL is how long a principal document read for a check serves
// the next checks of that principal: well inside the protocol's own bound
// on how old a principal read may be where it decides authority
// (proto.MaxPrincipalAge, 300 s, for a service accepting an event). Grants,
// revocations, listings and histories read the principal every time.
const PrincipalTTL = 30 * time.Second

// checkPrincipal resolves a principal for a check, or returns the document
// a check read less than PrincipalTTL ago.
func (m *Module) checkPrincipal(ctx context.Context, url string) (*proto.PrincipalDocument, error) {
	now := m.Now()
	m.mu.Lock()
	c, ok := m.principals[url]
	m.mu.Unlock()
	if ok && now.Sub(c.read) >= 0 && now.Sub(c.read) < PrincipalTTL {
		return c.doc, nil
	}
	doc, err := m.resolve(ctx, url)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	if len(m.principals) >= maxRemembered {
		clear(m.principals)
	}
	m.principals[url] = cachedPrincipal{doc: doc, read: now}
	m.mu.Unlock()
	return doc, nil
}

// cachedPrincipal is a principal document a check read, and when.
type cachedPrincipal struct {
	doc  *proto.PrincipalDocument
	read time.Time
}

// maxHistoryReads bounds the credential histories one check reads at once.
const maxHistoryReads = 4

// histories are the histories a check reads before its query answered.
type histories map[string]chan historyAnswer

// historyAnswer is a credential's history as read (records, or the read's
// error) and, once checked, the check of its records (checkRecords).
type historyAnswer struct {
	records []proto.Record
	err     error
	checked bool
	recErr  error
}

// startHistories reads the histories of the credentials a check found last
// time (at most maxHistoryReads) and checks their records, while the query
// is asked.
func (m *Module) startHistories(ctx context.Context, svc *client.DelegationService, ids []string, principal string) histories {
	if len(ids) == 0 || len(ids) > maxHistoryReads {
		return nil
	}
	h := histories{}
	for _, id := range ids {
		ch := make(chan historyAnswer, 1)
		h[id] = ch
		go func() {
			a := historyAnswer{}
			if a.records, a.err = svc.AllEvents(ctx, id); a.err == nil {
				a.recErr, a.checked = m.checkRecords(a.records, id, principal), true
			}
			ch <- a
		}()
	}
	return h
}

// history returns the early history of a credential, with its records'
// check, when it ends with the credential's latest event, so that nothing
// the query saw is missing.
func (h histories) history(cred *proto.Credential) (historyAnswer, bool) {
	ch, ok := h[cred.ID]
	if !ok {
		return historyAnswer{}, false
	}
	a := <-ch
	ch <- a
	if a.err != nil || len(a.records) == 0 || a.records[len(a.records)-1].Envelope.Hash != cred.EventID {
		return historyAnswer{}, false
	}
	return a, true
}

// wait waits for every early read, so none outlives the call.
func (h histories) wait() {
	for _, ch := range h {
		a := <-ch
		ch <- a
	}
}

// verify verifies a credential's whole history for audience:
// proto.VerifyCredential beside the check of every record (checkRecords),
// unless an early read already checked them.
func (m *Module) verify(cred *proto.Credential, h historyAnswer, doc *proto.PrincipalDocument, audience string) Verdict {
	if h.err != nil {
		return Verdict{Credential: cred.Value(), Reasons: []string{"history unavailable: " + engine.AsError(h.err).Message}}
	}
	var v proto.Verdict
	var wg sync.WaitGroup
	wg.Go(func() {
		v = proto.VerifyCredentialWith(m.validateEnvelope, cred, h.records, doc, doc.ID, audience, m.NowMS())
	})
	if !h.checked {
		h.recErr = m.checkRecords(h.records, cred.ID, doc.ID)
	}
	wg.Wait()
	if h.recErr != nil {
		v.Verified, v.Usable = false, false
		v.Reasons = append([]string{h.recErr.Error()}, v.Reasons...)
	}
	return Verdict{Credential: cred.Value(), Verified: v.Verified, Usable: v.Usable, Reasons: v.Reasons}
}

// checkRecords checks every accepted record of a credential, in parallel:
// a valid delegation envelope (hash and strict signature) naming the
// credential's id and principal. The first failing record, in order, is
// the error.
func (m *Module) checkRecords(records []proto.Record, id, principal string) error {
	errs := make([]error, len(records))
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i := range records {
		g.Go(func() error {
			ev, err := m.validateEnvelope(records[i].Envelope)
			switch {
			case err != nil:
				errs[i] = fmt.Errorf("history record %d does not verify: %s", i, engine.AsError(err).Message)
			case ev.CredentialID() != id || ev.PrincipalID() != principal:
				errs[i] = fmt.Errorf("history record %d is not an event of %s", i, id)
			}
			return nil
		})
	}
	_ = g.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// validateEnvelope is proto.ValidateEnvelope remembering what it proved:
// for an envelope whose event equals, member for member
// (identity.Event.Equal), one that passed before under the same hash,
// actor and signature, the earlier outcome stands — equal events have the
// same canonical form, so the same hash, and a verification depends on
// nothing else. Any other envelope is canonicalized and hashed (the hash
// must match its content), and its strict signature is checked unless it
// was verified for that hash and actor before.
func (m *Module) validateEnvelope(env *identity.Envelope) (*proto.Event, error) {
	key := env.Hash + "|" + env.Event.Actor + "|" + env.Signature
	m.mu.Lock()
	prev := m.verified[key]
	m.mu.Unlock()
	if prev != nil && prev.event.Equal(&env.Event) {
		return prev.decoded, nil
	}
	canon, err := env.Event.Canonical()
	if err != nil {
		return nil, identity.NewError(identity.CodeInvalidEvent, "/event", "cannot canonicalize event: %v", err)
	}
	digest := sha3.Sum256(canon)
	if identity.EncodeBase64URL(digest[:]) != env.Hash {
		return nil, identity.NewError(identity.CodeInvalidEventHash, "/hash", "hash does not match the event content")
	}
	var ev *proto.Event
	if prev != nil {
		ev, err = proto.EventFromIdentity(&env.Event, "/event")
	} else {
		ev, err = proto.ValidateEnvelope(env)
	}
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	if len(m.verified) >= maxVerified {
		clear(m.verified)
	}
	m.verified[key] = &verifiedEvent{event: env.Event, decoded: ev}
	m.mu.Unlock()
	return ev, nil
}

// verifiedEvent is an event whose envelope passed validateEnvelope, and its
// decoded form (never modified: the rules only read events).
type verifiedEvent struct {
	event   identity.Event
	decoded *proto.Event
}

// maxVerified bounds the remembered signature verifications.
const maxVerified = 4096

// checkKey identifies a check for the histories it may read early.
type checkKey struct {
	principal, subject, id, cursor string
	limit                          int64
}

// maxRemembered bounds the checks and principals remembered.
const maxRemembered = 256

// lastCheck returns the credentials the same check found last time.
func (m *Module) lastCheck(k checkKey) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.checks[k]
}

// rememberCheck notes the credentials a check found.
func (m *Module) rememberCheck(k checkKey, ids []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.checks) >= maxRemembered {
		clear(m.checks)
	}
	m.checks[k] = ids
}
