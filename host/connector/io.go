package connector

import (
	"encoding/json"

	"apconnect/host/engine"
)

// IdentityCurrentResult is the result of agent_protocols_identity_current.
type IdentityCurrentResult struct {
	AgentID   string               `json:"agent_id"`
	PublicKey string               `json:"public_key"`
	Profiles  []string             `json:"profiles"`
	Hosts     []AgentProtocolsHost `json:"hosts"`
	// SyncMode is "explicit" (the 0.12.6 value): tool reads never sync by
	// themselves (refresh does); apconnect's background live sync keeps
	// member, subscribed and watched rooms current.
	SyncMode string `json:"sync_mode"`
	// Tools lists every tool this connector serves: the standard catalog
	// and the plugins' tools.
	Tools []string `json:"tools"`
	// Plugins reports the health of plugin extensions (validators,
	// watchers, tool providers) when any is configured.
	Plugins []PluginHealth `json:"plugins,omitempty"`
}

// HostsListResult is the result of agent_protocols_hosts_list.
type HostsListResult struct {
	Hosts []AgentProtocolsHost `json:"hosts"`
}

// InboxNextInput is the input of agent_protocols_inbox_next.
type InboxNextInput struct {
	RoomID string   `json:"room_id,omitempty"`
	Host   string   `json:"host,omitempty"`
	Kinds  []string `json:"kinds,omitempty"`
	Limit  int      `json:"limit,omitempty"`
	WaitMS int64    `json:"wait_ms,omitempty"`
	Claim  bool     `json:"claim,omitempty"`
}

// InboxNextResult is the result of agent_protocols_inbox_next.
type InboxNextResult struct {
	Items        []InboxItem `json:"items"`
	PendingCount int64       `json:"pending_count"`
}

// InboxAckInput is the input of agent_protocols_inbox_ack.
type InboxAckInput struct {
	IDs        []string `json:"ids"`
	Action     string   `json:"action"`
	DeferUntil *int64   `json:"defer_until,omitempty"`
}

// InboxAckResult is the result of agent_protocols_inbox_ack.
type InboxAckResult struct {
	Acknowledged []string `json:"acknowledged"`
	PendingCount int64    `json:"pending_count"`
}

// ServicesListInput is the input of agent_protocols_services_list.
type ServicesListInput struct {
	Host     string `json:"host,omitempty"`
	Protocol string `json:"protocol,omitempty"`
}

// ServicesListResult is the result of agent_protocols_services_list: each
// discovery document as the service sent it, and the origins or protocols
// that could not be read.
type ServicesListResult struct {
	Services []map[string]any `json:"services"`
	Errors   []ServiceError   `json:"errors"`
}

// ServiceError is one discovery document services_list could not read.
type ServiceError struct {
	Service  string `json:"service"`
	Protocol string `json:"protocol"`
	Code     string `json:"code"`
	Message  string `json:"message"`
}

// SchemaGetInput is the input of agent_protocols_schema_get.
type SchemaGetInput struct {
	Protocol string `json:"protocol"`
	Type     string `json:"type,omitempty"`
	RoomID   string `json:"room_id,omitempty"`
	Host     string `json:"host,omitempty"`
}

// SchemaGetResult is the result of agent_protocols_schema_get.
type SchemaGetResult struct {
	Protocol        string            `json:"protocol"`
	Schemas         []SchemaEntry     `json:"schemas"`
	RegisteredPacks []json.RawMessage `json:"registered_packs,omitempty"`
}

// SchemaEntry is the payload schema of one event type.
type SchemaEntry = engine.SchemaEntry

// AgentProtocolsHost is an operator-configured host (connector spec 4.3).
type AgentProtocolsHost struct {
	Host    string `json:"host"`
	Label   string `json:"label,omitempty"`
	Allowed bool   `json:"allowed"`
	// Grants are the origin's effective grants (config.toml [[hosts]]
	// grants; every capability when the entry names none).
	Grants         []string `json:"grants"`
	Features       []string `json:"features"`
	ProfileService *string  `json:"profile_service"`
	LastCheckedAt  *int64   `json:"last_checked_at"`
}
