package profile

import (
	"apconnect/host/hub/internal/hubsvc"
	rules "apconnect/host/proto/profile"
)

// Name is the service's name and migration group in hub.db.
const Name = "profile"

// Spec registers the Agent Profile service with the hub, with limits (zero
// fields default).
func Spec(limits Limits) hubsvc.Spec {
	return hubsvc.Spec{
		Name:       Name,
		Protocol:   rules.Protocol,
		Migrations: migrations(),
		New:        func(env hubsvc.Env) (hubsvc.Service, error) { return New(env, limits) },
	}
}
