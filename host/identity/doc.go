// Package identity implements Agent Identity 1.0: strict I-JSON parsing, JCS
// (RFC 8785), SHA3-256, canonical base64url, did:agent: identifiers, strict
// Ed25519 verification (section 3.1), signed event envelopes, request JWTs and
// the nonce rules.
//
// Everything else in apconnect trusts this package, so it is strict by
// construction: every decoder rejects the non-canonical inputs the spec names,
// and every error says what was wrong and where (a JSON pointer when the input
// is JSON).
package identity
