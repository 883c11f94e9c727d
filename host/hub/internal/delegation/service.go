package delegation

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"apconnect/host/hub/internal/hubdb"
	"apconnect/host/hub/internal/hubhttp"
	"apconnect/host/hub/internal/hubsvc"
	"apconnect/host/identity"
	rules "apconnect/host/proto/delegation"
)

// The protocol this service hosts and its paths (Agent Delegation 9, the
// RECOMMENDED ones), from the rules package.
const (
	Protocol        = rules.Protocol
	PathDiscovery   = rules.WellKnownPath
	PathDelegations = rules.DefaultDelegationsPath
	PathQuery       = PathDelegations + "/query"
)

// Features returns the features advertised in the discovery document.
func Features() []string { return []string{"principal-hosting"} }

// Service is the Agent Delegation 1.0 service and the principal hosting.
type Service struct {
	origin   string
	db       *hubdb.DB
	pipeline *hubhttp.Pipeline
	auth     *hubhttp.Authenticator
	clock    func() time.Time
	limits   Limits
	logger   *slog.Logger
	// reader is the read pool with the service's reads prepared.
	reader *preparedReader
}

// New builds the service on the hub's plumbing and records the hub's origin
// in hub.db (for the command line).
func New(env hubsvc.Env, limits Limits) (*Service, error) {
	if env.DB == nil || env.Pipeline == nil || env.Auth == nil {
		return nil, errors.New("delegation: DB, Pipeline and Auth are required")
	}
	origin, err := identity.NormalizeOrigin(env.Origin)
	if err != nil {
		return nil, fmt.Errorf("delegation: %w", err)
	}
	env = env.WithDefaults()
	clock, logger := env.Clock, env.Logger
	err = env.DB.Write(context.Background(), func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO principal_origin (k, origin) VALUES (1, ?) ON CONFLICT (k) DO UPDATE SET origin = excluded.origin`, origin)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("delegation: %w", err)
	}
	reader, err := prepare(env.DB.Reader(), readStatements...)
	if err != nil {
		return nil, fmt.Errorf("delegation: %w", err)
	}
	return &Service{origin: origin, db: env.DB, pipeline: env.Pipeline, auth: env.Auth, clock: clock,
		limits: limits.withDefaults(), logger: logger, reader: reader}, nil
}

// Close implements hubsvc.Service: it releases the prepared reads (the
// service has no background work).
func (s *Service) Close() error { return s.reader.Close() }

// Register mounts the discovery document, the service's endpoints and the
// principals. Reads are public; a request that sends a request JWT must
// send a valid one.
func (s *Service) Register(mux *http.ServeMux) {
	m := func(h map[string]http.Handler) http.Handler { return hubhttp.Methods(s.logger, h) }
	mux.Handle(PathDiscovery, m(map[string]http.Handler{http.MethodGet: http.HandlerFunc(s.discovery)}))
	mux.Handle(PathDelegations, m(map[string]http.Handler{http.MethodPost: s.pipeline.Handler(s, s.limits.SubmitBodyBytes)}))
	mux.Handle(PathQuery, m(map[string]http.Handler{http.MethodPost: s.auth.Optional(http.HandlerFunc(s.query))}))
	mux.Handle(PathDelegations+"/{id}", m(map[string]http.Handler{http.MethodGet: s.auth.Optional(http.HandlerFunc(s.credential))}))
	mux.Handle(PathDelegations+"/{id}/events", m(map[string]http.Handler{http.MethodGet: s.auth.Optional(http.HandlerFunc(s.events))}))
	mux.Handle(PathPrincipals+"{name}", m(map[string]http.Handler{http.MethodGet: http.HandlerFunc(s.principal)}))
}

// DiscoveryDocument returns the service's discovery document, both
// endpoints on the hub's origin.
func (s *Service) DiscoveryDocument() rules.Discovery {
	return rules.NewDiscovery(s.origin, Features()...)
}

func (s *Service) discovery(w http.ResponseWriter, r *http.Request) {
	if err := hubhttp.CheckQuery(r.URL.Query()); err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	body, err := s.DiscoveryDocument().MarshalJSON()
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	hubhttp.WriteJSON(w, http.StatusOK, body)
}

// principal serves GET /principals/{name}: the hosted document, or a copy
// of it at one of its aliases.
func (s *Service) principal(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	err := hubhttp.CheckQuery(r.URL.Query())
	var body []byte
	if err == nil {
		body, err = principalDocument(r.Context(), s.reader, s.origin, name)
	}
	if err == nil && body == nil {
		err = hubhttp.Errorf(identity.CodeNotFound, "no principal is hosted at %s%s", PathPrincipals, truncName(name))
	}
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	hubhttp.WriteJSON(w, http.StatusOK, body)
}

func truncName(name string) string {
	if len(name) > 140 {
		return name[:140] + "…"
	}
	return name
}
