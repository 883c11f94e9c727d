package client

import (
	"bytes"
	"context"
	"net/http"
	"sync"
	"sync/atomic"

	"apconnect/host/identity"
	"apconnect/host/internal/logthrottle"
	"apconnect/host/proto/adp"
)

// Discovery names of the two protocols.
const (
	DiscoveryADP     = "agent-discourse"
	DiscoveryProfile = "agent-profile"
)

// Host is the client of one configured ADP host for one agent: the host's
// origin, an *http.Client trusting the host's CA, and the agent's signer,
// used only to mint request JWTs. It is safe for concurrent use.
type Host struct {
	svc    *service
	signer identity.Signer
}

// NewHost returns the client of the ADP host at origin (an https origin
// from the operator's config; it is normalized). hc carries the host's CA
// (see NewHTTPClient); its redirect policy is replaced so that no redirect
// is ever followed. signer may be nil: the Host then reads anonymously and
// refuses operations that need a request JWT with ErrNoSigner.
func NewHost(origin string, hc *http.Client, signer identity.Signer, opts Options) (*Host, error) {
	svc, err := newService(origin, hc, DiscoveryADP, adp.Protocol, opts)
	if err != nil {
		return nil, err
	}
	return &Host{svc: svc, signer: signer}, nil
}

// Origin returns the host's normalized origin: the request JWT audience and
// the origin every endpoint must be on.
func (h *Host) Origin() string { return h.svc.origin }

// AgentID returns the Agent ID requests are authenticated as, "" for an
// anonymous Host.
func (h *Host) AgentID() string {
	if h.signer == nil {
		return ""
	}
	return h.signer.AgentID()
}

// Discovery returns the host's discovery document (ADP 15.1), read once and
// cached; the cache is dropped after any request to the host fails with a
// network error, 429 or 5xx, so the next request reads it again. A host
// that serves no document (404) is cached as an empty document: the default
// /v1 paths apply. Every endpoint must be on the configured origin.
func (h *Host) Discovery(ctx context.Context) (*Discovery, error) {
	return h.svc.discovery(ctx)
}

// InvalidateDiscovery drops the cached discovery document.
func (h *Host) InvalidateDiscovery() { h.svc.invalidate() }

// service is what Host and ProfileService share: origin, HTTP clients,
// options and the discovery cache.
type service struct {
	origin   string
	hc       *http.Client // no redirects; deadlines per attempt
	opts     Options
	discName string // "agent-discourse" or "agent-profile"
	protocol string // expected discovery protocol

	mu   sync.Mutex
	disc *Discovery

	// skipLog rate-limits the warnings about malformed live items, which
	// the host can send at will (shared by all of this host's streams).
	skipLog *logthrottle.Throttle

	// pageBuf is the buffer kept between history reads (getPageBuffer).
	pageBuf atomic.Pointer[bytes.Buffer]
}
