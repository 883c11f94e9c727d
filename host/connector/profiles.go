package connector

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"golang.org/x/sync/errgroup"

	"apconnect/host/client"
	"apconnect/host/config"
	"apconnect/host/identity"
	"apconnect/host/store"
)

// profileService returns the client of a profile service origin. Only
// origins the operator configured are used: the identity's profile services
// and the configured hosts (a hub serves profiles on its own origin).
func (c *Connector) profileService(origin string) (*client.ProfileService, error) {
	norm, err := config.NormalizeOrigin(origin)
	if err != nil {
		return nil, errorf(CodeHostNotAllowed, "profile service %q is not an https origin", origin)
	}
	c.profMu.Lock()
	ps, ok := c.profiles[norm]
	c.profMu.Unlock()
	if ok {
		return ps, nil
	}
	if _, ok := c.hosts[norm]; !ok {
		allowed := false
		for _, s := range c.ident.ProfileServices {
			if n, err := config.NormalizeOrigin(s); err == nil && n == norm {
				allowed = true
			}
		}
		if !allowed {
			return nil, &Error{Code: CodeHostNotAllowed, Message: "profile service " + norm + " is not configured for this identity",
				Data: map[string]any{"allowed": c.profileOrigins()}}
		}
	}
	var cl *client.ProfileService
	if h, ok := c.hosts[norm]; ok {
		cl, err = client.NewProfileService(norm, h.http, c.opts.Client)
	} else {
		hcl, err2 := c.opts.HTTPClient(norm, nil)
		if err2 != nil {
			return nil, wrap(err2)
		}
		c.profMu.Lock()
		c.profileHTTP = append(c.profileHTTP, hcl)
		c.profMu.Unlock()
		cl, err = client.NewProfileService(norm, hcl, c.opts.Client)
	}
	if err != nil {
		return nil, wrap(err)
	}
	c.profMu.Lock()
	c.profiles[norm] = cl
	c.profMu.Unlock()
	return cl, nil
}

// profileOrigins lists the profile service origins the connector may use.
func (c *Connector) profileOrigins() []string {
	var out []string
	for _, s := range c.ident.ProfileServices {
		if n, err := config.NormalizeOrigin(s); err == nil {
			out = append(out, n)
		}
	}
	return append(out, c.hostOrder...)
}

// profileServicesFor lists the services to read an agent's profile from
// for a room on h: the host's own profile service when its discovery names
// one on a configured origin, then the identity's services.
func (c *Connector) profileServicesFor(ctx context.Context, h *hostState) []string {
	var out []string
	if d, err := h.client.Discovery(ctx); err == nil {
		if svc, _ := d.Profile["service"].(string); svc != "" {
			if n, err := config.NormalizeOrigin(svc); err == nil {
				if _, err := c.profileService(n); err == nil {
					out = append(out, n)
				}
			}
		}
	}
	for _, s := range c.ident.ProfileServices {
		if n, err := config.NormalizeOrigin(s); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// verifiedProfile returns an agent's profile verified against the signed
// history: the pinned profile while fresh, otherwise the latest accepted
// profile.update read from a profile service, whose envelope must verify,
// be a profile.update of that Agent ID, and not be older than the pinned
// one (a rollback is refused and the pinned profile kept).
func (c *Connector) verifiedProfile(ctx context.Context, h *hostState, agentID string) (*store.Profile, error) {
	now := c.nowMS()
	pinned, err := c.store.Read().Profile(ctx, agentID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, wrap(err)
	}
	if pinned != nil && now-pinned.FetchedAt < DefaultProfileTTL.Milliseconds() {
		return pinned, nil
	}
	var lastErr error
	for _, svc := range c.profileServicesFor(ctx, h) {
		p, err := c.fetchProfile(ctx, svc, agentID)
		if err != nil {
			lastErr = err
			continue
		}
		err = c.store.Write(ctx, func(tx *store.Tx) error { return tx.PutProfile(ctx, p) })
		if errors.Is(err, store.ErrRollback) {
			c.log.Warn("profile service served an older profile; keeping the pinned one", "service", svc, "agent", agentID)
			return pinned, nil
		}
		if err != nil {
			return nil, wrap(err)
		}
		return p, nil
	}
	if pinned != nil {
		return pinned, nil
	}
	if lastErr == nil {
		lastErr = errorf(CodeNotFound, "no profile service is configured for %s", agentID)
	}
	return nil, wrap(lastErr)
}

// fetchProfile reads and verifies the latest profile.update of an agent.
func (c *Connector) fetchProfile(ctx context.Context, svc, agentID string) (*store.Profile, error) {
	ps, err := c.profileService(svc)
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
		return nil, errorf(CodeNotFound, "no profile for %s", agentID)
	}
	return profileFromEnvelope(svc, agentID, page.Items[0], c.nowMS())
}

// profileFromEnvelope verifies a profile.update envelope of agentID and
// materializes its document (Agent Profile 4, 6).
func profileFromEnvelope(svc, agentID string, env *identity.Envelope, now int64) (*store.Profile, error) {
	if err := env.Verify(); err != nil {
		return nil, err
	}
	ev := &env.Event
	payload, _ := ev.Payload.(map[string]any)
	if ev.Protocol != identity.ProtocolProfile || ev.Type != "profile.update" || ev.Actor != agentID || payload == nil || payload["id"] != agentID {
		return nil, errorf(identity.CodeInvalidEvent, "profile history of %s holds an envelope that is not its profile.update", agentID)
	}
	doc := map[string]any{}
	for _, k := range []string{"id", "name", "description", "avatar_url", "provider", "capabilities", "service_endpoints", "links", "delegations", "extra"} {
		if v, ok := payload[k]; ok {
			doc[k] = v
		}
	}
	doc["updated_at"] = ev.CreatedAt
	doc["event_id"] = env.Hash
	docJSON, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	envJSON, err := json.Marshal(env)
	if err != nil {
		return nil, err
	}
	return &store.Profile{AgentID: agentID, Service: svc, Nonce: ev.Nonce, EventID: env.Hash, Document: docJSON, Envelope: envJSON, FetchedAt: now}, nil
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

// maxProfileFetches bounds the profile fetches in flight for one call.
const maxProfileFetches = 8

// attachProfiles fills the profiles of member views (at most
// maxProfileFetches fetched at once; a member whose profile cannot be verified gets none).
func (c *Connector) attachProfiles(ctx context.Context, h *hostState, views []RoomMemberView) {
	var g errgroup.Group
	g.SetLimit(maxProfileFetches)
	for i := range views {
		v := &views[i]
		g.Go(func() error {
			if p, err := c.verifiedProfile(ctx, h, v.AgentID); err == nil {
				v.Profile = memberProfile(p)
			}
			return nil
		})
	}
	_ = g.Wait() // every fetch returns nil: an unverifiable profile is left out
}
