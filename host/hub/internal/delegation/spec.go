package delegation

import (
	"net/http"

	"apconnect/host/hub/internal/hubsvc"
	rules "apconnect/host/proto/delegation"
)

// Name is the service's name and migration group in hub.db.
const Name = "delegation"

// Spec registers the Agent Delegation service with the hub, with limits
// (zero fields default).
func Spec(limits Limits) hubsvc.Spec {
	return hubsvc.Spec{
		Name:       Name,
		Protocol:   rules.Protocol,
		Migrations: migrations(),
		Statuses:   statuses,
		New:        func(env hubsvc.Env) (hubsvc.Service, error) { return New(env, limits) },
	}
}

// statuses are the HTTP statuses of the eight Agent Delegation codes of SDK
// 0.12.6 (their one definition is host/proto/delegation). The SDK defines
// no service, so these are the hub's choice; its clients read the code.
// rules.CodeInvalidDelegation is a verification code and never sent.
var statuses = map[string]int{
	rules.CodePrincipalUnresolvable:      http.StatusUnprocessableEntity,
	rules.CodePrincipalNotCanonical:      http.StatusBadRequest,
	rules.CodeControllerNotCurrent:       http.StatusForbidden,
	rules.CodeDelegationNotPermitted:     http.StatusForbidden,
	rules.CodeDelegationCeilingExceeded:  http.StatusForbidden,
	rules.CodeCredentialNotFound:         http.StatusNotFound,
	rules.CodeCredentialIdentityMismatch: http.StatusConflict,
	rules.CodeGrantExpired:               http.StatusBadRequest,
}
