package delegation

import "time"

// Protocol identifier and event types (Agent Delegation 7).
const (
	Protocol   = "agent-delegation/1.0"
	TypeGrant  = "delegation.grant"
	TypeRevoke = "delegation.revoke"
)

// Limits and defaults, read off the reference SDK 0.12.6.
const (
	// MaxIDLength is the longest delegation id: [A-Za-z0-9._~-]{1,128},
	// never "." or "..".
	MaxIDLength = 128

	// MaxStatusAge is how old (now - checked_at, in ms) a credential's
	// status may be for a relying party to use it (MAX_STATUS_AGE_MS).
	MaxStatusAge int64 = 300_000
	// StatusClockSkew is how far (ms) a credential's checked_at may lie
	// ahead of the verifier's clock (STATUS_CLOCK_SKEW_MS).
	StatusClockSkew int64 = 60_000

	// MaxPrincipalAge is the oldest (ms) a principal document a service
	// uses to accept a new event may be (Agent Delegation 3).
	MaxPrincipalAge int64 = 300_000
	// PrincipalFetchTimeout bounds one principal document read.
	PrincipalFetchTimeout = 30 * time.Second
	// MaxPrincipalDocumentBytes bounds a principal document's body.
	MaxPrincipalDocumentBytes = 1 << 20
	// MaxPrincipalRedirects is how many redirects a principal read follows,
	// each over HTTPS.
	MaxPrincipalRedirects = 5

	// DefaultQueryLimit is a query's page size when it names none;
	// MaxQueryLimit is the cap a service applies (Agent Delegation 9.5).
	DefaultQueryLimit = 20
	MaxQueryLimit     = 100
)

// maxSafeInteger is 2^53-1, the largest timestamp.
const maxSafeInteger = 1<<53 - 1
