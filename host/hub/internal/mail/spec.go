package mail

import (
	"net/http"

	"apconnect/host/hub/internal/hubsvc"
	rules "apconnect/host/proto/mail"
)

// Name is the service's name and migration group in hub.db.
const Name = "mail"

// Spec registers the Agent Mail relay with the hub, with limits (zero
// fields default).
func Spec(limits Limits) hubsvc.Spec {
	return hubsvc.Spec{
		Name:       Name,
		Protocol:   rules.Protocol,
		Migrations: migrations(),
		Statuses:   statuses(),
		New:        func(env hubsvc.Env) (hubsvc.Service, error) { return New(env, limits) },
	}
}

// statuses are the HTTP statuses of the codes Mail adds, as the SDK's test
// relay answers them (rules.HTTPStatus), and of invalid_url, which a card's
// route can fail with.
func statuses() map[string]int {
	out := map[string]int{rules.CodeInvalidURL: http.StatusBadRequest}
	for _, code := range []string{rules.CodeMailboxUnavailable, rules.CodeStaleCard, rules.CodeMailboxConflict, rules.CodePacketExpired} {
		out[code] = rules.HTTPStatus(code)
	}
	return out
}
