package hub

import (
	"log/slog"
	"time"

	"apconnect/host/hub/internal/delegation"
	"apconnect/host/hub/internal/discourse"
	"apconnect/host/hub/internal/knowledge"
	mailrelay "apconnect/host/hub/internal/mail"
	"apconnect/host/hub/internal/profile"
	"apconnect/host/proto/adp"
)

// DefaultListen is the listen address when Options.Listen is empty: an
// ephemeral port on IPv4 loopback.
const DefaultListen = "127.0.0.1:0"

// DefaultShutdownTimeout bounds a graceful shutdown before open connections
// are closed.
const DefaultShutdownTimeout = 5 * time.Second

// Options configure a Hub.
type Options struct {
	// Listen is host:port to listen on (DefaultListen when empty). The host
	// must be a loopback address or "localhost" unless AllowRemote is set.
	Listen string
	// DataDir holds ca.pem, the keys and hub.db; it is created (mode 0700)
	// if missing. Required.
	DataDir string
	// AllowRemote permits a non-loopback listen address.
	AllowRemote bool
	// Origin overrides the service origin (https://host[:port]) that
	// discovery documents name and request JWTs must carry as aud. By
	// default it is derived from the listen address and the bound port.
	// Its host is added to the server certificate.
	Origin string
	// Clock is the protocol clock (live-write window, accepted_at, JWT
	// times, quotas); time.Now when nil. TLS certificates always use the
	// real time.
	Clock func() time.Time
	// Logger receives the hub's logs (discarded when nil). Authorization
	// headers and request bodies are never logged.
	Logger *slog.Logger
	// Limits tune the live-write rules and the services' limits.
	Limits Limits
	// ShutdownTimeout bounds graceful shutdown (DefaultShutdownTimeout
	// when zero).
	ShutdownTimeout time.Duration
	// PackFetcher fetches external ADP type packs (ADP 12.5). Nil means an
	// adp.HTTPSPackFetcher with its defaults: HTTPS at every hop, 256 KiB,
	// 10 s, and no loopback or private addresses. Tests serving packs on
	// loopback pass one with AllowPrivateAddresses and their CA.
	PackFetcher adp.PackResolver
	// NoExternalPacks refuses every external pack import (pack_unavailable)
	// and leaves "external-packs" out of the discovery features.
	NoExternalPacks bool
}

// Limits are the hub's protocol parameters. Zero values take the defaults
// noted on each field.
type Limits struct {
	// LiveWriteWindow is the ±window for event created_at (300 s).
	LiveWriteWindow time.Duration
	// NonceCacheTTL is how long an actor's greatest accepted nonce is
	// remembered after its latest acceptance, its final millisecond
	// included; at least LiveWriteWindow (2 × LiveWriteWindow by default,
	// the SDK 0.12.6 default: 600 s).
	NonceCacheTTL time.Duration
	// TokenMaxLifetime bounds a request JWT's exp - iat (300 s).
	TokenMaxLifetime time.Duration
	// TokenClockSkew is the tolerated skew for iat and exp (60 s). This is
	// hub policy: SDK 0.12.6 hosts verify with none (iat <= now <= exp),
	// and identity.VerifyToken with skew 0 gives their verdicts.
	TokenClockSkew time.Duration
	// MaxWriteBody is the default body limit of write endpoints that do not
	// set their own (512 KiB).
	MaxWriteBody int64
	// Profile are the Agent Profile service's limits; zero fields take
	// DefaultProfileLimits.
	Profile ProfileLimits
	// Discourse are the Agent Discourse host's quotas (ADP 20) and serving
	// parameters; zero fields take DefaultDiscourseLimits.
	Discourse DiscourseLimits
	// Delegation are the Agent Delegation service's body, page and quota
	// limits; zero fields take DefaultDelegationLimits.
	Delegation DelegationLimits
	// Mail are the Agent Mail relay's per-mailbox quotas; zero fields take
	// DefaultMailLimits.
	Mail MailLimits
	// Knowledge are the Agent Knowledge service's limits; zero fields take
	// DefaultKnowledgeLimits.
	Knowledge KnowledgeLimits
}

// ProfileLimits are the Agent Profile service's limits: the field limits of
// Agent Profile 4.2 (host/proto/profile.Limits, promoted) and the
// service's body, page and quota limits.
type ProfileLimits = profile.Limits

// DiscourseLimits are the Agent Discourse host's quotas and serving
// parameters.
type DiscourseLimits = discourse.Limits

// DelegationLimits are the Agent Delegation service's limits.
type DelegationLimits = delegation.Limits

// DefaultDelegationLimits returns the delegation service's default limits.
func DefaultDelegationLimits() DelegationLimits { return delegation.DefaultLimits() }

// MailLimits are the Agent Mail relay's per-mailbox storage quotas.
type MailLimits = mailrelay.Limits

// DefaultMailLimits returns the relay's default quotas (the SDK relay's).
func DefaultMailLimits() MailLimits { return mailrelay.DefaultLimits() }

// KnowledgeLimits are the Agent Knowledge service's limits.
type KnowledgeLimits = knowledge.Limits

// DefaultKnowledgeLimits returns the knowledge service's default limits.
func DefaultKnowledgeLimits() KnowledgeLimits { return knowledge.DefaultLimits() }

// DefaultProfileLimits returns the profile service's default limits.
func DefaultProfileLimits() ProfileLimits { return profile.DefaultLimits() }

// DefaultDiscourseLimits returns the Discourse host's default limits.
func DefaultDiscourseLimits() DiscourseLimits { return discourse.DefaultLimits() }
