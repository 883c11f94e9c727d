package delegation

import (
	"strconv"

	"apconnect/host/identity"
)

// ParsePrincipalDocument strictly parses a principal document's JSON text
// (identity.ParseStrict), reads it into a PrincipalDocument and validates it.
func ParsePrincipalDocument(data []byte) (*PrincipalDocument, error) {
	v, err := identity.ParseStrict(data)
	if err != nil {
		return nil, &identity.Error{Code: CodePrincipalUnresolvable, Message: "principal document is not strict JSON: " + err.Error(), Err: err}
	}
	return PrincipalDocumentFromValue(v)
}

// PrincipalDocumentFromValue reads a parsed principal document (member
// types as the SDK's typed document has them; unknown members are ignored)
// and validates it with ValidatePrincipalDocument.
func PrincipalDocumentFromValue(v any) (*PrincipalDocument, error) {
	doc, err := principalShape(v)
	if err != nil {
		return nil, err
	}
	if err := ValidatePrincipalDocument(doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// PrincipalID returns the "id" member of a parsed principal document
// without reading anything else: all a client takes from a copy served away
// from its id, before it reads that id.
func PrincipalID(v any) (string, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return "", false
	}
	id, ok := m["id"].(string)
	return id, ok && id != ""
}

func principalShape(v any) (*PrincipalDocument, error) {
	o, err := asObject(v, "", CodePrincipalUnresolvable, "principal document")
	if err != nil {
		return nil, err
	}
	d := &PrincipalDocument{}
	for _, f := range []struct {
		key string
		dst *string
	}{{"id", &d.ID}, {"protocol", &d.Protocol}} {
		if *f.dst, _, err = o.str(f.key, true); err != nil {
			return nil, err
		}
	}
	for _, f := range []struct {
		key      string
		dst      *string
		nonEmpty bool
	}{{"type", &d.Type, false}, {"name", &d.Name, false}, {"description", &d.Description, false},
		{"avatar_url", &d.AvatarURL, true}, {"delegation_service", &d.DelegationService, true}} {
		s, present, err := o.str(f.key, false)
		if err != nil {
			return nil, err
		}
		if present && s == "" && f.nonEmpty {
			return nil, newError(o.code, o.at(f.key), "%s must not be empty", f.key)
		}
		*f.dst = s
	}
	if d.UpdatedAt, _, err = o.int("updated_at", true); err != nil {
		return nil, err
	}
	if d.Aliases, err = o.strs("aliases", false); err != nil {
		return nil, err
	}
	if d.Links, err = linksShape(o); err != nil {
		return nil, err
	}
	if d.Extra, err = o.obj("extra"); err != nil {
		return nil, err
	}
	if d.Controllers, err = controllersShape(o, "controllers", true); err != nil {
		return nil, err
	}
	if d.RetiredControllers, err = controllersShape(o, "retired_controllers", false); err != nil {
		return nil, err
	}
	return d, nil
}

func linksShape(o object) ([]Link, error) {
	v, ok := o.m["links"]
	if !ok {
		return nil, nil
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, newError(o.code, o.at("links"), "links must be an array")
	}
	out := make([]Link, 0, len(arr))
	for i, e := range arr {
		lo, err := asObject(e, o.at("links")+"/"+strconv.Itoa(i), o.code, "link")
		if err != nil {
			return nil, err
		}
		var l Link
		for _, f := range []struct {
			key string
			dst *string
		}{{"name", &l.Name}, {"url", &l.URL}, {"rel", &l.Rel}} {
			if *f.dst, _, err = lo.str(f.key, true); err != nil {
				return nil, err
			}
		}
		out = append(out, l)
	}
	return out, nil
}

func controllersShape(o object, key string, required bool) ([]Controller, error) {
	v, ok := o.m[key]
	if !ok {
		if required {
			return nil, o.missing(key)
		}
		return nil, nil
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, newError(o.code, o.at(key), "%s must be an array", key)
	}
	out := make([]Controller, 0, len(arr))
	for i, e := range arr {
		c, err := controllerShape(e, o.at(key)+"/"+strconv.Itoa(i))
		if err != nil {
			return nil, err
		}
		out = append(out, *c)
	}
	return out, nil
}

func controllerShape(v any, ptr string) (*Controller, error) {
	o, err := asObject(v, ptr, CodePrincipalUnresolvable, "controller")
	if err != nil {
		return nil, err
	}
	c := &Controller{}
	if c.ID, _, err = o.str("id", true); err != nil {
		return nil, err
	}
	if c.Source, _, err = o.str("source", true); err != nil {
		return nil, err
	}
	if c.ValidFrom, _, err = o.int("valid_from", true); err != nil {
		return nil, err
	}
	name, present, err := o.str("name", false)
	if err != nil {
		return nil, err
	}
	if present && name == "" {
		return nil, newError(o.code, o.at("name"), "name must not be empty")
	}
	c.Name = name
	if c.Delegation, err = authorityShape(o); err != nil {
		return nil, err
	}
	if c.RetiredAt, err = o.optInt("retired_at"); err != nil {
		return nil, err
	}
	if c.InvalidFrom, err = o.optInt("invalid_from"); err != nil {
		return nil, err
	}
	return c, nil
}

// authorityShape reads "delegation": absent (signing only), the string "*",
// or an object of exactly scopes and audiences. null, {}, another string or
// another member are refused: never infer authority.
func authorityShape(o object) (*Authority, error) {
	v, ok := o.m["delegation"]
	if !ok {
		return nil, nil
	}
	ptr := o.at("delegation")
	if s, ok := v.(string); ok {
		if s != "*" {
			return nil, newError(o.code, ptr, "invalid delegation policy")
		}
		return &Authority{Unrestricted: true}, nil
	}
	po, err := asObject(v, ptr, o.code, "delegation policy")
	if err != nil {
		return nil, newError(o.code, ptr, "invalid delegation policy")
	}
	if err := po.closed("delegation policy", "scopes", "audiences"); err != nil {
		return nil, err
	}
	a := &Authority{}
	if a.Scopes, err = po.strs("scopes", true); err != nil {
		return nil, err
	}
	if a.Audiences, err = po.strs("audiences", true); err != nil {
		return nil, err
	}
	return a, nil
}

// Value returns the document as a JSON object value, with only the members
// that are present.
func (d *PrincipalDocument) Value() map[string]any {
	m := map[string]any{
		"id":          d.ID,
		"protocol":    d.Protocol,
		"controllers": controllerValues(d.Controllers),
		"updated_at":  d.UpdatedAt,
	}
	for k, s := range map[string]string{"type": d.Type, "name": d.Name, "description": d.Description,
		"avatar_url": d.AvatarURL, "delegation_service": d.DelegationService} {
		if s != "" {
			m[k] = s
		}
	}
	if len(d.Aliases) > 0 {
		m["aliases"] = cloneStrings(d.Aliases)
	}
	if len(d.Links) > 0 {
		links := make([]any, len(d.Links))
		for i, l := range d.Links {
			links[i] = map[string]any{"name": l.Name, "url": l.URL, "rel": l.Rel}
		}
		m["links"] = links
	}
	if len(d.RetiredControllers) > 0 {
		m["retired_controllers"] = controllerValues(d.RetiredControllers)
	}
	if len(d.Extra) > 0 {
		m["extra"] = d.Extra
	}
	return m
}

// MarshalJSON writes the document in canonical (JCS) form.
func (d PrincipalDocument) MarshalJSON() ([]byte, error) { return identity.Canonicalize(d.Value()) }

// UnmarshalJSON strictly parses and validates a principal document.
func (d *PrincipalDocument) UnmarshalJSON(data []byte) error {
	doc, err := ParsePrincipalDocument(data)
	if err != nil {
		return err
	}
	*d = *doc
	return nil
}

func controllerValues(cs []Controller) []any {
	out := make([]any, len(cs))
	for i := range cs {
		out[i] = cs[i].Value()
	}
	return out
}

// Value returns the controller record as a JSON object value.
func (c *Controller) Value() map[string]any {
	m := map[string]any{"id": c.ID, "source": c.Source, "valid_from": c.ValidFrom}
	if c.Name != "" {
		m["name"] = c.Name
	}
	if a := c.Delegation; a != nil {
		if a.Unrestricted {
			m["delegation"] = "*"
		} else {
			m["delegation"] = map[string]any{"scopes": cloneStrings(a.Scopes), "audiences": cloneStrings(a.Audiences)}
		}
	}
	if c.RetiredAt != nil {
		m["retired_at"] = *c.RetiredAt
	}
	if c.InvalidFrom != nil {
		m["invalid_from"] = *c.InvalidFrom
	}
	return m
}
