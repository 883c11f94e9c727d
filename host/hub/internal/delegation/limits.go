package delegation

import (
	"time"

	"apconnect/host/hub/internal/hubhttp"
)

// Limits are the service's own limits; zero fields take DefaultLimits'.
// Query page sizes are the protocol's (rules.DefaultQueryLimit, capped at
// rules.MaxQueryLimit).
type Limits struct {
	// SubmitBodyBytes bounds the POST /v1/delegations request body.
	SubmitBodyBytes int64
	// QueryBodyBytes bounds the POST /v1/delegations/query request body.
	QueryBodyBytes int64
	// EventsPage is the page size of a credential's records, and
	// EventsPageMax caps its limit parameter.
	EventsPage    int
	EventsPageMax int
	// WritesPerMinute is each controller's quota of grants and revocations
	// (negative: none).
	WritesPerMinute int
}

// DefaultLimits returns the hub's defaults.
func DefaultLimits() Limits {
	return Limits{SubmitBodyBytes: 64 << 10, QueryBodyBytes: 16 << 10, EventsPage: 100, EventsPageMax: 1000, WritesPerMinute: 60}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.SubmitBodyBytes <= 0 {
		l.SubmitBodyBytes = d.SubmitBodyBytes
	}
	if l.QueryBodyBytes <= 0 {
		l.QueryBodyBytes = d.QueryBodyBytes
	}
	if l.EventsPage <= 0 {
		l.EventsPage = d.EventsPage
	}
	if l.EventsPageMax <= 0 {
		l.EventsPageMax = d.EventsPageMax
	}
	if l.WritesPerMinute == 0 {
		l.WritesPerMinute = d.WritesPerMinute
	}
	return l
}

// writeRate is the write quota as a hubhttp.Rate.
func (l Limits) writeRate() hubhttp.Rate {
	if l.WritesPerMinute < 0 {
		return hubhttp.Rate{}
	}
	return hubhttp.Rate{Limit: l.WritesPerMinute, Per: time.Minute}
}
