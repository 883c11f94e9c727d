// Package delegation is the local hub's Agent Delegation 1.0 service and
// its principal hosting, on the hub's origin.
//
// The service (section 9, as the reference SDK 0.12.6's DelegationClient
// speaks to it): the discovery document at /.well-known/agent-delegation
// with both endpoints on the hub's origin; POST /v1/delegations, where a
// signed delegation.grant or delegation.revoke goes through the hub's
// live-write pipeline (strict checks, exact resubmission answered with the
// credential as it stood after the envelope, the live window and the shared
// nonce cache), its principal is resolved afresh (a read no older than
// delegation.MaxPrincipalAge: the hub reads on every submission), accepted
// against the credential stored under its delegation id
// (delegation.CheckAcceptance) and committed with its record in one
// transaction, in acceptance order; GET /v1/delegations/{id}, the
// credential with a fresh checked_at and its status at read time (expiry
// never hides a revocation); GET /v1/delegations/{id}/events, its accepted
// records in acceptance order; POST /v1/delegations/query, a public
// existence check naming subject and principal_id, or an enumeration with a
// request JWT by the subject or by a current delegating controller of the
// principal, filtered to that controller's ceiling.
//
// Credentials are keyed by delegation id alone: one namespace per service.
// A grant of a second principal under an id in use is refused with
// credential_identity_mismatch (the stored credential is its previous).
//
// Principal hosting: GET /principals/{name} serves the documents the
// operator keeps in hub.db (apconnect hub principal put|list|retire, which
// write beside a running hub): the hub sets id to that URL, protocol,
// delegation_service to its own origin and updated_at. An alias a document
// lists under /principals/ on the hub's origin serves a copy of it (a
// client reads the canonical id). The hub is the authority of these
// documents, so it reads them from its database, not over HTTP, but through
// the same resolution rule (delegation.ResolvePrincipal). It is the
// delegation service of the principals it hosts only: an event naming any
// other principal is principal_unresolvable (the hub fetches nothing).
//
// Every rule comes from host/proto/delegation (imported as rules); this
// package adds storage (its migration group, "delegation"), quotas, body
// and page limits, and the endpoints. Spec registers it with the hub.
package delegation
