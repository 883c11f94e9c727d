package discourse

import (
	"net/http"

	"apconnect/host/hub/internal/hubsvc"
	"apconnect/host/proto/adp"
	profilerules "apconnect/host/proto/profile"
)

// Name is the service's name and migration group in hub.db.
const Name = "discourse"

// Spec registers the Agent Discourse host with the hub: limits are its
// quotas and serving parameters (zero fields default), packs fetches
// external packs (nil refuses them). Its discovery document names the hub's
// own profile service when the hub hosts one.
func Spec(limits Limits, packs adp.PackResolver) hubsvc.Spec {
	return hubsvc.Spec{
		Name:       Name,
		Protocol:   Protocol,
		Migrations: migrations(),
		Statuses:   statuses,
		New: func(env hubsvc.Env) (hubsvc.Service, error) {
			cfg := Config{
				Origin: env.Origin, DB: env.DB, Pipeline: env.Pipeline, Auth: env.Auth, Clock: env.Clock,
				Limits: limits, Packs: packs, Context: env.Context, Logger: env.Logger,
			}
			if env.Hosts(profilerules.Protocol) {
				cfg.ProfileService = env.Origin
			}
			s, err := New(cfg)
			if err != nil {
				return nil, err
			}
			return service{s}, nil
		},
	}
}

// service is a *Service as a hubsvc.Service.
type service struct{ s *Service }

func (v service) Register(mux *http.ServeMux) { v.s.Register(mux) }
func (v service) Close() error                { v.s.Close(); return nil }

// statuses are the HTTP statuses of the 18 ADP codes of SDK 0.12.6 (their
// one definition is host/proto/adp); the retired room_ended and
// role_not_allowed are not among them. adp's verification codes
// (invalid_record, chain_broken) are never sent.
var statuses = map[string]int{
	adp.CodeRoomNotFound:           http.StatusNotFound,
	adp.CodeRoomNotActive:          http.StatusConflict,
	adp.CodeHostMismatch:           http.StatusBadRequest,
	adp.CodeApprovalRequired:       http.StatusForbidden,
	adp.CodeJoinRequestNotFound:    http.StatusNotFound,
	adp.CodeJoinRequestNotPending:  http.StatusConflict,
	adp.CodeMemberBanned:           http.StatusForbidden,
	adp.CodeMaxSpeakersExceeded:    http.StatusConflict,
	adp.CodeMembershipRequired:     http.StatusForbidden,
	adp.CodeRoomHeadMismatch:       http.StatusConflict,
	adp.CodeBaseRecordMismatch:     http.StatusConflict,
	adp.CodeAgentStatusNotFound:    http.StatusNotFound,
	adp.CodeTypeNotDefined:         http.StatusBadRequest,
	adp.CodeTypeDisabled:           http.StatusConflict,
	adp.CodeTypeConflict:           http.StatusConflict,
	adp.CodeInvalidTypeSchema:      http.StatusBadRequest,
	adp.CodePayloadSchemaViolation: http.StatusBadRequest,
	adp.CodePackUnavailable:        http.StatusBadGateway,
}
