package knowledge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"apconnect/host/hub/internal/hubdb"
	"apconnect/host/hub/internal/hubhttp"
	"apconnect/host/hub/internal/hubsvc"
	"apconnect/host/identity"
	rules "apconnect/host/proto/knowledge"
)

// The paths of the service (Agent Knowledge 9.1 defaults).
const (
	PathDiscovery = rules.WellKnownPath
	PathEvents    = rules.DefaultEndpointPrefix + rules.EndpointEvents
	PathQuery     = rules.DefaultEndpointPrefix + rules.EndpointQuery
	PathBatch     = rules.DefaultEndpointPrefix + rules.EndpointBatch
	PathSearch    = rules.DefaultEndpointPrefix + rules.EndpointSearch
)

// Modes are the search modes the service advertises: lexical only.
func Modes() []string { return []string{rules.ModeLexical} }

// Service is the Agent Knowledge 1.0 service.
type Service struct {
	origin string
	db     *hubdb.DB
	auth   *hubhttp.Authenticator
	clock  func() time.Time
	limits Limits
	logger *slog.Logger
	doc    []byte // the discovery document, JSON
	sample textSample
}

// New builds the service on the hub's plumbing.
func New(env hubsvc.Env, limits Limits) (*Service, error) {
	if env.DB == nil || env.Auth == nil {
		return nil, errors.New("knowledge: DB and Auth are required")
	}
	if err := limits.check(); err != nil {
		return nil, err
	}
	origin, err := identity.NormalizeOrigin(env.Origin)
	if err != nil {
		return nil, fmt.Errorf("knowledge: %w", err)
	}
	env = env.WithDefaults()
	clock, logger := env.Clock, env.Logger
	s := &Service{origin: origin, db: env.DB, auth: env.Auth, clock: clock, limits: limits.withDefaults(), logger: logger}
	d := s.Discovery()
	// The service checks its own document as a client will.
	if _, err := rules.ValidateDiscovery(d.Value(), origin); err != nil {
		return nil, fmt.Errorf("knowledge: discovery document: %w", err)
	}
	if s.doc, err = identity.Canonicalize(d.Value()); err != nil {
		return nil, fmt.Errorf("knowledge: discovery document: %w", err)
	}
	if err := s.sample.load(context.Background(), env.DB.Reader()); err != nil {
		return nil, fmt.Errorf("knowledge: %w", err)
	}
	return s, nil
}

// Close implements hubsvc.Service: the service has no background work.
func (s *Service) Close() error { return nil }

// Limits returns the limits in force (defaults filled in).
func (s *Service) Limits() Limits { return s.limits }

// Discovery returns the service's discovery document: the four endpoints,
// ranked search in the lexical mode, and the envelope size limit.
func (s *Service) Discovery() *rules.Discovery {
	d := rules.NewDiscovery(s.origin, Modes()...)
	d.Limits = map[string]int64{"max_envelope_bytes": int64(s.limits.MaxEnvelopeBytes)}
	return d
}

// Register mounts the service's endpoints on mux. Reads are public; a
// request that sends a request JWT must send a valid one. Submissions may
// be anonymous too: anyone may relay a public signed event, so the caller
// is never required to be its actor (Agent Knowledge 8.1).
func (s *Service) Register(mux *http.ServeMux) {
	m := func(h map[string]http.Handler) http.Handler { return hubhttp.Methods(s.logger, h) }
	opt := func(f http.HandlerFunc) http.Handler { return s.auth.Optional(f) }
	mux.Handle(PathDiscovery, m(map[string]http.Handler{http.MethodGet: http.HandlerFunc(s.discovery)}))
	mux.Handle(PathEvents, m(map[string]http.Handler{http.MethodPost: opt(s.submit)}))
	mux.Handle(PathEvents+"/{event_id}", m(map[string]http.Handler{http.MethodGet: opt(s.event)}))
	mux.Handle(PathQuery, m(map[string]http.Handler{http.MethodGet: opt(s.query)}))
	mux.Handle(PathBatch, m(map[string]http.Handler{http.MethodPost: opt(s.batch)}))
	mux.Handle(PathSearch, m(map[string]http.Handler{http.MethodPost: opt(s.search)}))
}

func (s *Service) discovery(w http.ResponseWriter, r *http.Request) {
	if err := hubhttp.CheckQuery(r.URL.Query()); err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	hubhttp.WriteJSON(w, http.StatusOK, s.doc)
}

// nowMS is the service clock in Unix milliseconds.
func (s *Service) nowMS() int64 { return s.clock().UnixMilli() }

// fail writes err. A rules error the service itself caused
// (invalid_response from CheckSelection) is an internal error: never the
// client's fault.
func (s *Service) fail(w http.ResponseWriter, r *http.Request, err error) {
	if identity.ErrorCode(err) == rules.CodeInvalidResponse {
		err = &hubhttp.Error{Code: hubhttp.CodeInternal, Message: "internal error", Err: err}
	}
	hubhttp.WriteError(w, r, s.logger, err)
}
