package profile

// Protocol is the Agent Profile protocol id events carry.
const Protocol = "agent-profile/1.0"

// TypeUpdate is the protocol's one event type: a signed replacement of the
// actor's whole profile.
const TypeUpdate = "profile.update"

// Default paths of a profile service (section 7). Clients read the real
// endpoints from the discovery document and fall back to these.
const (
	PathDiscovery = "/.well-known/agent-profile"
	PathProfiles  = "/v1/profiles"
	PathBatch     = "/v1/profiles/batch"
)

// Names of the endpoints in the discovery document's "endpoints" object.
const (
	EndpointProfiles = "profiles"
	EndpointBatch    = "profile_batch"
)

// MaxBatchIDs is the most Agent IDs one batch read may ask for (section
// 7.3: more is invalid_request).
const MaxBatchIDs = 1000
