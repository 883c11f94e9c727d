package connector

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"apconnect/host/client"
	"apconnect/host/config"
	"apconnect/host/connector/discourse"
	"apconnect/host/engine"
	"apconnect/host/identity"
	"apconnect/host/inbox"
	"apconnect/host/store"
	"apconnect/host/toolcatalog"
)

// SessionID identifies the MCP session a call comes from.
type SessionID = engine.SessionID

// InboxItem is an actionable request for the agent's attention.
type InboxItem = inbox.Item

// PluginHealth is the state of one plugin or extension.
type PluginHealth = discourse.PluginHealth

// SyncModeExplicit is identity_current's sync_mode: tool reads never sync
// by themselves (a refresh input does); the background live sync is the
// connector process's own work.
const SyncModeExplicit = "explicit"

// ownTools are the tools that span protocols.
func (c *Connector) ownTools() []engine.Tool {
	return []engine.Tool{
		engine.ToolSpec[struct{}, *IdentityCurrentResult]{Name: "agent_protocols_identity_current",
			Call: func(ctx context.Context, sess SessionID, _ *struct{}) (*IdentityCurrentResult, error) {
				return c.IdentityCurrent(ctx, sess)
			},
			Summary: identitySummary}.Tool(),
		engine.ToolSpec[struct{}, *HostsListResult]{Name: "agent_protocols_hosts_list",
			Call: func(ctx context.Context, sess SessionID, _ *struct{}) (*HostsListResult, error) {
				return c.HostsList(ctx, sess)
			},
			Summary: hostsSummary}.Tool(),
		engine.ToolSpec[ServicesListInput, *ServicesListResult]{Name: "agent_protocols_services_list",
			Call: func(ctx context.Context, sess SessionID, in *ServicesListInput) (*ServicesListResult, error) {
				return c.ServicesList(ctx, sess, *in)
			},
			Summary: servicesSummary}.Tool(),
		engine.ToolSpec[SchemaGetInput, *SchemaGetResult]{Name: "agent_protocols_schema_get",
			Call: func(ctx context.Context, sess SessionID, in *SchemaGetInput) (*SchemaGetResult, error) {
				return c.SchemaGet(ctx, sess, *in)
			},
			Summary: schemaSummary}.Tool(),
		engine.ToolSpec[InboxNextInput, *InboxNextResult]{Name: "agent_protocols_inbox_next",
			Call: func(ctx context.Context, sess SessionID, in *InboxNextInput) (*InboxNextResult, error) {
				return c.InboxNext(ctx, sess, *in)
			},
			Summary: inboxSummary}.Tool(),
		engine.ToolSpec[InboxAckInput, *InboxAckResult]{Name: "agent_protocols_inbox_ack",
			Call: func(ctx context.Context, sess SessionID, in *InboxAckInput) (*InboxAckResult, error) {
				return c.InboxAck(ctx, sess, *in)
			},
			Summary: ackSummary}.Tool(),
	}
}

// IdentityCurrent is agent_protocols_identity_current: the Agent ID, its
// public key, the profile services configured for it, the configured
// origins with their grants, the sync mode and every tool served (standard
// and plugin tools). Local state only.
func (c *Connector) IdentityCurrent(ctx context.Context, sess SessionID) (*IdentityCurrentResult, error) {
	hosts, err := c.hostViews(ctx)
	if err != nil {
		return nil, err
	}
	self := c.engine.Self
	profiles := append([]string{}, c.engine.Ident.ProfileServices...)
	tools := toolcatalog.Names()
	for _, t := range c.PluginTools() {
		tools = append(tools, t.MCPName)
	}
	return &IdentityCurrentResult{AgentID: self, PublicKey: strings.TrimPrefix(self, identity.AgentIDPrefix),
		Profiles: profiles, Hosts: hosts, SyncMode: SyncModeExplicit, Tools: tools, Plugins: c.discourse.PluginHealth()}, nil
}

// HostsList is agent_protocols_hosts_list: the operator-configured origins
// with their grants and the features and profile service of their cached
// discovery documents. Local state only.
func (c *Connector) HostsList(ctx context.Context, sess SessionID) (*HostsListResult, error) {
	hosts, err := c.hostViews(ctx)
	if err != nil {
		return nil, err
	}
	return &HostsListResult{Hosts: hosts}, nil
}

// hostViews describes every [[hosts]] entry.
func (c *Connector) hostViews(ctx context.Context) ([]AgentProtocolsHost, error) {
	labels := map[string]string{}
	for _, h := range c.engine.Config.Hosts {
		labels[normalized(h.URL)] = h.Label
	}
	origins := c.engine.HostOrigins()
	out := make([]AgentProtocolsHost, 0, len(origins))
	for _, origin := range origins {
		v := AgentProtocolsHost{Host: origin, Label: labels[origin], Allowed: true, Features: []string{},
			Grants: c.engine.Grants(origin).Names()}
		info, err := c.engine.Store.Read().Host(ctx, origin)
		if err == nil {
			var d client.Discovery
			if json.Unmarshal(info.Discovery, &d) == nil {
				v.Features = append(v.Features, d.Features...)
				if svc, _ := d.Profile["service"].(string); svc != "" {
					v.ProfileService = engine.Ptr(svc)
				}
			}
			v.LastCheckedAt = engine.Ptr(info.CheckedAt)
		}
		out = append(out, v)
	}
	return out, nil
}

// normalized returns a configured URL's origin form ("" when it has none).
func normalized(url string) string {
	o, err := config.NormalizeOrigin(url)
	if err != nil {
		return ""
	}
	return o
}

// MaxInboxWait bounds inbox_next's long poll.
const MaxInboxWait = engine.MaxWait

// InboxNext is agent_protocols_inbox_next: the next pending inbox items of
// every protocol, highest priority first, then oldest. With claim the items
// are leased to this session; with wait_ms and nothing pending it waits up
// to that long, woken by live records. room_id (and host) narrow it to one
// room's items. Local state only; it needs no grant.
func (c *Connector) InboxNext(ctx context.Context, sess SessionID, in InboxNextInput) (*InboxNextResult, error) {
	limit := in.Limit
	if limit <= 0 {
		limit = 10
	}
	limit = min(limit, 50)
	kinds := c.inboxKinds()
	for _, k := range in.Kinds {
		if !slices.Contains(kinds, k) {
			return nil, engine.Invalid("kinds: %q is not an inbox item kind", k)
		}
	}
	if in.WaitMS < 0 {
		return nil, engine.Invalid("wait_ms must not be negative")
	}
	q := store.InboxQuery{Kinds: in.Kinds, Limit: limit}
	if in.RoomID != "" {
		key, ok, err := c.discourse.RoomKey(ctx, in.Host, in.RoomID)
		if err != nil {
			return nil, err
		}
		if !ok {
			pending, err := c.engine.Store.Read().PendingTotal(ctx)
			return &InboxNextResult{Items: []InboxItem{}, PendingCount: max(pending, 0)}, engine.Wrap(err)
		}
		q.RoomKey = key
	}
	page, err := c.engine.Inbox(ctx, sess, q, in.Claim, time.Duration(in.WaitMS)*time.Millisecond)
	if err != nil {
		return nil, err
	}
	return &InboxNextResult{Items: page.Items, PendingCount: page.PendingCount}, nil
}

// inboxKinds lists the kinds of every module's inbox items.
func (c *Connector) inboxKinds() []string {
	var kinds []string
	for _, m := range c.modules {
		if k, ok := m.(interface{ InboxKinds() []string }); ok {
			kinds = append(kinds, k.InboxKinds()...)
		}
	}
	// mail.received is a 0.12.6 kind of Agent Mail: accepted as a filter
	// whether or not a mail module is built.
	if !slices.Contains(kinds, KindMailReceived) {
		kinds = append(kinds, KindMailReceived)
	}
	return kinds
}

// KindMailReceived is the Agent Mail inbox kind of the 0.12.6 catalog.
const KindMailReceived = "mail.received"

// InboxAck is agent_protocols_inbox_ack: handled and dismissed acknowledge
// items for good; defer hides them until defer_until (at once when
// omitted). Unknown ids are left out of acknowledged. Local state only.
func (c *Connector) InboxAck(ctx context.Context, sess SessionID, in InboxAckInput) (*InboxAckResult, error) {
	var until int64
	if in.DeferUntil != nil {
		until = *in.DeferUntil
	}
	acked, pending, err := c.engine.InboxAck(ctx, in.IDs, in.Action, until)
	if err != nil {
		return nil, err
	}
	return &InboxAckResult{Acknowledged: acked, PendingCount: pending}, nil
}

// PendingInboxView returns up to limit pending inbox items, highest
// priority first, and how many are pending in all, without claiming any.
func (c *Connector) PendingInboxView(ctx context.Context, limit int) ([]InboxItem, int64, error) {
	return c.engine.PendingInbox(ctx, limit)
}

// Preflight refuses, before the tool runs, a call of a catalog tool whose
// input names the origin it reaches (its origin_input in schemas/tools)
// when the operator has not granted that origin the tool's capability:
// permission_denied with data {capability, origin}, or host_not_allowed.
// It is the MCP layer's fast refusal; the engine checks the grant again
// wherever a request, a JWT or a signature is made, including for origins
// no input names (a draft's room, a letter's relay).
func (c *Connector) Preflight(tool string, args json.RawMessage) error {
	info, ok := toolcatalog.Info(tool)
	if !ok || !info.Capability.Valid() || info.OriginInput == "" {
		return nil
	}
	var in map[string]json.RawMessage
	if json.Unmarshal(args, &in) != nil {
		return nil // the tool reports malformed arguments itself
	}
	var origin string
	if json.Unmarshal(in[info.OriginInput], &origin) != nil || origin == "" {
		return nil
	}
	return c.engine.Allow(origin, info.Capability)
}
