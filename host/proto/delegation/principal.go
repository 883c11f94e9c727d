package delegation

import (
	"net/url"
	"strconv"
	"strings"

	"apconnect/host/identity"
	itext "apconnect/host/text"
)

// Authority is a controller's delegation authority (Agent Delegation 5):
// unrestricted ("*": any scopes and audiences, and every credential of the
// principal) or a ceiling of exact scopes and audiences. A nil *Authority
// on a Controller is a signing-only key.
type Authority struct {
	Unrestricted bool
	Scopes       []string
	Audiences    []string
}

// Covers reports whether a grant or credential with these scopes and
// audiences lies inside the authority: every scope and every audience
// listed, or an unrestricted authority.
func (a *Authority) Covers(scopes, audiences []string) bool {
	if a == nil {
		return false
	}
	if a.Unrestricted {
		return true
	}
	return subset(scopes, a.Scopes) && subset(audiences, a.Audiences)
}

func subset(items, of []string) bool {
	for _, x := range items {
		found := false
		for _, y := range of {
			if x == y {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// Controller is one key binding of a principal (Agent Delegation 4.1); the
// same type serves current and retired records. Name "" means absent;
// RetiredAt and InvalidFrom are set on retired records only.
type Controller struct {
	ID          string
	Source      string // an HTTPS origin, or "local"
	ValidFrom   int64
	Name        string
	Delegation  *Authority
	RetiredAt   *int64
	InvalidFrom *int64
}

// BoundAt reports whether t lies inside the controller's authority
// interval: at or after valid_from, before retired_at and before
// invalid_from.
func (c *Controller) BoundAt(t int64) bool {
	return t >= c.ValidFrom && (c.RetiredAt == nil || t < *c.RetiredAt) &&
		(c.InvalidFrom == nil || t < *c.InvalidFrom)
}

// Link is an Agent Profile link item of a principal document.
type Link struct {
	Name string `json:"name"`
	URL  string `json:"url"`
	Rel  string `json:"rel"`
}

// PrincipalDocument is the document served at a principal's id (Agent
// Delegation 4, as the SDK 0.12.6 reads it). Empty strings mean absent
// members; DelegationService is the origin of the principal's authoritative
// delegation service, required when any controller delegates.
type PrincipalDocument struct {
	ID                 string
	Type               string
	Name               string
	Description        string
	AvatarURL          string
	Aliases            []string
	Links              []Link
	Protocol           string
	Controllers        []Controller
	RetiredControllers []Controller
	DelegationService  string
	UpdatedAt          int64
	Extra              map[string]any
}

// Delegates reports whether any controller, current or retired, carries
// delegation authority.
func (d *PrincipalDocument) Delegates() bool {
	for _, list := range [][]Controller{d.Controllers, d.RetiredControllers} {
		for i := range list {
			if list[i].Delegation != nil {
				return true
			}
		}
	}
	return false
}

// FindController returns the current controller record of key id, or with
// historical set also a retired one; nil when there is none.
func (d *PrincipalDocument) FindController(id string, historical bool) *Controller {
	for i := range d.Controllers {
		if d.Controllers[i].ID == id {
			return &d.Controllers[i]
		}
	}
	if historical {
		for i := range d.RetiredControllers {
			if d.RetiredControllers[i].ID == id {
				return &d.RetiredControllers[i]
			}
		}
	}
	return nil
}

// IsAlias reports whether u is an alias the principal itself lists. Any
// origin can redirect to any principal, so a URL must never be shown as a
// name of the principal unless it is listed here.
func (d *PrincipalDocument) IsAlias(u string) bool {
	for _, a := range d.Aliases {
		if a == u {
			return true
		}
	}
	return false
}

// CheckPrincipalResolution is the authoritative-read rule (Agent Delegation
// 3): a document binds controller keys only when read at its own id, compared
// as exact strings. resolvedURL is the URL of the final response. A document
// served anywhere else is a copy: discard it and read doc.ID instead (once).
func CheckPrincipalResolution(doc *PrincipalDocument, resolvedURL string) error {
	if doc.ID != resolvedURL {
		return newError(CodePrincipalUnresolvable, "/id", "principal document id %s was served at %s",
			trunc(doc.ID), trunc(resolvedURL))
	}
	return nil
}

// ValidateController checks one controller record (current, or retired
// when retired is set). Errors carry principal_unresolvable and pointers
// relative to the record.
func ValidateController(c *Controller, retired bool) error {
	return validateController(c, retired, "")
}

func validateController(c *Controller, retired bool, ptr string) error {
	const code = CodePrincipalUnresolvable
	if !identity.ValidAgentID(c.ID) {
		return newError(code, ptr+"/id", "controller id must be a canonical Agent ID")
	}
	if c.Source != "local" && !identity.ValidOrigin(c.Source) {
		return newError(code, ptr+"/source", "source must be \"local\" or a serialized HTTPS origin")
	}
	if err := checkTimestamp(c.ValidFrom, "valid_from", code, ptr+"/valid_from"); err != nil {
		return err
	}
	if c.Name != "" && strings.TrimSpace(c.Name) == "" {
		return newError(code, ptr+"/name", "name must not be empty")
	}
	if err := validateAuthority(c.Delegation, ptr+"/delegation"); err != nil {
		return err
	}
	if !retired {
		if c.RetiredAt != nil || c.InvalidFrom != nil {
			return newError(code, ptr, "current controller has retirement fields")
		}
		return nil
	}
	if c.RetiredAt == nil {
		return newError(code, ptr, "retired_at required")
	}
	if err := checkTimestamp(*c.RetiredAt, "retired_at", code, ptr+"/retired_at"); err != nil {
		return err
	}
	if *c.RetiredAt < c.ValidFrom {
		return newError(code, ptr+"/retired_at", "retired_at precedes valid_from")
	}
	if f := c.InvalidFrom; f != nil {
		if err := checkTimestamp(*f, "invalid_from", code, ptr+"/invalid_from"); err != nil {
			return err
		}
		if *f < c.ValidFrom || *f > *c.RetiredAt {
			return newError(code, ptr+"/invalid_from", "invalid compromise interval")
		}
	}
	return nil
}

func validateAuthority(a *Authority, ptr string) error {
	const code = CodePrincipalUnresolvable
	if a == nil {
		return nil
	}
	if a.Unrestricted {
		if a.Scopes != nil || a.Audiences != nil {
			return newError(code, ptr, "invalid delegation policy")
		}
		return nil
	}
	if err := checkStrings(a.Scopes, "scopes", false, code, ptr+"/scopes"); err != nil {
		return err
	}
	if err := checkStrings(a.Audiences, "audiences", false, code, ptr+"/audiences"); err != nil {
		return err
	}
	for i, aud := range a.Audiences {
		if err := ValidateAudience(aud); err != nil {
			return recode(relocate(err, ptr+"/audiences/"+strconv.Itoa(i)), code)
		}
	}
	return nil
}

// ValidatePrincipalDocument checks a principal document (Agent Delegation
// 4 and 5, as validate_principal_document of the SDK 0.12.6): an HTTPS id,
// the protocol, well-formed current and retired controllers with each key
// once across both lists, no controller time after updated_at, HTTPS
// aliases and avatar, and a delegation_service origin whenever a controller
// delegates. Errors carry principal_unresolvable: no authority can be read
// from such a document.
func ValidatePrincipalDocument(doc *PrincipalDocument) error {
	const code = CodePrincipalUnresolvable
	if !validHTTPSURL(doc.ID) {
		return newError(code, "/id", "principal.id must be an HTTPS URL")
	}
	if doc.Protocol != Protocol {
		return newError(code, "/protocol", "invalid principal protocol")
	}
	if err := checkTimestamp(doc.UpdatedAt, "updated_at", code, "/updated_at"); err != nil {
		return err
	}
	seen := make(map[string]bool)
	for _, list := range []struct {
		name    string
		records []Controller
		retired bool
	}{{"controllers", doc.Controllers, false}, {"retired_controllers", doc.RetiredControllers, true}} {
		for i := range list.records {
			c := &list.records[i]
			ptr := "/" + list.name + "/" + strconv.Itoa(i)
			if err := validateController(c, list.retired, ptr); err != nil {
				return err
			}
			if seen[c.ID] {
				return newError(code, ptr+"/id", "duplicate controller key")
			}
			seen[c.ID] = true
			if c.ValidFrom > doc.UpdatedAt || (c.RetiredAt != nil && *c.RetiredAt > doc.UpdatedAt) {
				return newError(code, ptr, "controller timestamp exceeds document update")
			}
		}
	}
	if err := checkStrings(doc.Aliases, "aliases", true, code, "/aliases"); err != nil {
		return err
	}
	for i, a := range doc.Aliases {
		if !validHTTPSURL(a) {
			return newError(code, "/aliases/"+strconv.Itoa(i), "alias must be an HTTPS URL")
		}
	}
	if doc.AvatarURL != "" && !validHTTPSURL(doc.AvatarURL) {
		return newError(code, "/avatar_url", "avatar_url must be an HTTPS URL")
	}
	if doc.DelegationService != "" {
		if !identity.ValidOrigin(doc.DelegationService) {
			return newError(code, "/delegation_service", "delegation_service must be a serialized HTTPS origin")
		}
	} else if doc.Delegates() {
		return newError(code, "/delegation_service", "delegation_service is required when a controller carries delegation")
	}
	return nil
}

// ValidateAudience checks a relying-party audience (Agent Delegation 5): an
// Agent ID (a relying agent) or a serialized HTTPS origin (a relying
// application). Errors carry invalid_request.
func ValidateAudience(a string) error {
	if strings.HasPrefix(a, identity.AgentIDPrefix) {
		if !identity.ValidAgentID(a) {
			return newError(CodeInvalidRequest, "", "audience %q is not a canonical Agent ID", trunc(a))
		}
		return nil
	}
	if !identity.ValidOrigin(a) {
		return newError(CodeInvalidRequest, "", "audience %q is not a serialized HTTPS origin", trunc(a))
	}
	return nil
}

// validHTTPSURL is the SDK's HTTPS URL rule for principal ids, aliases and
// avatars: a URL that parses, with the https scheme, a host and a port in
// 0-65535.
func validHTTPSURL(s string) bool {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Opaque != "" || u.Hostname() == "" {
		return false
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n > 65535 {
			return false
		}
	}
	return true
}

// relocate returns err with its pointer set to ptr.
func relocate(err error, ptr string) error {
	if e, ok := err.(*identity.Error); ok {
		c := *e
		c.Pointer = ptr
		return &c
	}
	return err
}

// trunc shortens untrusted text quoted in an error message.
func trunc(s string) string { return itext.Truncate(s, 200) }
