package profile

import (
	"time"

	"apconnect/host/hub/internal/hubhttp"
)

// MaxBatchIDs is the most Agent IDs one batch read may ask for (section 7.3:
// more is invalid_request).
const MaxBatchIDs = 1000

// Limits are the service limits the profile service enforces and publishes
// in its discovery document. Zero fields take the defaults of
// DefaultLimits; the field limits are section 4.2's recommended values.
type Limits struct {
	// NameChars and DescriptionChars count Unicode scalar values.
	NameChars        int `json:"name_chars"`
	DescriptionChars int `json:"description_chars"`
	Capabilities     int `json:"capabilities"`
	ServiceEndpoints int `json:"service_endpoints"`
	Links            int `json:"links"`
	Delegations      int `json:"delegations"`
	// ExtraBytes bounds the canonical (JCS) serialization of extra.
	ExtraBytes int `json:"extra_bytes"`
	// UpdateBodyBytes bounds the POST /v1/profiles request body.
	UpdateBodyBytes int64 `json:"update_body_bytes"`
	// BatchBodyBytes bounds the POST /v1/profiles/batch request body.
	BatchBodyBytes int64 `json:"batch_body_bytes"`
	// BatchIDs is fixed at MaxBatchIDs; it is published, not configurable.
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
		NameChars:        128,
		DescriptionChars: 2048,
		Capabilities:     64,
		ServiceEndpoints: 32,
		Links:            64,
		Delegations:      32,
		ExtraBytes:       32 << 10,
		UpdateBodyBytes:  256 << 10,
		BatchBodyBytes:   128 << 10,
		BatchIDs:         MaxBatchIDs,
		EventsPageMax:    100,
		UpdatesPerMinute: 60,
	}
}

// withDefaults fills zero fields from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	set := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	set(&l.NameChars, d.NameChars)
	set(&l.DescriptionChars, d.DescriptionChars)
	set(&l.Capabilities, d.Capabilities)
	set(&l.ServiceEndpoints, d.ServiceEndpoints)
	set(&l.Links, d.Links)
	set(&l.Delegations, d.Delegations)
	set(&l.ExtraBytes, d.ExtraBytes)
	set(&l.EventsPageMax, d.EventsPageMax)
	set(&l.UpdatesPerMinute, d.UpdatesPerMinute)
	if l.UpdateBodyBytes == 0 {
		l.UpdateBodyBytes = d.UpdateBodyBytes
	}
	if l.BatchBodyBytes == 0 {
		l.BatchBodyBytes = d.BatchBodyBytes
	}
	l.BatchIDs = MaxBatchIDs
	return l
}

// updateRate is the profile.update quota as a hubhttp.Rate.
func (l Limits) updateRate() hubhttp.Rate {
	if l.UpdatesPerMinute < 0 {
		return hubhttp.Rate{}
	}
	return hubhttp.Rate{Limit: l.UpdatesPerMinute, Per: time.Minute}
}
