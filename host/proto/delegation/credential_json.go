package delegation

import (
	"apconnect/host/identity"
)

// ParseCredential strictly parses a credential's JSON text.
func ParseCredential(data []byte) (*Credential, error) {
	v, err := identity.ParseStrict(data)
	if err != nil {
		return nil, &identity.Error{Code: CodeInvalidDelegation, Message: "credential is not strict JSON: " + err.Error(), Err: err}
	}
	return CredentialFromValue(v, "")
}

// CredentialFromValue reads a parsed credential with the member types of the
// SDK's typed credential: Agent IDs for subject and controller, one of the
// four statuses, integer times. Unknown members (a draft's owner_controller
// or updated_at) are ignored. It checks no rule: VerifyCredential and
// AuditHistory do. Errors carry invalid_delegation.
func CredentialFromValue(v any, ptr string) (*Credential, error) {
	o, err := asObject(v, ptr, CodeInvalidDelegation, "credential")
	if err != nil {
		return nil, err
	}
	c := &Credential{}
	for _, f := range []struct {
		key string
		dst *string
	}{{"id", &c.ID}, {"protocol", &c.Protocol}, {"principal_id", &c.PrincipalID}, {"subject", &c.Subject},
		{"controller", &c.Controller}, {"grant_event_id", &c.GrantEventID}, {"event_id", &c.EventID}} {
		if *f.dst, _, err = o.str(f.key, true); err != nil {
			return nil, err
		}
	}
	for _, k := range []string{"subject", "controller"} {
		if s, _, _ := o.str(k, true); !identity.ValidAgentID(s) {
			return nil, newError(o.code, o.at(k), "%s must be a canonical Agent ID", k)
		}
	}
	status, _, err := o.str("status", true)
	if err != nil {
		return nil, err
	}
	if c.Status = Status(status); !c.Status.Valid() {
		return nil, newError(o.code, o.at("status"), "unknown status %q", trunc(status))
	}
	if err := credentialGrantMembers(o, c); err != nil {
		return nil, err
	}
	if c.AcceptedAt, _, err = o.int("accepted_at", true); err != nil {
		return nil, err
	}
	if c.CheckedAt, _, err = o.int("checked_at", true); err != nil {
		return nil, err
	}
	return c, nil
}

func credentialGrantMembers(o object, c *Credential) error {
	rel, present, err := o.str("relationship", false)
	if err != nil {
		return err
	}
	if present {
		c.Relationship = &rel
	}
	if c.Scopes, err = o.strs("scopes", true); err != nil {
		return err
	}
	if c.Audiences, err = o.strs("audiences", true); err != nil {
		return err
	}
	if c.Constraints, err = o.obj("constraints"); err != nil {
		return err
	}
	if c.NotBefore, err = o.optInt("not_before"); err != nil {
		return err
	}
	c.ExpiresAt, err = o.optInt("expires_at")
	return err
}

// Value returns the credential as a JSON object value.
func (c *Credential) Value() map[string]any {
	m := c.Grant().Value()
	m["protocol"] = c.Protocol
	m["status"] = string(c.Status)
	m["controller"] = c.Controller
	m["grant_event_id"] = c.GrantEventID
	m["event_id"] = c.EventID
	m["accepted_at"] = c.AcceptedAt
	m["checked_at"] = c.CheckedAt
	return m
}

// MarshalJSON writes the credential in canonical (JCS) form.
func (c Credential) MarshalJSON() ([]byte, error) { return identity.Canonicalize(c.Value()) }

// UnmarshalJSON strictly parses a credential (CredentialFromValue).
func (c *Credential) UnmarshalJSON(data []byte) error {
	out, err := ParseCredential(data)
	if err != nil {
		return err
	}
	*c = *out
	return nil
}

// Record is an accepted record (Agent Identity 8.3): an envelope and the
// service's clock at its first acceptance. History reads return them in
// acceptance order.
type Record struct {
	Envelope   *identity.Envelope
	AcceptedAt int64
}

// RecordFromValue reads a parsed accepted record {envelope, accepted_at}.
// The envelope's shape is checked (identity.EnvelopeFromValue), not its
// signature: the verification functions do that.
func RecordFromValue(v any, ptr string) (*Record, error) {
	o, err := asObject(v, ptr, CodeInvalidDelegation, "accepted record")
	if err != nil {
		return nil, err
	}
	ev, ok := o.m["envelope"]
	if !ok {
		return nil, o.missing("envelope")
	}
	env, err := identity.EnvelopeFromValue(ev, o.at("envelope"))
	if err != nil {
		return nil, err
	}
	at, _, err := o.int("accepted_at", true)
	if err != nil {
		return nil, err
	}
	return &Record{Envelope: env, AcceptedAt: at}, nil
}

// Value returns the record as a JSON object value.
func (r *Record) Value() map[string]any {
	return map[string]any{"envelope": r.Envelope.Value(), "accepted_at": r.AcceptedAt}
}

// MarshalJSON writes the record in canonical (JCS) form.
func (r Record) MarshalJSON() ([]byte, error) { return identity.Canonicalize(r.Value()) }
