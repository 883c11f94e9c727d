package adp

import (
	"regexp"
	"slices"
	"strings"
)

// Kind is the permission, quota and freshness class of an event type (12.1).
type Kind string

// The three kinds.
const (
	KindMessage Kind = "message"
	KindSignal  Kind = "signal"
	KindControl Kind = "control"
)

// Valid reports whether k is one of the three kinds.
func (k Kind) Valid() bool { return k == KindMessage || k == KindSignal || k == KindControl }

// Role is a participation role (9.1).
type Role string

// The three roles.
const (
	RoleModerator Role = "moderator"
	RoleSpeaker   Role = "speaker"
	RoleObserver  Role = "observer"
)

// Valid reports whether r is one of the three roles.
func (r Role) Valid() bool { return r == RoleModerator || r == RoleSpeaker || r == RoleObserver }

// Speaking reports whether r counts against max_speakers (moderator or
// speaker).
func (r Role) Speaking() bool { return r == RoleModerator || r == RoleSpeaker }

// TypeStatus is a type definition's status (12.3).
type TypeStatus string

// Type definition statuses. An absent status means active.
const (
	TypeActive     TypeStatus = "active"
	TypeDeprecated TypeStatus = "deprecated"
	TypeDisabled   TypeStatus = "disabled"
)

// The twelve built-in event types (12.2).
const (
	TypeRoomCreate    = "room.create"
	TypeRoomUpdate    = "room.update"
	TypeRoomClose     = "room.close"
	TypeRoomCancel    = "room.cancel"
	TypeTypeDefine    = "type.define"
	TypeRoomJoin      = "room.join"
	TypeJoinRequest   = "room.join.request"
	TypeJoinReview    = "room.join.review"
	TypeRoomLeave     = "room.leave"
	TypeRoleUpdate    = "room.member.role.update"
	TypeMemberRemove  = "room.member.remove"
	TypeMessageCreate = "message.create"
)

// builtinType describes a built-in event type: its freshness class (none for
// room.join.request, which is never a record), its quota class (contract
// writes count as control, membership events as signal) and whether a
// scheduled room accepts it (13).
type builtinType struct {
	class     Class
	quota     Kind
	scheduled bool
}

var builtinTypes = map[string]builtinType{
	TypeRoomCreate:    {ClassGenesis, KindControl, true},
	TypeRoomUpdate:    {ClassContract, KindControl, true},
	TypeRoomClose:     {ClassContract, KindControl, false},
	TypeRoomCancel:    {ClassContract, KindControl, true},
	TypeTypeDefine:    {ClassContract, KindControl, true},
	TypeRoomJoin:      {ClassSignal, KindSignal, true},
	TypeJoinRequest:   {"", KindSignal, true},
	TypeJoinReview:    {ClassSignal, KindSignal, true},
	TypeRoomLeave:     {ClassSignal, KindSignal, true},
	TypeRoleUpdate:    {ClassSignal, KindSignal, true},
	TypeMemberRemove:  {ClassSignal, KindSignal, true},
	TypeMessageCreate: {ClassMessage, KindMessage, false},
}

// IsBuiltin reports whether typ is one of the twelve built-in types.
func IsBuiltin(typ string) bool {
	_, ok := builtinTypes[typ]
	return ok
}

// BuiltinTypes returns the twelve built-in type names, sorted.
func BuiltinTypes() []string {
	out := make([]string, 0, len(builtinTypes))
	for t := range builtinTypes {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// typeNamePattern is the kernel schema's eventTypeName.
var typeNamePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)+$`)

// ValidTypeName reports whether s is a dot-separated lowercase event type
// name (the kernel schema's eventTypeName).
func ValidTypeName(s string) bool { return len(s) <= 256 && typeNamePattern.MatchString(s) }

// ValidCustomTypeName reports whether s may name a custom type (12.3): a
// valid type name that is not built-in and does not start with "room.",
// "type." or "message." (the kernel schema's customEventTypeName).
func ValidCustomTypeName(s string) bool {
	return ValidTypeName(s) && !IsBuiltin(s) && !strings.HasPrefix(s, "room.") &&
		!strings.HasPrefix(s, "type.") && !strings.HasPrefix(s, "message.")
}

// KindDefaultRoles returns the default sender roles of a kind (12.1, 13).
func KindDefaultRoles(k Kind) []Role {
	switch k {
	case KindControl:
		return []Role{RoleModerator}
	case KindMessage:
		return []Role{RoleModerator, RoleSpeaker}
	case KindSignal:
		return []Role{RoleModerator, RoleSpeaker, RoleObserver}
	}
	return nil
}

// TypeDef is a materialized type definition (12.3) in a room's registry,
// after pack resolution and overrides.
type TypeDef struct {
	Type        string `json:"type"`                  // custom type name
	Kind        Kind   `json:"kind"`                  // message, signal or control
	Title       string `json:"title"`                 // short human-readable title
	Description string `json:"description,omitempty"` // what the type means
	// Schema is the payload JSON Schema (type schema profile, 12.3.1), as
	// strictly parsed JSON.
	Schema         map[string]any `json:"schema"`
	Roles          []Role         `json:"roles,omitempty"`            // sender roles; nil: the kind default
	Instructions   string         `json:"instructions,omitempty"`     // norms for agents (untrusted text)
	Status         TypeStatus     `json:"status,omitempty"`           // "" means active
	RateHint       int64          `json:"rate_hint,omitempty"`        // suggested events per agent per minute
	MaxPayloadHint int64          `json:"max_payload_hint,omitempty"` // suggested payload bytes
	Extra          map[string]any `json:"extra,omitempty"`            // opaque extension data

	// Registered is the registered pack the definition was imported from
	// ("" for inline definitions and external packs). It is local
	// bookkeeping, never part of the wire shape: a reader also accepts
	// payloads valid under the 0f87fee definition of a registered type.
	Registered string `json:"registered,omitempty"`
}

// EffectiveStatus returns the status, active when absent.
func (d *TypeDef) EffectiveStatus() TypeStatus {
	if d.Status == "" {
		return TypeActive
	}
	return d.Status
}

// SenderRoles returns the roles allowed to send the type: its roles array,
// or the kind default (the creator passes regardless, 13).
func (d *TypeDef) SenderRoles() []Role {
	if len(d.Roles) > 0 {
		return d.Roles
	}
	return KindDefaultRoles(d.Kind)
}

// Value returns the definition in the wire shape of the room resource's
// "types" list.
func (d *TypeDef) Value() map[string]any {
	m := map[string]any{"type": d.Type, "kind": string(d.Kind), "title": d.Title, "schema": cloneJSON(d.Schema)}
	if d.Description != "" {
		m["description"] = d.Description
	}
	if len(d.Roles) > 0 {
		roles := make([]any, len(d.Roles))
		for i, r := range d.Roles {
			roles[i] = string(r)
		}
		m["roles"] = roles
	}
	if d.Instructions != "" {
		m["instructions"] = d.Instructions
	}
	if d.Status != "" {
		m["status"] = string(d.Status)
	}
	if d.RateHint > 0 {
		m["rate_hint"] = d.RateHint
	}
	if d.MaxPayloadHint > 0 {
		m["max_payload_hint"] = d.MaxPayloadHint
	}
	if d.Extra != nil {
		m["extra"] = cloneJSON(d.Extra)
	}
	return m
}

// clone deep-copies the definition.
func (d TypeDef) clone() TypeDef {
	c := d
	c.Schema = cloneObject(d.Schema)
	c.Roles = slices.Clone(d.Roles)
	c.Extra = cloneObject(d.Extra)
	return c
}

// typeDefFromValue reads a type definition object that passed the kernel
// schema's typeDef.
func typeDefFromValue(m map[string]any) TypeDef {
	d := TypeDef{
		Type:         str(m, "type"),
		Kind:         Kind(str(m, "kind")),
		Title:        str(m, "title"),
		Description:  str(m, "description"),
		Instructions: str(m, "instructions"),
		Status:       TypeStatus(str(m, "status")),
	}
	d.Schema, _ = cloneJSON(m["schema"]).(map[string]any)
	for _, r := range stringList(m, "roles") {
		d.Roles = append(d.Roles, Role(r))
	}
	d.RateHint, _ = intMember(m, "rate_hint")
	d.MaxPayloadHint, _ = intMember(m, "max_payload_hint")
	if x, ok := m["extra"].(map[string]any); ok {
		d.Extra = cloneObject(x)
	}
	return d
}

// Registry is a room's type registry (12): the effective custom type
// definitions, in declaration order. A redefinition replaces a definition in
// place.
type Registry []TypeDef

// Lookup returns the definition of a custom type.
func (r Registry) Lookup(typ string) (*TypeDef, bool) {
	for i := range r {
		if r[i].Type == typ {
			return &r[i], true
		}
	}
	return nil, false
}

// Value returns the registry in the wire shape of the room resource's
// "types" list.
func (r Registry) Value() []any {
	out := make([]any, len(r))
	for i := range r {
		out[i] = r[i].Value()
	}
	return out
}

// clone deep-copies the registry.
func (r Registry) clone() Registry {
	if r == nil {
		return nil
	}
	out := make(Registry, len(r))
	for i := range r {
		out[i] = r[i].clone()
	}
	return out
}
