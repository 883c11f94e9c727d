package profile

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"time"

	"apconnect/host/capability"
	"apconnect/host/client"
	"apconnect/host/config"
	"apconnect/host/engine"
	"apconnect/host/identity"
	proto "apconnect/host/proto/profile"
	"apconnect/host/room"
	"apconnect/host/store"
)

// Module is the Agent Profile part of the connector: profile reads
// (verified against each profile.update envelope, pinned at the greatest
// nonce seen) and the agent's own profile updates, with one exported method
// per Profile tool, and the member-profile lookup the Discourse module uses.
type Module struct {
	*engine.Engine
	mu       sync.Mutex
	services map[string]*client.ProfileService // by origin, under mu
}

// New builds the module on e. It does no network I/O.
func New(e *engine.Engine) *Module {
	m := &Module{Engine: e, services: map[string]*client.ProfileService{}}
	e.RegisterSubmitter(OutboxProfileUpdate, capability.ProfileWrite, resubmitter{m})
	return m
}

// Name is the module's name.
func (c *Module) Name() string { return "profile" }

// Protocol is agent-profile/1.0.
func (c *Module) Protocol() string { return Protocol }

// profileService returns the client of a configured profile service
// origin: the identity's profile services and the configured hosts (a hub
// serves profiles on its own origin). c is the capability the call needs
// there.
func (c *Module) profileService(origin string, need capability.Capability) (*client.ProfileService, error) {
	if err := c.Allow(origin, need); err != nil {
		return nil, err
	}
	return c.serviceClient(origin)
}

// serviceClient returns the client of a configured origin without a grant
// check (discovery needs none; every other request is gated by Need).
func (c *Module) serviceClient(origin string) (*client.ProfileService, error) {
	norm, err := c.Configured(origin)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ps, ok := c.services[norm]; ok {
		return ps, nil
	}
	hc, err := c.HTTPClient(norm)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	ps, err := client.NewProfileService(norm, hc, c.ClientOptions())
	if err != nil {
		return nil, engine.Wrap(err)
	}
	c.services[norm] = ps
	return ps, nil
}

// profileOrigins lists the profile service origins of the identity, then
// the configured hosts.
func (c *Module) profileOrigins() []string {
	var out []string
	for _, s := range c.Ident.ProfileServices {
		if n, err := config.NormalizeOrigin(s); err == nil {
			out = append(out, n)
		}
	}
	for _, h := range c.HostOrigins() {
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// servicesFor lists the services to read an agent's profile from: service
// (a room host's announced profile service) when it is a configured origin,
// then the identity's profile services.
func (c *Module) servicesFor(service string) []string {
	var out []string
	if service != "" {
		if n, err := c.Configured(service); err == nil {
			out = append(out, n)
		}
	}
	for _, s := range c.Ident.ProfileServices {
		if n, err := config.NormalizeOrigin(s); err == nil && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// MemberProfile returns the descriptive metadata of an Agent ID's verified
// profile, read first from service (see servicesFor). It implements the
// Discourse module's profile lookup.
func (c *Module) MemberProfile(ctx context.Context, service, agentID string) (*room.MemberProfile, error) {
	p, err := c.verifiedProfile(ctx, service, agentID)
	if err != nil {
		return nil, err
	}
	return memberProfile(p), nil
}

// verifiedProfile returns an agent's profile verified against the signed
// history: the pinned profile while fresh, otherwise the latest accepted
// profile.update read from a profile service, whose envelope must verify,
// be a profile.update of that Agent ID, and not be older than the pinned
// one (a rollback is refused and the pinned profile kept).
func (c *Module) verifiedProfile(ctx context.Context, service, agentID string) (*store.Profile, error) {
	now := c.NowMS()
	pinned, err := c.Store.Read().Profile(ctx, agentID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, engine.Wrap(err)
	}
	if pinned != nil && now-pinned.FetchedAt < DefaultProfileTTL.Milliseconds() {
		return pinned, nil
	}
	var lastErr error
	for _, svc := range c.servicesFor(service) {
		p, err := c.fetchProfile(ctx, svc, agentID)
		if err != nil {
			lastErr = err
			continue
		}
		err = c.Store.Write(ctx, func(tx *store.Tx) error { return tx.PutProfile(ctx, p) })
		if errors.Is(err, store.ErrRollback) {
			c.Log.Warn("profile service served an older profile; keeping the pinned one", "service", svc, "agent", agentID)
			return pinned, nil
		}
		if err != nil {
			return nil, engine.Wrap(err)
		}
		return p, nil
	}
	if pinned != nil {
		return pinned, nil
	}
	if lastErr == nil {
		lastErr = engine.Errorf(engine.CodeNotFound, "no profile service is configured for %s", agentID)
	}
	return nil, engine.Wrap(lastErr)
}

// fetchProfile reads and verifies the latest profile.update of an agent.
func (c *Module) fetchProfile(ctx context.Context, svc, agentID string) (*store.Profile, error) {
	ps, err := c.profileService(svc, capability.ProfileRead)
	if err != nil {
		return nil, err
	}
	ctx, err = c.Need(ctx, ps.Origin(), capability.ProfileRead)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	page, err := ps.History(ctx, agentID, 1, "")
	if err != nil {
		return nil, err
	}
	if len(page.Items) == 0 {
		return nil, engine.Errorf(engine.CodeNotFound, "no profile for %s", agentID)
	}
	return profileFromEnvelope(svc, agentID, page.Items[0], c.NowMS())
}

// profileFromEnvelope verifies a profile.update envelope of agentID and
// materializes its document (host/proto/profile), as the store pins it.
func profileFromEnvelope(svc, agentID string, env *identity.Envelope, now int64) (*store.Profile, error) {
	m, err := proto.Materialize(agentID, env)
	if err != nil {
		return nil, err
	}
	envJSON, err := json.Marshal(env)
	if err != nil {
		return nil, err
	}
	return &store.Profile{AgentID: agentID, Service: svc, Nonce: m.Nonce, EventID: m.EventID, Document: m.Document, Envelope: envJSON, FetchedAt: now}, nil
}

// memberProfile is the descriptive view of a verified profile.
func memberProfile(p *store.Profile) *MemberProfile {
	if p == nil {
		return nil
	}
	var doc map[string]any
	if json.Unmarshal(p.Document, &doc) != nil {
		return nil
	}
	mp := &MemberProfile{}
	mp.Name, _ = doc["name"].(string)
	mp.Description, _ = doc["description"].(string)
	if a, ok := doc["avatar_url"].(string); ok {
		mp.AvatarURL = &a
	}
	return mp
}
