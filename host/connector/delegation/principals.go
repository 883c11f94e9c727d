package delegation

import (
	"context"
	"errors"
	"net/url"
	"slices"

	"apconnect/host/capability"
	"apconnect/host/client"
	"apconnect/host/engine"
	"apconnect/host/identity"
	proto "apconnect/host/proto/delegation"
	"apconnect/host/text"
)

// originOf returns the normalized origin of an absolute https URL.
func originOf(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Opaque != "" {
		return "", engine.Invalid("%q is not an absolute https URL", text.Truncate(raw, 200))
	}
	o, err := identity.NormalizeOrigin(u.Scheme + "://" + u.Host)
	if err != nil {
		return "", engine.Invalid("%q is not an absolute https URL", text.Truncate(raw, 200))
	}
	return o, nil
}

// allowPrincipal checks that a principal URL may be read: its origin is a
// [[hosts]] origin the operator granted delegation.read (a profile service
// without a [[hosts]] entry has no Delegation grant, so the gate refuses
// it too). It is the SSRF guard the SDK lacks: an agent cannot make the
// connector read any other URL.
func (m *Module) allowPrincipal(raw string) (string, error) {
	origin, err := originOf(raw)
	if err != nil {
		return "", err
	}
	if err := m.Allow(origin, capability.DelegationRead); err != nil {
		return "", err
	}
	if !slices.Contains(m.HostOrigins(), origin) {
		return "", &engine.Error{Code: engine.CodeHostNotAllowed,
			Message: "principal documents are read only from [[hosts]] origins granted delegation.read; " + origin + " is not one",
			Data:    map[string]any{"origin": origin}}
	}
	return origin, nil
}

// resolve resolves a principal (Agent Delegation 3, proto.ResolvePrincipal):
// each URL read is checked by allowPrincipal first and read with the
// engine's gated HTTP client of its origin (client.FetchPrincipal: no
// redirects, bounded in time and size). A document served away from its id
// is a copy: its id is read once more, under the same guard.
func (m *Module) resolve(ctx context.Context, principalURL string) (*proto.PrincipalDocument, error) {
	if _, err := m.allowPrincipal(principalURL); err != nil {
		return nil, err
	}
	var refused error
	read := func(u string) ([]byte, string, error) {
		origin, err := m.allowPrincipal(u)
		if err != nil {
			refused = err
			return nil, "", err
		}
		gctx, err := m.Need(ctx, origin, capability.DelegationRead)
		if err != nil {
			refused = err
			return nil, "", err
		}
		hc, err := m.HTTPClient(origin)
		if err != nil {
			refused = err
			return nil, "", err
		}
		return client.FetchPrincipal(gctx, hc, u)
	}
	doc, _, err := proto.ResolvePrincipal(principalURL, read)
	if err != nil {
		if refused != nil {
			return nil, refused
		}
		return nil, err
	}
	return doc, nil
}

// controllerPrincipal resolves a principal and refuses unless the active
// Agent ID is one of its current controller keys, bound now, with
// delegation authority: a grant that could never be accepted is never
// signed. It returns the document and that controller record.
func (m *Module) controllerPrincipal(ctx context.Context, principalID string) (*proto.PrincipalDocument, *proto.Controller, error) {
	doc, err := m.resolve(ctx, principalID)
	if err != nil {
		return nil, nil, err
	}
	c := doc.FindController(m.Self, false)
	if c == nil || !c.BoundAt(m.NowMS()) {
		return nil, nil, &engine.Error{Code: proto.CodeControllerNotCurrent,
			Message: "the active agent " + m.Self + " is not a current controller key of " + doc.ID,
			Data:    map[string]any{"principal_id": doc.ID}}
	}
	if c.Delegation == nil {
		return nil, nil, &engine.Error{Code: proto.CodeDelegationNotPermitted,
			Message: "the active agent's key carries no delegation authority for " + doc.ID,
			Data:    map[string]any{"principal_id": doc.ID}}
	}
	return doc, c, nil
}

// serviceOf returns the client of a principal's authoritative delegation
// service (its delegation_service origin), which must be configured and
// granted need, and the context carrying that grant.
func (m *Module) serviceOf(ctx context.Context, doc *proto.PrincipalDocument, need capability.Capability) (context.Context, *client.DelegationService, error) {
	if doc.DelegationService == "" {
		return nil, nil, &engine.Error{Code: proto.CodePrincipalUnresolvable,
			Message: "principal " + doc.ID + " publishes no delegation_service", Data: map[string]any{"principal_id": doc.ID}}
	}
	return m.service(ctx, doc.DelegationService, need)
}

// service returns the client of a delegation service origin granted need,
// and the context carrying the grant.
func (m *Module) service(ctx context.Context, origin string, need capability.Capability) (context.Context, *client.DelegationService, error) {
	if err := m.Allow(origin, need); err != nil {
		return nil, nil, err
	}
	svc, err := m.serviceClient(origin)
	if err != nil {
		return nil, nil, err
	}
	gctx, err := m.Need(ctx, svc.Origin(), need)
	if err != nil {
		return nil, nil, err
	}
	return gctx, svc, nil
}

// serviceClient returns the client of a configured origin without a grant
// check (discovery needs none; every other request is gated by Need).
func (m *Module) serviceClient(origin string) (*client.DelegationService, error) {
	norm, err := m.Configured(origin)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.services[norm]; ok {
		return s, nil
	}
	hc, err := m.HTTPClient(norm)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	s, err := client.NewDelegationService(norm, hc, m.Signer(), m.ClientOptions())
	if err != nil {
		return nil, engine.Wrap(err)
	}
	m.services[norm] = s
	return s, nil
}

// previous reads the credential stored under id, nil when the service has
// none (404).
func previous(ctx context.Context, svc *client.DelegationService, id string) (*proto.Credential, error) {
	cred, _, err := svc.Credential(ctx, id)
	var he *client.Error
	if errors.As(err, &he) && he.Status == 404 {
		return nil, nil
	}
	return cred, err
}

// defaultService is the delegation service a subject's listing uses when
// the call names none: the first [[hosts]] origin granted delegation.read.
func (m *Module) defaultService() (string, error) {
	for _, o := range m.HostOrigins() {
		if m.Grants(o).Has(capability.DelegationRead) {
			return o, nil
		}
	}
	return "", engine.Errorf(engine.CodeHostNotAllowed, "no configured host is granted delegation.read; name a delegation_service")
}
