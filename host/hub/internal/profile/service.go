package profile

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"apconnect/host/hub/internal/hubdb"
	"apconnect/host/hub/internal/hubhttp"
	"apconnect/host/hub/internal/hubsvc"
	"apconnect/host/identity"
	rules "apconnect/host/proto/profile"
	"apconnect/host/text"
)

// The protocol and event type this service accepts, and its paths
// (section 7), from the rules package.
const (
	Protocol      = rules.Protocol
	PathDiscovery = rules.PathDiscovery
	PathProfiles  = rules.PathProfiles
	PathBatch     = rules.PathBatch
)

// Features returns the features advertised in the discovery document.
func Features() []string { return []string{"signed-updates", "event-history", "batch-read"} }

// Service is the Agent Profile 1.0 service.
type Service struct {
	origin    string
	db        *hubdb.DB
	pipeline  *hubhttp.Pipeline
	auth      *hubhttp.Authenticator
	limits    Limits
	validator *rules.Validator
	logger    *slog.Logger
}

// New builds the service on the hub's plumbing.
func New(env hubsvc.Env, limits Limits) (*Service, error) {
	if env.DB == nil || env.Pipeline == nil || env.Auth == nil {
		return nil, errors.New("profile: DB, Pipeline and Auth are required")
	}
	origin, err := identity.NormalizeOrigin(env.Origin)
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	limits = limits.withDefaults()
	v, err := rules.NewValidator(limits.Limits)
	if err != nil {
		return nil, err
	}
	logger := env.WithDefaults().Logger
	return &Service{origin: origin, db: env.DB, pipeline: env.Pipeline, auth: env.Auth,
		limits: limits, validator: v, logger: logger}, nil
}

// Close implements hubsvc.Service: the service has no background work.
func (s *Service) Close() error { return nil }

// Limits returns the limits in force (defaults filled in).
func (s *Service) Limits() Limits { return s.limits }

// Register mounts the service's endpoints on mux. Reads are public; a read
// that sends a request JWT must send a valid one.
func (s *Service) Register(mux *http.ServeMux) {
	m := func(h map[string]http.Handler) http.Handler { return hubhttp.Methods(s.logger, h) }
	mux.Handle(PathDiscovery, m(map[string]http.Handler{http.MethodGet: http.HandlerFunc(s.discovery)}))
	mux.Handle(PathProfiles, m(map[string]http.Handler{http.MethodPost: s.pipeline.Handler(s, s.limits.UpdateBodyBytes)}))
	mux.Handle(PathBatch, m(map[string]http.Handler{http.MethodPost: s.auth.Optional(http.HandlerFunc(s.batch))}))
	mux.Handle(PathProfiles+"/{agent_id}", m(map[string]http.Handler{http.MethodGet: s.auth.Optional(http.HandlerFunc(s.get))}))
	mux.Handle(PathProfiles+"/{agent_id}/events", m(map[string]http.Handler{http.MethodGet: s.auth.Optional(http.HandlerFunc(s.events))}))
}

// Discovery is the /.well-known/agent-profile document (Agent Identity 8.4
// and Agent Profile 7.1), with the service limits as an added member.
type Discovery struct {
	Protocol  string            `json:"protocol"`
	Service   string            `json:"service"`
	Endpoints map[string]string `json:"endpoints"`
	Features  []string          `json:"features"`
	Limits    Limits            `json:"limits"`
}

// DiscoveryDocument returns the service's discovery document.
func (s *Service) DiscoveryDocument() Discovery {
	return Discovery{
		Protocol: Protocol,
		Service:  s.origin,
		Endpoints: map[string]string{
			rules.EndpointProfiles: s.origin + PathProfiles,
			rules.EndpointBatch:    s.origin + PathBatch,
		},
		Features: Features(),
		Limits:   s.limits,
	}
}

func (s *Service) discovery(w http.ResponseWriter, r *http.Request) {
	if err := hubhttp.CheckQuery(r.URL.Query()); err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	hubhttp.WriteJSON(w, http.StatusOK, s.DiscoveryDocument())
}

// pathAgent reads and checks the {agent_id} path value.
func pathAgent(r *http.Request) (string, error) {
	id := r.PathValue("agent_id")
	if _, err := identity.ParseAgentID(id); err != nil {
		return "", hubhttp.Errorf(identity.CodeInvalidRequest, "path agent_id: %v", err).WithData("parameter", "agent_id")
	}
	return id, nil
}

func notFound(id string) *hubhttp.Error {
	return hubhttp.Errorf(identity.CodeNotFound, "no profile for %s", id)
}

// get serves GET /v1/profiles/{agent_id}: the materialized document.
func (s *Service) get(w http.ResponseWriter, r *http.Request) {
	id, err := pathAgent(r)
	if err == nil {
		err = hubhttp.CheckQuery(r.URL.Query())
	}
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	doc, err := document(r.Context(), s.db.Reader(), id)
	if err == nil && doc == nil {
		err = notFound(id)
	}
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	hubhttp.WriteJSON(w, http.StatusOK, doc)
}

// batch serves POST /v1/profiles/batch (section 7.3): found documents in
// request order, unknown ids omitted, a repeated id returned once, never a
// next_cursor, and more than 1000 ids rejected.
func (s *Service) batch(w http.ResponseWriter, r *http.Request) {
	ids, err := s.batchIDs(w, r)
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	docs, err := documents(r.Context(), s.db.Reader(), ids)
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	hubhttp.WriteList(w, docs, "")
}

func (s *Service) batchIDs(w http.ResponseWriter, r *http.Request) ([]string, error) {
	if err := hubhttp.CheckQuery(r.URL.Query()); err != nil {
		return nil, err
	}
	v, err := hubhttp.ReadStrictJSON(w, r, s.limits.BatchBodyBytes)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, hubhttp.Errorf(identity.CodeInvalidRequest, "body must be an object {\"ids\": [...]}")
	}
	for k := range obj {
		if k != "ids" {
			return nil, hubhttp.Errorf(identity.CodeInvalidRequest, "unknown body field %q", text.Truncate(k, 80)).WithData("pointer", "/"+text.EscapePointer(k))
		}
	}
	arr, ok := obj["ids"].([]any)
	if !ok {
		return nil, hubhttp.Errorf(identity.CodeInvalidRequest, "body must carry \"ids\", an array of Agent IDs").WithData("pointer", "/ids")
	}
	if len(arr) > rules.MaxBatchIDs {
		return nil, hubhttp.Errorf(identity.CodeInvalidRequest, "ids holds %d entries; at most %d are allowed", len(arr), rules.MaxBatchIDs).
			WithData("pointer", "/ids").WithData("limit", rules.MaxBatchIDs)
	}
	ids := make([]string, 0, len(arr))
	for i, it := range arr {
		id, ok := it.(string)
		if !ok || !identity.ValidAgentID(id) {
			return nil, hubhttp.Errorf(identity.CodeInvalidRequest, "ids[%d] is not a canonical Agent ID", i).WithData("pointer", fmt.Sprintf("/ids/%d", i))
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// events serves GET /v1/profiles/{agent_id}/events (section 7.5): accepted
// profile.update envelopes, newest (greatest nonce) first, limit 1 by
// default, paginated with an opaque cursor.
func (s *Service) events(w http.ResponseWriter, r *http.Request) {
	id, err := pathAgent(r)
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	q := r.URL.Query()
	if err := hubhttp.CheckQuery(q, "limit", "cursor"); err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	limit, err := hubhttp.ParseLimit(q, 1, s.limits.EventsPageMax)
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	before := int64(identity.MaxSafeInteger) + 1
	if c := q.Get("cursor"); q.Has("cursor") {
		if err := hubhttp.DecodeCursor(c, eventsCursorScope(id), &before); err != nil {
			hubhttp.WriteError(w, r, s.logger, err)
			return
		}
	}
	page, next, err := history(r.Context(), s.db.Reader(), id, before, limit)
	if err == nil && len(page) == 0 {
		var doc []byte
		if doc, err = document(r.Context(), s.db.Reader(), id); err == nil && doc == nil {
			err = notFound(id)
		}
	}
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	cursor := ""
	if next > 0 {
		cursor = hubhttp.EncodeCursor(eventsCursorScope(id), next)
	}
	hubhttp.WriteList(w, page, cursor)
}

func eventsCursorScope(id string) string { return "profile-events|" + id }

// --- the write side: hubhttp.WriteHandler ---

// Precheck rejects envelopes of another protocol or type: they can never
// have been accepted at POST /v1/profiles.
func (s *Service) Precheck(_ *http.Request, env *identity.Envelope) error {
	return rules.CheckEvent(&env.Event)
}

// NonceFloor is the durable comparison of section 6: the nonce of the
// actor's latest accepted profile.update.
func (s *Service) NonceFloor(ctx context.Context, tx *sql.Tx, env *identity.Envelope) (int64, error) {
	var n int64
	err := tx.QueryRowContext(ctx, `SELECT nonce FROM profiles WHERE agent_id = ?`, env.Event.Actor).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return n, err
}

// Accept validates the payload, applies the update quota and materializes
// the new document, which fully replaces the previous one.
func (s *Service) Accept(ctx context.Context, w *hubhttp.Write) (*hubhttp.Result, error) {
	ev := &w.Envelope.Event
	if err := s.validator.Validate(ev.Payload, ev.Actor); err != nil {
		return nil, err
	}
	if err := w.RateLimit(Protocol+"|"+rules.TypeUpdate+"|"+ev.Actor, s.limits.updateRate()); err != nil {
		return nil, err
	}
	doc, err := rules.Document(w.Envelope)
	if err != nil {
		return nil, err
	}
	if _, err := w.Tx.ExecContext(ctx, `INSERT INTO profiles (agent_id, event_hash, nonce, updated_at, document) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (agent_id) DO UPDATE SET event_hash = excluded.event_hash, nonce = excluded.nonce,
			updated_at = excluded.updated_at, document = excluded.document`,
		ev.Actor, w.Envelope.Hash, ev.Nonce, ev.CreatedAt, doc); err != nil {
		return nil, err
	}
	return &hubhttp.Result{Status: http.StatusOK, Body: doc}, nil
}

// Replay answers an exact resubmission with the current document (section 6).
func (s *Service) Replay(ctx context.Context, tx *sql.Tx, acc *hubhttp.Accepted) (*hubhttp.Result, error) {
	doc, err := document(ctx, tx, acc.Actor)
	if err != nil {
		return nil, err
	}
	if doc == nil {
		return nil, fmt.Errorf("profile: accepted update %s has no materialized profile", acc.Hash)
	}
	return &hubhttp.Result{Status: http.StatusOK, Body: doc}, nil
}
