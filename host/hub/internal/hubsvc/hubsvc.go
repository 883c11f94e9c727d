// Package hubsvc is how the local hub wires a protocol service. A service
// package (host/hub/internal/<name>) exports one function returning its
// Spec — its name, protocol, migration group, error statuses and
// constructor — and host/hub lists those calls in one place. The hub opens
// hub.db with every Spec's migration group (after hubdb.Shared), registers
// their statuses, builds each service with the shared plumbing (Env), mounts
// its routes and closes it on shutdown.
//
// A service imports the shared plumbing (hubdb, hubhttp, this package) and
// the rules packages under host/proto, never another service: what one
// service needs to know of another (a sibling's protocol, for a discovery
// document) it reads from Env.
package hubsvc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"apconnect/host/hub/internal/hubdb"
	"apconnect/host/hub/internal/hubhttp"
)

// Spec declares one service of the hub.
type Spec struct {
	// Name names the service in logs and its migration group in hub.db:
	// lower-case letters, digits and underscores ("discourse"). A released
	// name never changes.
	Name string
	// Protocol is the protocol id the service hosts ("agent-profile/1.0").
	Protocol string
	// Migrations is the service's migration group: its own tables, numbered
	// 1, 2, 3, …, never edited once released. They may reference the
	// shared tables (hubdb.Shared), never another service's.
	Migrations []hubdb.Migration
	// Statuses maps the error codes the service adds to the Agent Identity
	// ones onto their HTTP statuses (hubhttp.RegisterStatuses).
	Statuses map[string]int
	// New builds the service on the open, migrated database. Background
	// work it starts ends when Env.Context is cancelled or Close is called.
	New func(Env) (Service, error)
}

// Group returns the service's migration group.
func (s Spec) Group() hubdb.Group { return hubdb.Group{Name: s.Name, Migrations: s.Migrations} }

// Service is a built service.
type Service interface {
	// Register mounts the service's routes (Go 1.22 patterns) on mux: its
	// discovery document and its endpoints. Wrap handlers in
	// hubhttp.Methods so that other methods get the hub's 405.
	Register(mux *http.ServeMux)
	// Close stops the service's background work and waits for it. The hub
	// calls it once serving has stopped, before closing the database.
	Close() error
}

// Env is the hub's shared plumbing, handed to every service's New.
type Env struct {
	// Origin is the hub's service origin (https://host:port), normalized:
	// the request JWT audience and the base of every endpoint URL.
	Origin string
	// DB is hub.db, migrated to every group.
	DB *hubdb.DB
	// Pipeline runs live writes (Agent Identity 6.1) for every protocol,
	// with one nonce cache per hub.
	Pipeline *hubhttp.Pipeline
	// Auth verifies request JWTs for Origin.
	Auth *hubhttp.Authenticator
	// Clock is the hub's protocol clock.
	Clock func() time.Time
	// Context is the hub's lifetime: it is cancelled when the hub begins
	// shutting down, so long-lived handlers (event streams) end.
	Context context.Context
	// Logger is the hub's logger, with the service's name attached.
	Logger *slog.Logger
	// Protocols are the protocols of every service the hub hosts, all at
	// Origin, so that one discovery document can name a sibling service.
	Protocols []string
}

// WithDefaults returns e with a nil Clock set to time.Now and a nil Logger
// set to one that discards, so a service built in a test needs neither.
func (e Env) WithDefaults() Env {
	if e.Clock == nil {
		e.Clock = time.Now
	}
	if e.Logger == nil {
		e.Logger = slog.New(slog.DiscardHandler)
	}
	return e
}

// Hosts reports whether the hub hosts a service of protocol (at Origin).
func (e Env) Hosts(protocol string) bool { return slices.Contains(e.Protocols, protocol) }

// Check refuses a list of specs the hub cannot wire: a spec without a name,
// protocol or constructor, and two specs of one name or one protocol.
func Check(specs []Spec) error {
	names, protocols := map[string]bool{}, map[string]bool{}
	for _, s := range specs {
		switch {
		case s.Name == "" || s.Protocol == "" || s.New == nil:
			return fmt.Errorf("hub service %q: a name, a protocol and New are required", s.Name)
		case s.Name == hubdb.SharedGroup:
			return fmt.Errorf("hub service %q: the name is the shared migration group's", s.Name)
		case names[s.Name]:
			return fmt.Errorf("hub service %q is listed twice", s.Name)
		case protocols[s.Protocol]:
			return fmt.Errorf("hub services %q and another both host %s", s.Name, s.Protocol)
		}
		names[s.Name], protocols[s.Protocol] = true, true
	}
	return nil
}

// Groups returns the migration groups of specs, in order.
func Groups(specs []Spec) []hubdb.Group {
	out := make([]hubdb.Group, len(specs))
	for i, s := range specs {
		out[i] = s.Group()
	}
	return out
}

// CloseAll closes services in reverse order and joins their errors.
func CloseAll(services []Service) error {
	var errs []error
	for i := len(services) - 1; i >= 0; i-- {
		errs = append(errs, services[i].Close())
	}
	return errors.Join(errs...)
}
