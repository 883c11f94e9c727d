package knowledge

import "slices"

// Protocol is the protocol identifier every Knowledge event carries.
const Protocol = "agent-knowledge/1.0"

// The three event types.
const (
	TypePublish = "knowledge.publish"
	TypeAssess  = "knowledge.assess"
	TypeRetract = "knowledge.retract"
)

// Contribution kinds of knowledge.publish.
const (
	KindQuestion       = "question"
	KindHypothesis     = "hypothesis"
	KindDefinition     = "definition"
	KindObservation    = "observation"
	KindInference      = "inference"
	KindProcedure      = "procedure"
	KindResource       = "resource"
	KindNegativeResult = "negative_result"
	KindSynthesis      = "synthesis"
	KindCollection     = "collection"
)

// Relation kinds of a publication's relations.
const (
	RelationDerivedFrom = "derived_from"
	RelationAddresses   = "addresses"
	RelationTests       = "tests"
	RelationExtends     = "extends"
	RelationSupports    = "supports"
	RelationContradicts = "contradicts"
	RelationSupersedes  = "supersedes"
	RelationContains    = "contains"
)

// Verdicts of knowledge.assess.
const (
	VerdictSupports      = "supports"
	VerdictChallenges    = "challenges"
	VerdictReproduced    = "reproduced"
	VerdictNotReproduced = "not_reproduced"
	VerdictApplied       = "applied"
	VerdictInconclusive  = "inconclusive"
)

// Search modes. Lexical is the one every ranked-search service offers.
const (
	ModeLexical  = "lexical"
	ModeSemantic = "semantic"
	ModeHybrid   = "hybrid"
)

// FeatureRankedSearch is the discovery feature that advertises the search
// endpoint and search_modes.
const FeatureRankedSearch = "ranked-search"

// Discovery endpoint keys, and the path every endpoint defaults to
// (DefaultEndpointPrefix + key) when discovery names none.
const (
	EndpointEvents        = "events"
	EndpointQuery         = "query"
	EndpointBatch         = "batch"
	EndpointSearch        = "search"
	DefaultEndpointPrefix = "/v1/knowledge/"
	// WellKnownPath is where a service serves its discovery document.
	WellKnownPath = "/.well-known/agent-knowledge"
)

// Limits, read off the SDK (schema, store, client and connector tools).
const (
	// DefaultFutureSkewMS is how far created_at may run ahead of the
	// receiving clock. There is no lower bound: Knowledge events are
	// portable, and no nonce cache applies.
	DefaultFutureSkewMS = 300_000
	// DefaultMaxEnvelopeBytes bounds a submitted envelope (EnvelopeSize).
	DefaultMaxEnvelopeBytes = 262_144

	DefaultQueryLimit  = 100
	MaxQueryLimit      = 1000
	DefaultSearchLimit = 20
	MaxSearchLimit     = 100
	MaxBatchHashes     = 100
	// MaxTextScalars bounds search text, in Unicode scalar values.
	MaxTextScalars = 1024
	// MaxLexicalTerms bounds the terms of a lexical search.
	MaxLexicalTerms = 16
	MaxPeers        = 32
	// MaxIntegerDigits bounds an integer in an HTTP parameter or a cursor
	// (leading zeros aside for parameters).
	MaxIntegerDigits = 16

	// MaxPayloadErrors is the most {path, message} errors ValidatePayload
	// lists.
	MaxPayloadErrors = 16
	// MaxSubmitServices is the most services one knowledge_submit sends to.
	MaxSubmitServices = 8
	// StatusMaxPages and StatusPageLimit bound the connector's
	// knowledge_status scan of target={id}.
	StatusMaxPages  = 10
	StatusPageLimit = 1000

	// maxSafe is 2^53-1, the bound of every integer on the wire.
	maxSafe = 1<<53 - 1
)

var (
	eventTypes     = []string{TypePublish, TypeAssess, TypeRetract}
	kinds          = []string{KindQuestion, KindHypothesis, KindDefinition, KindObservation, KindInference, KindProcedure, KindResource, KindNegativeResult, KindSynthesis, KindCollection}
	relations      = []string{RelationDerivedFrom, RelationAddresses, RelationTests, RelationExtends, RelationSupports, RelationContradicts, RelationSupersedes, RelationContains}
	verdicts       = []string{VerdictSupports, VerdictChallenges, VerdictReproduced, VerdictNotReproduced, VerdictApplied, VerdictInconclusive}
	searchModes    = []string{ModeLexical, ModeSemantic, ModeHybrid}
	evidenceRoles  = []string{"source", "input", "output", "environment", "validation"}
	coverageReason = []string{"candidate_limit", "index_lag", "approximate", "timeout"}
)

// EventTypes returns the three event types, in the schema's order.
func EventTypes() []string { return slices.Clone(eventTypes) }

// Kinds returns the contribution kinds, in the schema's order.
func Kinds() []string { return slices.Clone(kinds) }

// Relations returns the relation kinds, in the schema's order.
func Relations() []string { return slices.Clone(relations) }

// Verdicts returns the assessment verdicts, in the schema's order.
func Verdicts() []string { return slices.Clone(verdicts) }

// SearchModes returns the three search modes.
func SearchModes() []string { return slices.Clone(searchModes) }

// EvidenceRoles returns the evidence roles, in the schema's order.
func EvidenceRoles() []string { return slices.Clone(evidenceRoles) }

// CoverageReasons returns the reasons a search page may be incomplete.
func CoverageReasons() []string { return slices.Clone(coverageReason) }

// IsEventType reports whether t is one of the three event types.
func IsEventType(t string) bool { return slices.Contains(eventTypes, t) }
