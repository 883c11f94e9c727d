// Package delegation is the one statement of the Agent Delegation 1.0
// rules (agent-delegation/1.0) in apconnect, as the reference SDK
// agent-protocols 0.12.6 speaks them. The hub's delegation service and the
// connector's delegation module share it. It does no I/O and reads no
// clock: every time is passed in, in milliseconds.
//
// The SDK is newer than every stored spec text and wins where they differ:
// the authoritative service is named by a delegation_service origin (not a
// delegation_query_url); there is no lineage (supersedes, owner_controller,
// not_owner_controller): a restricted controller manages exactly the
// credentials inside its ceiling; credentials carry no owner_controller or
// updated_at.
//
// # Files
//
//   - errors.go: the eight Agent Delegation codes (ErrorCodes), the shared
//     identity codes it returns, and CodeInvalidDelegation for service views
//     that do not verify. Every rejection is an *identity.Error.
//   - limits.go: the protocol and event types, the id grammar's length,
//     status freshness (MaxStatusAge, StatusClockSkew), principal reads
//     (MaxPrincipalAge, PrincipalFetchTimeout, MaxPrincipalDocumentBytes,
//     MaxPrincipalRedirects) and query limits.
//   - principal.go, principal_json.go: PrincipalDocument, Controller,
//     Authority; ValidatePrincipalDocument, ValidateController,
//     ValidateAudience, the authoritative-read rule
//     (CheckPrincipalResolution), aliases; parsing (ParsePrincipalDocument,
//     PrincipalID for a copy) and JSON.
//   - resolve.go: ResolvePrincipal, the two-read resolution over a
//     PrincipalReader the caller supplies (the package does no I/O).
//   - event.go: grant and revoke payloads, ValidID, ValidateGrantPayload,
//     ValidateEnvelope (the checked Event), and the builders GrantEvent and
//     RevokeEvent.
//   - authority.go: the authority check behind CheckEventAuthority (before
//     signing), CheckAcceptance (a service accepting a submission) and
//     CheckHistorical (an accepted record, retired keys allowed);
//     ControllerCoversCredential and CheckControllerEnumeration.
//   - credential.go, credential_json.go: Credential, Status, Materialize,
//     the status at read time (StatusAt, At), Record, parsing and JSON.
//   - verify.go: VerifyCredential (a relying party) and ValidateUse.
//   - history.go: AuditHistory (an auditor's full replay).
//   - query.go: QueryRequest, ValidateQueryRequest, AuthorizeQuery and
//     QueryAccess (who may see which credential), EffectiveLimit, Matches.
//   - discovery.go: the discovery document, default and discovered
//     endpoints, credential and history URLs.
//
// The controller registration challenge is identity's
// (identity.SignControllerChallenge, identity.VerifyControllerChallenge).
//
// # How a service uses it
//
// POST {delegations}: parse the envelope (identity.ParseEnvelope); an exact
// resubmission of an accepted envelope returns the credential as it stood
// after it; otherwise apply the live identity window and nonce, resolve the
// event's principal_id (ResolvePrincipal, or a cached result no older than
// MaxPrincipalAge), then
// CheckAcceptance with the service clock and the credential stored under
// the delegation id, Materialize, and commit the record and credential
// atomically, in acceptance order. Credentials are keyed by delegation id
// alone: a second principal's grant under an id in use fails with
// credential_identity_mismatch, since the stored credential is its previous.
// Reads return Credential.At(now). Queries: AuthorizeQuery with the request
// JWT's Agent ID, then Matches and Permits over the stored credentials,
// EffectiveLimit per page.
//
// # How a client uses it
//
// Resolve a principal with ResolvePrincipal over a reader bounded in time
// and size (the SDK's DelegationClient follows at most
// MaxPrincipalRedirects HTTPS redirects; apconnect's reader,
// client.FetchPrincipal, follows none, as the SDK's connector, and the
// connector reads only granted [[hosts]] origins). Sign with
// GrantEvent or RevokeEvent after CheckEventAuthority. Verify a credential
// with VerifyCredential against the records of its service, found through
// the principal's delegation_service (ResolveEndpoints), never through a URL
// the presenter supplies.
package delegation
