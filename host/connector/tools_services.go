package connector

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"apconnect/host/client"
	"apconnect/host/config"
	"apconnect/host/identity"
	"apconnect/host/proto/adp"
	"apconnect/schemas"
)

// The protocols apconnect speaks, as services_list and schema_get name
// them. Agent Delegation, Mail and Knowledge are not implemented: asking
// about them is unsupported_protocol.
const (
	ProtocolProfile   = identity.ProtocolProfile
	ProtocolDiscourse = identity.ProtocolDiscourse
)

// SupportedProtocols are the protocols services_list probes and schema_get
// describes.
func SupportedProtocols() []string { return []string{ProtocolProfile, ProtocolDiscourse} }

func unsupportedProtocol(p string) *Error {
	return &Error{Code: CodeUnsupportedProtocol, Message: "apconnect does not speak " + p + "; it speaks " + strings.Join(SupportedProtocols(), " and "),
		Data: map[string]any{"protocol": p, "supported": SupportedProtocols()}}
}

// ServicesList is agent_protocols_services_list: the discovery documents of
// the operator-configured origins (every configured host and profile
// service, or the one host given), for the protocols apconnect speaks (or
// the one asked for). It reads each origin's /.well-known document through
// the connector's cached discovery (read once, again after a failure) and
// adds no host: an origin the operator did not configure is
// host_not_allowed. An origin without a document for a protocol is left
// out; a failing one is reported in errors. Reads hosts; signs nothing.
func (c *Connector) ServicesList(ctx context.Context, sess SessionID, in ServicesListInput) (*ServicesListResult, error) {
	protocols := SupportedProtocols()
	if in.Protocol != "" {
		if !slices.Contains(SupportedProtocols(), in.Protocol) {
			return nil, unsupportedProtocol(in.Protocol)
		}
		protocols = []string{in.Protocol}
	}
	var origins []string
	if in.Host != "" {
		norm, err := config.NormalizeOrigin(in.Host)
		if err != nil || !slices.Contains(c.serviceOrigins(), norm) {
			return nil, &Error{Code: CodeHostNotAllowed, Message: "origin " + in.Host + " is not configured; only the operator can allow hosts",
				Data: map[string]any{"allowed": c.serviceOrigins()}}
		}
		origins = []string{norm}
	} else {
		origins = c.serviceOrigins()
	}
	out := &ServicesListResult{Services: []map[string]any{}, Errors: []ServiceError{}}
	for _, origin := range origins {
		for _, p := range protocols {
			var d *client.Discovery
			var err error
			switch p {
			case ProtocolDiscourse:
				h, ok := c.hosts[origin]
				if !ok {
					continue // a profile service only: not a Discourse host of the operator's
				}
				d, err = h.client.Discovery(ctx)
			case ProtocolProfile:
				var ps *client.ProfileService
				if ps, err = c.profileService(origin); err == nil {
					d, err = ps.Discovery(ctx)
				}
			}
			if err != nil {
				ce := AsError(err)
				out.Errors = append(out.Errors, ServiceError{Service: origin, Protocol: p, Code: ce.Code, Message: ce.Message})
				continue
			}
			if d == nil || d.Raw == nil {
				continue // the origin has no document for p (404)
			}
			out.Services = append(out.Services, d.Raw)
		}
	}
	return out, nil
}

// serviceOrigins lists the configured origins in order, once each: the
// hosts, then the identity's profile services.
func (c *Connector) serviceOrigins() []string {
	out := append([]string{}, c.hostOrder...)
	for _, s := range c.ident.ProfileServices {
		if n, err := config.NormalizeOrigin(s); err == nil && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// payloadDefs map event types to the protocol schema definitions of their
// payloads (the reference SDK's schema_get table).
var payloadDefs = map[string][][2]string{
	ProtocolProfile: {{"profile.update", "profileUpdatePayload"}},
	ProtocolDiscourse: {
		{"room.create", "roomCreatePayload"}, {"room.update", "roomUpdatePayload"}, {"room.join", "roomJoinPayload"},
		{"room.join.request", "roomJoinRequestPayload"}, {"room.join.review", "roomJoinReviewPayload"},
		{"room.leave", "reasonPayload"}, {"room.close", "reasonPayload"}, {"room.cancel", "reasonPayload"},
		{"room.member.role.update", "roomMemberRoleUpdatePayload"}, {"room.member.remove", "roomMemberRemovePayload"},
		{"message.create", "messageCreatePayload"}, {"type.define", "typeDeclaration"},
	},
}

// SchemaGet is agent_protocols_schema_get: the exact payload JSON Schemas
// of a protocol's events (the reference SDK 0.12.6 schemas, each
// self-contained: a $ref to its definition plus every definition it
// reaches), optionally of one type, with the registered Discourse packs;
// with room_id, also the custom types of that known room from its verified
// local state. Reads local state only.
func (c *Connector) SchemaGet(ctx context.Context, sess SessionID, in SchemaGetInput) (*SchemaGetResult, error) {
	defs, ok := payloadDefs[in.Protocol]
	if !ok {
		return nil, unsupportedProtocol(in.Protocol)
	}
	if in.RoomID != "" && in.Protocol != ProtocolDiscourse {
		return nil, invalid("room_id names a room: it needs protocol %s", ProtocolDiscourse)
	}
	raw, err := schemas.ProtocolSchema(in.Protocol)
	if err != nil {
		return nil, wrap(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, wrap(err)
	}
	all, _ := doc["$defs"].(map[string]any)
	out := &SchemaGetResult{Protocol: in.Protocol, Schemas: []SchemaEntry{}}
	for _, d := range defs {
		if in.Type == "" || in.Type == d[0] {
			out.Schemas = append(out.Schemas, SchemaEntry{Type: d[0], Schema: payloadSchema(all, d[1])})
		}
	}
	if in.RoomID != "" {
		rr, err := c.resolve(ctx, in.Host, in.RoomID, false)
		if err != nil {
			return nil, err
		}
		if rr.row == nil || !rr.row.HasSnapshot {
			return nil, &Error{Code: CodeRoomNotOpen, Message: "room " + in.RoomID + " has no verified local state; open it with agent_protocols_room_state or agent_protocols_room_open first"}
		}
		st, err := c.loadStateRow(ctx, rr.row)
		if err != nil {
			return nil, wrap(err)
		}
		if st.Room != nil {
			for _, t := range st.Room.Types {
				if in.Type == "" || in.Type == t.Type {
					out.Schemas = append(out.Schemas, SchemaEntry{Type: t.Type, Schema: deepCopy(t.Schema)})
				}
			}
		}
	}
	if in.Type != "" && len(out.Schemas) == 0 {
		msg := "event type " + in.Type + " is not a " + in.Protocol + " event"
		if in.Protocol == ProtocolDiscourse {
			msg += "; for a room's custom types pass room_id (and host) of a room opened locally"
		}
		return nil, &Error{Code: CodeTypeNotDefined, Message: msg, Data: map[string]any{"type": in.Type}}
	}
	if in.Protocol == ProtocolDiscourse {
		var packs struct {
			Packs []json.RawMessage `json:"packs"`
		}
		if err := json.Unmarshal(adp.RegisteredPacksJSON(), &packs); err != nil {
			return nil, wrap(err)
		}
		out.RegisteredPacks = packs.Packs
		if out.RegisteredPacks == nil {
			out.RegisteredPacks = []json.RawMessage{}
		}
	}
	return out, nil
}

// payloadSchema returns {"$ref": "#/$defs/<name>", "$defs": {...}} with
// every definition the named one reaches through local references, so the
// schema stands alone.
func payloadSchema(all map[string]any, name string) map[string]any {
	reached := map[string]any{}
	var visit func(v any)
	visit = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			if ref, ok := t["$ref"].(string); ok {
				if n, ok := strings.CutPrefix(ref, "#/$defs/"); ok {
					if _, done := reached[n]; !done {
						if def, ok := all[n]; ok {
							reached[n] = def
							visit(def)
						}
					}
				}
			}
			for _, e := range t {
				visit(e)
			}
		case []any:
			for _, e := range t {
				visit(e)
			}
		}
	}
	root := map[string]any{"$ref": "#/$defs/" + name}
	visit(root)
	root["$defs"] = reached
	return root
}

// deepCopy deep-copies a decoded JSON object ({} for nil).
func deepCopy(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return map[string]any{}
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return map[string]any{}
	}
	return out
}
