package profile

import (
	"time"

	"apconnect/host/hub/internal/hubhttp"
	rules "apconnect/host/proto/profile"
)

// Limits are the service limits the profile service enforces and publishes
// in its discovery document: the field limits of section 4.2 (the rules
// package's, whose members are promoted here) and the service's own. Zero
// fields take the defaults of DefaultLimits.
type Limits struct {
	rules.Limits
	// UpdateBodyBytes bounds the POST /v1/profiles request body.
	UpdateBodyBytes int64 `json:"update_body_bytes"`
	// BatchBodyBytes bounds the POST /v1/profiles/batch request body.
	BatchBodyBytes int64 `json:"batch_body_bytes"`
	// BatchIDs is fixed at rules.MaxBatchIDs; it is published, not
	// configurable.
	BatchIDs int `json:"batch_ids"`
	// EventsPageMax caps the limit parameter of the events endpoint.
	EventsPageMax int `json:"events_page_max"`
	// UpdatesPerMinute is each agent's profile.update quota (negative: none).
	UpdatesPerMinute int `json:"updates_per_minute"`
}

// DefaultLimits returns the section 4.2 recommendations and the hub's own
// defaults for the rest.
func DefaultLimits() Limits {
	return Limits{
		Limits:           rules.DefaultLimits(),
		UpdateBodyBytes:  256 << 10,
		BatchBodyBytes:   128 << 10,
		BatchIDs:         rules.MaxBatchIDs,
		EventsPageMax:    100,
		UpdatesPerMinute: 60,
	}
}

// withDefaults fills zero fields from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	l.Limits = l.Limits.WithDefaults()
	if l.EventsPageMax == 0 {
		l.EventsPageMax = d.EventsPageMax
	}
	if l.UpdatesPerMinute == 0 {
		l.UpdatesPerMinute = d.UpdatesPerMinute
	}
	if l.UpdateBodyBytes == 0 {
		l.UpdateBodyBytes = d.UpdateBodyBytes
	}
	if l.BatchBodyBytes == 0 {
		l.BatchBodyBytes = d.BatchBodyBytes
	}
	l.BatchIDs = rules.MaxBatchIDs
	return l
}

// updateRate is the profile.update quota as a hubhttp.Rate.
func (l Limits) updateRate() hubhttp.Rate {
	if l.UpdatesPerMinute < 0 {
		return hubhttp.Rate{}
	}
	return hubhttp.Rate{Limit: l.UpdatesPerMinute, Per: time.Minute}
}
