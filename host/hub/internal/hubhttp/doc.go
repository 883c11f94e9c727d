// Package hubhttp is the HTTP plumbing every service of the local hub shares:
// the Agent Identity 8.1 error shape with stable codes and statuses (the
// shared codes' here, each service's registered with RegisterStatuses),
// strict JSON bodies with size limits, request JWT authentication (Agent
// Identity 7), list responses with opaque cursors (8.2), a rate limiter
// whose rejections carry Retry-After, and the live-write pipeline
// (Pipeline) that runs Agent Identity 6.1 in order — envelope verification,
// exact resubmission, the timestamp window and the per-actor nonce cache —
// before handing the envelope to a protocol's validation and commit.
//
// Every service plugs into the same pieces: one nonce cache per hub covers
// every protocol, because an agent has one nonce sequence. A rules
// package's *identity.Error becomes the error body as it is (code, message,
// data, pointer as data.pointer).
package hubhttp
