package discourse

import (
	"context"
	"encoding/json"

	"golang.org/x/sync/errgroup"

	"apconnect/host/store"
)

// maxProfileFetches bounds the profile fetches in flight for one call.
const maxProfileFetches = 8

// attachProfiles fills the profiles of member views through Options.Profiles
// (at most maxProfileFetches fetched at once; a member whose profile cannot
// be verified gets none). The profile service the host announces in its
// discovery document is asked first.
func (c *Module) attachProfiles(ctx context.Context, h *hostState, views []RoomMemberView) {
	if c.opts.Profiles == nil {
		return
	}
	service := ""
	if d, err := h.client.Discovery(ctx); err == nil {
		service, _ = d.Profile["service"].(string)
	}
	var g errgroup.Group
	g.SetLimit(maxProfileFetches)
	for i := range views {
		v := &views[i]
		g.Go(func() error {
			if p, err := c.opts.Profiles.MemberProfile(ctx, service, v.AgentID); err == nil {
				v.Profile = p
			}
			return nil
		})
	}
	_ = g.Wait() // every fetch returns nil: an unverifiable profile is left out
}

// discover reads a host's discovery document and caches it for hosts_list.
func (c *Module) discover(ctx context.Context, h *hostState) error {
	d, err := h.client.Discovery(ctx)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(d)
	if err != nil {
		return err
	}
	now := c.NowMS()
	return c.Store.Write(ctx, func(tx *store.Tx) error {
		return tx.PutHost(ctx, store.HostInfo{Host: h.origin, Discovery: raw, CheckedAt: now})
	})
}
