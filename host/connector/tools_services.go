package connector

import (
	"context"
	"encoding/json"
	"strings"

	"apconnect/host/engine"
)

// SupportedProtocols are the protocols services_list probes and schema_get
// describes: those of the modules.
func (c *Connector) SupportedProtocols() []string {
	out := make([]string, 0, len(c.modules))
	for _, m := range c.modules {
		out = append(out, m.Protocol())
	}
	return out
}

func (c *Connector) unsupportedProtocol(p string) *engine.Error {
	supported := c.SupportedProtocols()
	return &engine.Error{Code: engine.CodeUnsupportedProtocol, Message: "apconnect does not speak " + p + "; it speaks " + strings.Join(supported, ", "),
		Data: map[string]any{"protocol": p, "supported": supported}}
}

// module returns the module speaking protocol p.
func (c *Connector) module(p string) (engine.Module, bool) {
	for _, m := range c.modules {
		if m.Protocol() == p {
			return m, true
		}
	}
	return nil, false
}

// ServicesList is agent_protocols_services_list: the discovery documents of
// the operator-configured origins (every configured origin, or the one
// given), for every protocol apconnect speaks (or the one asked for). Each
// module reads its protocol's document (cached; read again after a
// failure) and adds no origin: one the operator did not configure is
// host_not_allowed. An origin without a document for a protocol is left
// out; a failing one is reported in errors. Configured discovery needs no
// grant; nothing is signed.
func (c *Connector) ServicesList(ctx context.Context, sess SessionID, in ServicesListInput) (*ServicesListResult, error) {
	mods := c.modules
	if in.Protocol != "" {
		m, ok := c.module(in.Protocol)
		if !ok {
			return nil, c.unsupportedProtocol(in.Protocol)
		}
		mods = []engine.Module{m}
	}
	origins := c.engine.Origins()
	if in.Host != "" {
		norm, err := c.engine.Configured(in.Host)
		if err != nil {
			return nil, err
		}
		origins = []string{norm}
	}
	out := &ServicesListResult{Services: []map[string]any{}, Errors: []ServiceError{}}
	for _, origin := range origins {
		for _, m := range mods {
			d, ok := m.(engine.Discoverer)
			if !ok {
				continue
			}
			doc, err := d.Discover(ctx, origin)
			if err != nil {
				ce := engine.AsError(err)
				out.Errors = append(out.Errors, ServiceError{Service: origin, Protocol: m.Protocol(), Code: ce.Code, Message: ce.Message})
				continue
			}
			if doc != nil {
				out.Services = append(out.Services, doc)
			}
		}
	}
	return out, nil
}

// SchemaGet is agent_protocols_schema_get: the exact payload JSON Schemas
// of a protocol's events (the reference SDK 0.12.6 schemas, each
// self-contained), optionally of one type, from the module speaking it
// (Discourse adds its registered packs and, with room_id, the custom types
// of that known room). Reads bundled data and local state only.
func (c *Connector) SchemaGet(ctx context.Context, sess SessionID, in SchemaGetInput) (*SchemaGetResult, error) {
	m, ok := c.module(in.Protocol)
	src, isSource := m.(engine.SchemaSource)
	if !ok || !isSource {
		return nil, c.unsupportedProtocol(in.Protocol)
	}
	if in.RoomID != "" && in.Protocol != c.discourse.Protocol() {
		return nil, engine.Invalid("room_id names a room: it needs protocol %s", c.discourse.Protocol())
	}
	s, err := src.Schemas(ctx, engine.SchemaQuery{Type: in.Type, RoomID: in.RoomID, Host: in.Host})
	if err != nil {
		return nil, err
	}
	out := &SchemaGetResult{Protocol: in.Protocol, Schemas: s.Entries, RegisteredPacks: s.RegisteredPacks}
	if out.Schemas == nil {
		out.Schemas = []SchemaEntry{}
	}
	if in.Protocol == c.discourse.Protocol() && out.RegisteredPacks == nil {
		out.RegisteredPacks = []json.RawMessage{}
	}
	return out, nil
}
