package knowledge

import (
	"net/http"

	"apconnect/host/hub/internal/hubsvc"
	rules "apconnect/host/proto/knowledge"
)

// Name is the service's name and migration group in hub.db.
const Name = "knowledge"

// Spec registers the Agent Knowledge service with the hub, with limits
// (zero fields default).
func Spec(limits Limits) hubsvc.Spec {
	return hubsvc.Spec{
		Name:       Name,
		Protocol:   rules.Protocol,
		Migrations: migrations(),
		Statuses:   Statuses(),
		New:        func(env hubsvc.Env) (hubsvc.Service, error) { return New(env, limits) },
	}
}

// Statuses are the HTTP statuses of the six Knowledge error codes, as
// Agent Knowledge 9.7 recommends them.
func Statuses() map[string]int {
	return map[string]int{
		rules.CodeMissingDependency:     http.StatusConflict,
		rules.CodeInvalidTarget:         http.StatusBadRequest,
		rules.CodeInvalidCursor:         http.StatusBadRequest,
		rules.CodeQueryTooBroad:         http.StatusUnprocessableEntity,
		rules.CodeQueryUnavailable:      http.StatusServiceUnavailable,
		rules.CodeUnsupportedSearchMode: http.StatusBadRequest,
	}
}
