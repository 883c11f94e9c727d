package delegation

import (
	"apconnect/host/identity"
)

// QueryRequest is the body of POST {query} (Agent Delegation 9.5). Empty
// strings, a zero Limit and an empty Status are absent members.
type QueryRequest struct {
	Subject     string
	PrincipalID string
	ID          string
	Status      Status
	Limit       int64
	Cursor      string
}

// ParseQueryRequest strictly parses a query body (QueryRequestFromValue).
func ParseQueryRequest(data []byte) (*QueryRequest, error) {
	v, err := identity.ParseStrict(data)
	if err != nil {
		return nil, &identity.Error{Code: CodeInvalidRequest, Message: "query is not strict JSON: " + err.Error(), Err: err}
	}
	return QueryRequestFromValue(v)
}

// QueryRequestFromValue reads a parsed query body: string members, a known
// status, an integer limit; null is an absent member and unknown members
// are ignored, as the SDK's typed request reads them. A present member must
// not be empty (limit: not below 1). It does not apply the public or
// enumeration rule: ValidateQueryRequest and AuthorizeQuery do.
func QueryRequestFromValue(v any) (*QueryRequest, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, newError(CodeInvalidRequest, "", "query must be a JSON object")
	}
	present := make(map[string]any, len(m))
	for k, x := range m {
		if x != nil {
			present[k] = x
		}
	}
	o := object{m: present, code: CodeInvalidRequest}
	q := &QueryRequest{}
	var status string
	for _, f := range []struct {
		key string
		dst *string
	}{{"subject", &q.Subject}, {"principal_id", &q.PrincipalID}, {"id", &q.ID}, {"status", &status}, {"cursor", &q.Cursor}} {
		s, has, err := o.str(f.key, false)
		if err != nil {
			return nil, err
		}
		if has && s == "" && f.key != "cursor" {
			return nil, newError(o.code, o.at(f.key), "%s must not be empty", f.key)
		}
		*f.dst = s
	}
	q.Status = Status(status)
	limit, has, err := o.int("limit", false)
	if err != nil {
		return nil, err
	}
	if has && (limit < 1 || limit > maxSafeInteger) {
		return nil, newError(o.code, "/limit", "limit must be a positive integer")
	}
	q.Limit = limit
	return q, nil
}

// ValidateQueryRequest checks a query (validate_delegation_query_request).
// A public query is an existence check and names both subject and
// principal_id; with allowEnumeration (the request carries a request JWT)
// one of them suffices. Member values must be valid: an Agent ID subject,
// an HTTPS principal_id, a delegation id, a status, a positive limit.
// Errors carry invalid_request.
func ValidateQueryRequest(q *QueryRequest, allowEnumeration bool) error {
	const code = CodeInvalidRequest
	if allowEnumeration {
		if q.Subject == "" && q.PrincipalID == "" {
			return newError(code, "", "query must include at least one of subject or principal_id")
		}
	} else if q.Subject == "" || q.PrincipalID == "" {
		return newError(code, "", "public query must include both subject and principal_id")
	}
	if q.ID != "" && !ValidID(q.ID) {
		return newError(code, "/id", "delegation id must match [A-Za-z0-9._~-]{1,128} and not be a dot segment")
	}
	if q.Status != "" && !q.Status.Valid() {
		return newError(code, "/status", "invalid status")
	}
	if q.Subject != "" && !identity.ValidAgentID(q.Subject) {
		return newError(code, "/subject", "subject must be a canonical Agent ID")
	}
	if q.PrincipalID != "" && !validHTTPSURL(q.PrincipalID) {
		return newError(code, "/principal_id", "principal_id must be an HTTPS URL")
	}
	if q.Limit < 0 || q.Limit > maxSafeInteger {
		return newError(code, "/limit", "limit must be a positive integer")
	}
	return nil
}

// EffectiveLimit is the page size a service uses: DefaultQueryLimit when
// the query names none, capped at MaxQueryLimit.
func (q *QueryRequest) EffectiveLimit() int {
	switch {
	case q.Limit <= 0:
		return DefaultQueryLimit
	case q.Limit > MaxQueryLimit:
		return MaxQueryLimit
	}
	return int(q.Limit)
}

// Matches reports whether cred satisfies the query's filters: subject,
// principal_id and id when named, and the status a read at now reports
// (Credential.StatusAt) when named.
func (q *QueryRequest) Matches(cred *Credential, now int64) bool {
	return (q.Subject == "" || cred.Subject == q.Subject) &&
		(q.PrincipalID == "" || cred.PrincipalID == q.PrincipalID) &&
		(q.ID == "" || cred.ID == q.ID) &&
		(q.Status == "" || cred.StatusAt(now) == q.Status)
}

// Value returns the query as a JSON object value.
func (q *QueryRequest) Value() map[string]any {
	m := map[string]any{}
	for k, s := range map[string]string{"subject": q.Subject, "principal_id": q.PrincipalID, "id": q.ID,
		"status": string(q.Status), "cursor": q.Cursor} {
		if s != "" {
			m[k] = s
		}
	}
	if q.Limit > 0 {
		m["limit"] = q.Limit
	}
	return m
}

// MarshalJSON writes the query in canonical (JCS) form.
func (q QueryRequest) MarshalJSON() ([]byte, error) { return identity.Canonicalize(q.Value()) }

// AccessKind is what authorizes a query.
type AccessKind int

const (
	// AccessExistence: a public existence check, naming both subject and
	// principal_id; no authentication.
	AccessExistence AccessKind = iota + 1
	// AccessSubject: the subject enumerates its own credentials (a request
	// JWT from the subject).
	AccessSubject
	// AccessController: a current delegating controller of the principal
	// enumerates the principal's credentials inside its ceiling.
	AccessController
)

// QueryAccess is a query's authorization, from AuthorizeQuery; Permits
// filters results by it.
type QueryAccess struct {
	Kind AccessKind
	// Caller is the request JWT's Agent ID ("" for a public query).
	Caller string
	// Principal and Controller are set for AccessController.
	Principal  *PrincipalDocument
	Controller *Controller
}

// AuthorizeQuery decides what a query may see. caller is the Agent ID of
// the query's verified request JWT ("" without one). A query naming both
// subject and principal_id is a public existence check. Otherwise it is an
// enumeration and needs a caller: the subject itself (subject named), or,
// when only principal_id is named, a current controller of that principal
// bound at now with delegation authority; principal is the principal's
// document, read from its id (no older than MaxPrincipalAge). Errors carry
// invalid_request, permission_denied, principal_not_canonical,
// controller_not_current or delegation_not_permitted.
func AuthorizeQuery(q *QueryRequest, caller string, principal *PrincipalDocument, now int64) (*QueryAccess, error) {
	if err := ValidateQueryRequest(q, caller != ""); err != nil {
		return nil, err
	}
	switch {
	case q.Subject != "" && q.PrincipalID != "":
		return &QueryAccess{Kind: AccessExistence, Caller: caller}, nil
	case q.Subject != "":
		if q.Subject != caller {
			return nil, newError(CodePermissionDenied, "/subject", "only the subject may enumerate its delegations")
		}
		return &QueryAccess{Kind: AccessSubject, Caller: caller}, nil
	}
	if principal == nil {
		return nil, newError(CodePrincipalUnresolvable, "/principal_id", "the principal document is needed to authorize a controller")
	}
	if err := ValidatePrincipalDocument(principal); err != nil {
		return nil, err
	}
	if principal.ID != q.PrincipalID {
		return nil, newError(CodePrincipalNotCanonical, "/principal_id", "principal_id is not the principal's canonical id")
	}
	c := principal.FindController(caller, false)
	if c == nil || !c.BoundAt(now) {
		return nil, newError(CodeControllerNotCurrent, "", "controller cannot enumerate")
	}
	if c.Delegation == nil {
		return nil, newError(CodeDelegationNotPermitted, "", "controller cannot enumerate")
	}
	return &QueryAccess{Kind: AccessController, Caller: caller, Principal: principal, Controller: c}, nil
}

// Permits reports whether the access may see cred: any credential the
// query matches for an existence check; the caller's own for a subject;
// the principal's credentials inside the controller's ceiling for a
// controller (ControllerCoversCredential), since one credential outside it
// fails a connector's whole page.
func (a *QueryAccess) Permits(cred *Credential) bool {
	switch a.Kind {
	case AccessExistence:
		return true
	case AccessSubject:
		return cred.Subject == a.Caller
	case AccessController:
		return cred.PrincipalID == a.Principal.ID && ControllerCoversCredential(a.Controller, cred)
	}
	return false
}
