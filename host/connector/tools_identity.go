package connector

import (
	"context"
	"encoding/json"
	"strings"

	"apconnect/host/client"
	"apconnect/host/identity"
	"apconnect/host/store"
	"apconnect/host/toolcatalog"
)

// SyncModeExplicit is identity_current's sync_mode: tool reads never sync
// by themselves (a refresh input does); the background live sync is the
// connector process's own work.
const SyncModeExplicit = "explicit"

// IdentityCurrent is agent_protocols_identity_current: the Agent ID, its
// public key, the profile services configured for it, the allowed hosts,
// the sync mode and every tool served (standard and plugin tools). Local
// state only.
func (c *Connector) IdentityCurrent(ctx context.Context, sess SessionID) (*IdentityCurrentResult, error) {
	hosts, err := c.hostViews(ctx)
	if err != nil {
		return nil, err
	}
	profiles := append([]string{}, c.ident.ProfileServices...)
	tools := toolcatalog.Names()
	for _, t := range c.toolList {
		tools = append(tools, t.MCPName)
	}
	return &IdentityCurrentResult{AgentID: c.self, PublicKey: strings.TrimPrefix(c.self, identity.AgentIDPrefix),
		Profiles: profiles, Hosts: hosts, SyncMode: SyncModeExplicit, Tools: tools, Plugins: c.pluginHealth()}, nil
}

// HostsList is agent_protocols_hosts_list: the operator-configured hosts
// with the features and profile service of their cached discovery
// documents. Local state only.
func (c *Connector) HostsList(ctx context.Context, sess SessionID) (*HostsListResult, error) {
	hosts, err := c.hostViews(ctx)
	if err != nil {
		return nil, err
	}
	return &HostsListResult{Hosts: hosts}, nil
}

func (c *Connector) hostViews(ctx context.Context) ([]AgentProtocolsHost, error) {
	out := make([]AgentProtocolsHost, 0, len(c.hostOrder))
	for _, origin := range c.hostOrder {
		h := c.hosts[origin]
		v := AgentProtocolsHost{Host: origin, Label: h.label, Allowed: true, Features: []string{}}
		info, err := c.store.Read().Host(ctx, origin)
		if err == nil {
			var d client.Discovery
			if json.Unmarshal(info.Discovery, &d) == nil {
				v.Features = append(v.Features, d.Features...)
				if svc, _ := d.Profile["service"].(string); svc != "" {
					v.ProfileService = ptr(svc)
				}
			}
			v.LastCheckedAt = ptr(info.CheckedAt)
		}
		out = append(out, v)
	}
	return out, nil
}

// discover reads a host's discovery document and caches it for hosts_list.
func (c *Connector) discover(ctx context.Context, h *hostState) (*client.Discovery, error) {
	d, err := h.client.Discovery(ctx)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	now := c.nowMS()
	err = c.store.Write(ctx, func(tx *store.Tx) error {
		return tx.PutHost(ctx, store.HostInfo{Host: h.origin, Discovery: raw, CheckedAt: now})
	})
	return d, err
}
