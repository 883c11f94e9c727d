package knowledge

import (
	"errors"
	"time"

	rules "apconnect/host/proto/knowledge"
)

// Limits are the knowledge service's limits. Zero fields take the defaults
// of DefaultLimits.
type Limits struct {
	// FutureSkew is how far an event's created_at may run ahead of the hub
	// clock (the SDK store's 300 s). There is no lower bound: old events are
	// replicated, not replayed.
	FutureSkew time.Duration
	// MaxEnvelopeBytes bounds a submitted envelope's serialization (the
	// SDK's 262,144); it is published in the discovery document.
	MaxEnvelopeBytes int
	// SubmitBodyBytes bounds the POST body of events (an envelope may be
	// written with insignificant white space).
	SubmitBodyBytes int64
	// ReadBodyBytes bounds the POST body of batch and search.
	ReadBodyBytes int64
	// SearchCandidates bounds the candidates one search reads from the
	// index and checks against the match rule; a search with more is
	// answered non-exhaustive (candidate_limit).
	SearchCandidates int
}

// DefaultLimits returns the SDK store's submission limits and the hub's own
// defaults for the rest.
func DefaultLimits() Limits {
	return Limits{
		FutureSkew:       time.Duration(rules.DefaultFutureSkewMS) * time.Millisecond,
		MaxEnvelopeBytes: rules.DefaultMaxEnvelopeBytes,
		SubmitBodyBytes:  1 << 20,
		ReadBodyBytes:    256 << 10,
		SearchCandidates: 1000,
	}
}

// withDefaults fills zero fields from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.FutureSkew == 0 {
		l.FutureSkew = d.FutureSkew
	}
	if l.MaxEnvelopeBytes == 0 {
		l.MaxEnvelopeBytes = d.MaxEnvelopeBytes
	}
	if l.SubmitBodyBytes == 0 {
		l.SubmitBodyBytes = d.SubmitBodyBytes
	}
	if l.ReadBodyBytes == 0 {
		l.ReadBodyBytes = d.ReadBodyBytes
	}
	if l.SearchCandidates == 0 {
		l.SearchCandidates = d.SearchCandidates
	}
	return l
}

// check refuses negative limits.
func (l Limits) check() error {
	if l.FutureSkew < 0 || l.MaxEnvelopeBytes < 0 || l.SubmitBodyBytes < 0 || l.ReadBodyBytes < 0 || l.SearchCandidates < 0 {
		return errors.New("knowledge: limits must not be negative")
	}
	return nil
}

// rulesLimits are the submission limits in the rules package's terms.
func (l Limits) rulesLimits() rules.Limits {
	return rules.Limits{FutureSkewMS: l.FutureSkew.Milliseconds(), MaxEnvelopeBytes: l.MaxEnvelopeBytes}
}
