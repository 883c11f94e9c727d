package discourse

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"apconnect/host/hub/internal/hubdb"
	"apconnect/host/hub/internal/hubhttp"
	"apconnect/host/identity"
	"apconnect/host/proto/adp"
)

// Protocol is the event protocol this service accepts.
const Protocol = adp.Protocol

// Default paths (ADP 15). PathRooms is the "rooms" endpoint: POST creates
// a room, GET lists the public rooms (ADP 17, as SDK 0.12.6 reads it).
// PathPublic is the older public list path, kept as an alias of GET
// PathRooms for clients written against the 0f87fee drafts; discovery no
// longer names it. PathMeRooms is the "my_rooms" endpoint.
const (
	PathDiscovery = "/.well-known/agent-discourse"
	PathRooms     = "/v1/rooms"
	PathPublic    = "/v1/rooms/public"
	PathMeRooms   = "/v1/me/rooms"
)

// Config wires a Service to the hub.
type Config struct {
	// Origin is the host API origin: the discovery document's service,
	// the origin room.create must name, and the base of room URLs.
	Origin string
	// DB is the hub's database, migrated to the discourse group.
	DB *hubdb.DB
	// Pipeline runs the live writes (Agent Identity 6.1).
	Pipeline *hubhttp.Pipeline
	// Auth verifies request JWTs for Origin.
	Auth *hubhttp.Authenticator
	// Clock is the hub's protocol clock (time.Now when nil).
	Clock func() time.Time
	// Limits are the quotas and serving parameters (zero fields default).
	Limits Limits
	// Packs fetches external pack documents (ADP 12.5); nil refuses
	// external packs and leaves "external-packs" out of the features.
	Packs adp.PackResolver
	// ProfileService is the origin of the Agent Profile service the
	// discovery document names as its profile resolver ("" when there is
	// none: the member is then omitted).
	ProfileService string
	// Context is the hub's lifetime: live streams and the housekeeping
	// loop end when it is cancelled.
	Context context.Context
	// Logger receives the service's logs (discarded when nil).
	Logger *slog.Logger
}

// Service is the Agent Discourse 1.0 host.
type Service struct {
	origin   string
	profile  string
	db       *hubdb.DB
	pipeline *hubhttp.Pipeline
	auth     *hubhttp.Authenticator
	clock    func() time.Time
	limits   Limits
	logger   *slog.Logger
	ctx      context.Context

	rules    *adp.Rules
	packs    *packStore
	rooms    *roomCache
	live     *liveHub
	statuses *statusStore

	loopDone chan struct{}
	stopLoop context.CancelFunc
	stopOnce sync.Once
}

// New builds the service and starts its housekeeping loop (stopped by
// cancelling cfg.Context or by Close).
func New(cfg Config) (*Service, error) {
	if cfg.DB == nil || cfg.Pipeline == nil || cfg.Auth == nil {
		return nil, errors.New("discourse: DB, Pipeline and Auth are required")
	}
	origin, err := identity.NormalizeOrigin(cfg.Origin)
	if err != nil {
		return nil, fmt.Errorf("discourse: %w", err)
	}
	s := &Service{
		origin: origin, profile: cfg.ProfileService, db: cfg.DB, pipeline: cfg.Pipeline, auth: cfg.Auth,
		clock: cfg.Clock, limits: cfg.Limits.withDefaults(), logger: cfg.Logger, ctx: cfg.Context,
	}
	if s.clock == nil {
		s.clock = time.Now
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.ctx == nil {
		s.ctx = context.Background()
	}
	if err := cfg.DB.Prepare(s.ctx, writeStatements...); err != nil {
		return nil, fmt.Errorf("discourse: %w", err)
	}
	s.packs = newPackStore(cfg.DB, cfg.Packs)
	s.rules = &adp.Rules{Limits: s.limits.Rules, HostOrigin: origin, Packs: s.packs, Schemas: adp.NewSchemaCache(0)}
	s.rooms = newRoomCache()
	s.live = newLiveHub()
	s.statuses = newStatusStore()
	loopCtx, cancel := context.WithCancel(s.ctx)
	s.stopLoop, s.loopDone = cancel, make(chan struct{})
	go s.housekeeping(loopCtx)
	return s, nil
}

// Close stops the housekeeping loop and waits for it. Live streams end with
// the hub's context.
func (s *Service) Close() {
	s.stopOnce.Do(func() {
		s.stopLoop()
		<-s.loopDone
	})
}

// Limits returns the limits in force (defaults filled in).
func (s *Service) Limits() Limits { return s.limits }

// Rules returns the adp rules the service enforces: its limits, its origin
// as the room.create host, and its pack resolution.
func (s *Service) Rules() *adp.Rules { return s.rules }

// RoomURL returns the canonical URL of a room (ADP 6.2).
func (s *Service) RoomURL(id string) string { return s.origin + PathRooms + "/" + id }

// now returns the hub clock in Unix ms.
func (s *Service) now() int64 { return s.clock().UnixMilli() }

// Register mounts the service's endpoints on mux.
func (s *Service) Register(mux *http.ServeMux) {
	m := func(h map[string]http.Handler) http.Handler { return hubhttp.Methods(s.logger, h) }
	opt := func(f http.HandlerFunc) http.Handler { return s.auth.Optional(f) }
	req := func(f http.HandlerFunc) http.Handler { return s.auth.Require(f) }
	body := s.limits.BodyBytes
	mux.Handle(PathDiscovery, m(map[string]http.Handler{http.MethodGet: http.HandlerFunc(s.discovery)}))
	mux.Handle(PathRooms, m(map[string]http.Handler{
		http.MethodGet:  opt(s.publicRooms),
		http.MethodPost: s.pipeline.Handler(createWriter{s}, body),
	}))
	mux.Handle(PathPublic, m(map[string]http.Handler{http.MethodGet: opt(s.publicRooms)}))
	mux.Handle(PathMeRooms, m(map[string]http.Handler{http.MethodGet: req(s.meRooms)}))
	r := PathRooms + "/{room_id}"
	mux.Handle(r, m(map[string]http.Handler{
		http.MethodGet:  opt(s.getRoom),
		http.MethodPost: s.pipeline.Handler(eventWriter{s}, body),
	}))
	mux.Handle(r+"/events", m(map[string]http.Handler{http.MethodGet: opt(s.events)}))
	mux.Handle(r+"/events/live", m(map[string]http.Handler{http.MethodGet: req(s.liveStream)}))
	mux.Handle(r+"/join-requests", m(map[string]http.Handler{
		http.MethodGet:  req(s.listJoinRequests),
		http.MethodPost: s.pipeline.Handler(joinWriter{s}, body),
	}))
	mux.Handle(r+"/join-requests/{request_id}", m(map[string]http.Handler{http.MethodGet: req(s.getJoinRequest)}))
	mux.Handle(r+"/agent-status", m(map[string]http.Handler{
		http.MethodGet: opt(s.listStatus),
		http.MethodPut: req(s.putStatus),
	}))
	mux.Handle(r+"/agent-status/{agent_id}", m(map[string]http.Handler{http.MethodGet: opt(s.getStatus)}))
	mux.Handle(r+"/archive", m(map[string]http.Handler{http.MethodGet: opt(s.archiveManifest)}))
	mux.Handle(r+"/archive.jsonl", m(map[string]http.Handler{http.MethodGet: opt(s.archiveJSONL)}))
	mux.Handle(r+"/archive.md", m(map[string]http.Handler{http.MethodGet: opt(s.archiveMarkdown)}))
	mux.Handle(r+"/archive/packs/{n}", m(map[string]http.Handler{http.MethodGet: opt(s.archivePack)}))
}
