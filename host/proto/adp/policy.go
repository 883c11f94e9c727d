package adp

import (
	"encoding/json"
	"slices"

	"apconnect/host/identity"
	"apconnect/host/text"
)

// Policy is a room policy (8.3). Absent members keep their defaults: nil
// OpenRoles is the default open roles, while an empty non-nil OpenRoles is an
// explicit "open_roles": [] (nobody joins openly). It marshals to exactly the
// wire shape, with absent members omitted.
type Policy struct {
	// Invites maps Agent IDs to the role each may take by direct join.
	Invites map[string]Role
	// OpenRoles are the roles anyone may take by direct join; nil means the
	// default (EffectiveOpenRoles).
	OpenRoles []Role
	// MaxSpeakers is policy.max_speakers; nil when absent.
	MaxSpeakers *int64
	// ObserverAllowed is the 0f87fee drafts' policy.observer_allowed, which
	// the current rules refuse: only rooms written under the older drafts
	// carry it. nil when absent.
	ObserverAllowed *bool
	// Extra is opaque policy data.
	Extra map[string]any
}

// IsZero reports whether the policy has no members (the default policy).
func (p *Policy) IsZero() bool {
	return p.Invites == nil && p.OpenRoles == nil && p.MaxSpeakers == nil && p.ObserverAllowed == nil && p.Extra == nil
}

// EffectiveOpenRoles returns the roles anyone may take by direct join in a
// room of visibility v: open_roles when the policy has it, otherwise
// [observer] for a public room and none for restricted and private rooms.
func (p *Policy) EffectiveOpenRoles(v Visibility) []Role {
	if p.OpenRoles != nil {
		return p.OpenRoles
	}
	if v == VisibilityPublic {
		return []Role{RoleObserver}
	}
	return nil
}

// legacyOpenRoles returns the open roles of the 0f87fee drafts: only in
// public rooms; open_roles, or [speaker, observer] ([speaker] when
// observer_allowed is false).
func (p *Policy) legacyOpenRoles(v Visibility) []Role {
	switch {
	case v != VisibilityPublic:
		return nil
	case p.OpenRoles != nil:
		return p.OpenRoles
	case p.ObserverAllowed != nil && !*p.ObserverAllowed:
		return []Role{RoleSpeaker}
	}
	return []Role{RoleSpeaker, RoleObserver}
}

// Value returns the policy in its wire shape.
func (p *Policy) Value() map[string]any {
	m := map[string]any{}
	if p.Invites != nil {
		inv := make(map[string]any, len(p.Invites))
		for id, r := range p.Invites {
			inv[id] = string(r)
		}
		m["invites"] = inv
	}
	if p.OpenRoles != nil {
		roles := make([]any, len(p.OpenRoles))
		for i, r := range p.OpenRoles {
			roles[i] = string(r)
		}
		m["open_roles"] = roles
	}
	if p.MaxSpeakers != nil {
		m["max_speakers"] = *p.MaxSpeakers
	}
	if p.ObserverAllowed != nil {
		m["observer_allowed"] = *p.ObserverAllowed
	}
	if p.Extra != nil {
		m["extra"] = cloneJSON(p.Extra)
	}
	return m
}

// MarshalJSON writes the wire shape.
func (p Policy) MarshalJSON() ([]byte, error) {
	return identity.Canonicalize(p.Value())
}

// UnmarshalJSON reads the wire shape (validated against the kernel
// schema's roomPolicy and the 8.3 rules).
func (p *Policy) UnmarshalJSON(data []byte) error {
	v, err := identity.ParseStrict(data)
	if err != nil {
		return jsonError(err, "", CodeInvalidEvent)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return newError(CodeInvalidEvent, "", "policy must be a JSON object")
	}
	pol, err := parsePolicy(m, "", "", historical)
	if err != nil {
		return err
	}
	*p = pol
	return nil
}

// ValidatePolicy applies the policy rules (8.3) of the current rules to a
// strictly parsed policy value for a room of visibility v: the kernel
// schema's roomPolicy (closed: invites, open_roles, max_speakers, extra),
// invitations naming canonical Agent IDs and roles, open roles unique and
// never moderator, max_speakers at least 1, and no open roles in a private
// room. A violation is invalid_event at the offending member.
func ValidatePolicy(policy any, v Visibility) error {
	if err := validateKernel("roomPolicy", policy, CodeInvalidEvent, ""); err != nil {
		return err
	}
	_, err := parsePolicy(policy.(map[string]any), "", v, current)
	return err
}

// parsePolicy reads a policy object and applies the 8.3 rules for a room of
// visibility vis ("" skips the visibility rule). Shape errors and rule
// violations are invalid_event at pointer. The historical dialect also
// accepts the 0f87fee drafts' observer_allowed, with their rule that it
// excludes observers from open roles and invitations, and open roles in a
// private room (which those drafts ignored).
func parsePolicy(m map[string]any, pointer string, vis Visibility, d dialect) (Policy, error) {
	var p Policy
	for k := range m {
		switch k {
		case "invites", "open_roles", "max_speakers", "extra":
		case "observer_allowed":
			if d == historical {
				continue
			}
			return p, newError(CodeInvalidEvent, pointer+"/observer_allowed", "observer_allowed is not a policy member (open_roles decides who joins as an observer)")
		default:
			return p, newError(CodeInvalidEvent, pointer+"/"+text.EscapePointer(k), "unknown policy member %q", text.Truncate(k, 80))
		}
	}
	if v, ok := m["invites"]; ok {
		inv, ok := v.(map[string]any)
		if !ok {
			return p, newError(CodeInvalidEvent, pointer+"/invites", "invites must be an object")
		}
		p.Invites = make(map[string]Role, len(inv))
		for _, id := range sortedKeys(inv) {
			at := pointer + "/invites/" + text.EscapePointer(id)
			if !identity.ValidAgentID(id) {
				return p, newError(CodeInvalidEvent, at, "invites holds a malformed Agent ID")
			}
			r, _ := inv[id].(string)
			if !Role(r).Valid() {
				return p, newError(CodeInvalidEvent, at, "an invitation must name a role (moderator, speaker or observer)")
			}
			p.Invites[id] = Role(r)
		}
	}
	if v, ok := m["open_roles"]; ok {
		arr, ok := v.([]any)
		if !ok {
			return p, newError(CodeInvalidEvent, pointer+"/open_roles", "open_roles must be an array")
		}
		p.OpenRoles = make([]Role, 0, len(arr))
		for i, e := range arr {
			at := pointer + "/open_roles/" + itoa(i)
			s, _ := e.(string)
			r := Role(s)
			switch {
			case r == RoleModerator:
				return p, newError(CodeInvalidEvent, at, "open_roles must not contain moderator")
			case !r.Valid():
				return p, newError(CodeInvalidEvent, at, "open_roles holds an unknown role")
			case slices.Contains(p.OpenRoles, r):
				return p, newError(CodeInvalidEvent, at, "open_roles holds %s twice", r)
			}
			p.OpenRoles = append(p.OpenRoles, r)
		}
	}
	if v, ok := m["max_speakers"]; ok {
		n, ok := intValue(v)
		if !ok || n < 1 {
			return p, newError(CodeInvalidEvent, pointer+"/max_speakers", "max_speakers must be an integer of at least 1")
		}
		p.MaxSpeakers = &n
	}
	if v, ok := m["extra"]; ok {
		x, ok := v.(map[string]any)
		if !ok {
			return p, newError(CodeInvalidEvent, pointer+"/extra", "extra must be an object")
		}
		p.Extra = cloneObject(x)
	}
	if vis == VisibilityPrivate && len(p.OpenRoles) > 0 && d != historical {
		return p, newError(CodeInvalidEvent, pointer+"/open_roles", "a private room has no open roles: members join by invitation or approval")
	}
	if v, ok := m["observer_allowed"]; ok {
		b, ok := v.(bool)
		if !ok {
			return p, newError(CodeInvalidEvent, pointer+"/observer_allowed", "observer_allowed must be a boolean")
		}
		p.ObserverAllowed = &b
		if !b {
			if slices.Contains(p.OpenRoles, RoleObserver) {
				return p, newError(CodeInvalidEvent, pointer+"/open_roles", "open_roles grants observer while observer_allowed is false")
			}
			for _, id := range sortedKeys(p.Invites) {
				if p.Invites[id] == RoleObserver {
					return p, newError(CodeInvalidEvent, pointer+"/invites/"+text.EscapePointer(id), "an invitation grants observer while observer_allowed is false")
				}
			}
		}
	}
	return p, nil
}

// clone deep-copies the policy.
func (p Policy) clone() Policy {
	c := p
	if p.Invites != nil {
		c.Invites = make(map[string]Role, len(p.Invites))
		for k, v := range p.Invites {
			c.Invites[k] = v
		}
	}
	if p.OpenRoles != nil {
		c.OpenRoles = slices.Clone(p.OpenRoles)
	}
	if p.MaxSpeakers != nil {
		n := *p.MaxSpeakers
		c.MaxSpeakers = &n
	}
	if p.ObserverAllowed != nil {
		b := *p.ObserverAllowed
		c.ObserverAllowed = &b
	}
	c.Extra = cloneObject(p.Extra)
	return c
}

var _ json.Marshaler = Policy{}
