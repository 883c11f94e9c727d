package discourse

import (
	"time"

	"apconnect/host/proto/adp"
)

// Limits are the ADP host's quotas and serving parameters. Zero fields take
// the defaults of DefaultLimits. In Rules a negative value switches a quota
// off (adp's zero "no limit"); the benchmark raises the message quota that
// way.
type Limits struct {
	// Rules are the quotas of ADP section 20 that host/proto/adp enforces or
	// reports (rates, payload and schema sizes, type count, join request
	// lifetime, room duration, speakers, observers).
	Rules adp.Limits
	// EventsPageDefault and EventsPageMax are the default and the cap of
	// limit on GET /v1/rooms/{id}/events (100 and 1000, ADP 15).
	EventsPageDefault int
	EventsPageMax     int // see EventsPageDefault
	// ListPageDefault and ListPageMax bound the other lists: public rooms,
	// /v1/me/rooms, join requests and agent status (20 and 100).
	ListPageDefault int
	ListPageMax     int // see ListPageDefault
	// StatusTTL is the maximum lifetime of a transient agent status, and
	// the one assigned when the body omits expires_at (300 s, ADP 16.4).
	StatusTTL time.Duration
	// StatusWritesPerMinute is each agent's agent-status PUT quota per room
	// (60; negative: none).
	StatusWritesPerMinute int
	// HeartbeatInterval is the idle time after which a live stream gets an
	// SSE comment heartbeat (15 s).
	HeartbeatInterval time.Duration
	// MaxStreamLifetime ends a live stream after this long; the client
	// reconnects with a fresh request JWT (1 h, ADP 16.1).
	MaxStreamLifetime time.Duration
	// SubscriberBuffer is how many items a live stream may fall behind
	// before it is disconnected as too slow (256). Writers never wait.
	SubscriberBuffer int
	// SnapshotEvery bounds how many head-bound records may follow a room's
	// stored snapshot before a new one is written (64). Every other record
	// changes room state and is snapshotted at once.
	SnapshotEvery int
	// MaintenanceInterval is the period of the housekeeping loop: streams of
	// rooms that ended, final archives, expired agent statuses (1 s).
	MaintenanceInterval time.Duration
	// BodyBytes bounds the body of a room write (512 KiB; the payload
	// limits of Rules apply inside it).
	BodyBytes int64
}

// DefaultLimits returns the recommended defaults of ADP section 20 and the
// hub's own serving defaults.
func DefaultLimits() Limits {
	return Limits{
		Rules:                 adp.DefaultLimits(),
		EventsPageDefault:     100,
		EventsPageMax:         1000,
		ListPageDefault:       20,
		ListPageMax:           100,
		StatusTTL:             300 * time.Second,
		StatusWritesPerMinute: 60,
		HeartbeatInterval:     15 * time.Second,
		MaxStreamLifetime:     time.Hour,
		SubscriberBuffer:      256,
		SnapshotEvery:         64,
		MaintenanceInterval:   time.Second,
		BodyBytes:             512 << 10,
	}
}

// withDefaults fills zero fields from DefaultLimits and turns negative
// Rules fields into adp's "no limit".
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	l.Rules = rulesWithDefaults(l.Rules, d.Rules)
	setInt := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	setDur := func(v *time.Duration, def time.Duration) {
		if *v <= 0 {
			*v = def
		}
	}
	setInt(&l.EventsPageDefault, d.EventsPageDefault)
	setInt(&l.EventsPageMax, d.EventsPageMax)
	setInt(&l.ListPageDefault, d.ListPageDefault)
	setInt(&l.ListPageMax, d.ListPageMax)
	setInt(&l.StatusWritesPerMinute, d.StatusWritesPerMinute)
	setInt(&l.SubscriberBuffer, d.SubscriberBuffer)
	setInt(&l.SnapshotEvery, d.SnapshotEvery)
	setDur(&l.StatusTTL, d.StatusTTL)
	setDur(&l.HeartbeatInterval, d.HeartbeatInterval)
	setDur(&l.MaxStreamLifetime, d.MaxStreamLifetime)
	setDur(&l.MaintenanceInterval, d.MaintenanceInterval)
	if l.BodyBytes <= 0 {
		l.BodyBytes = d.BodyBytes
	}
	l.EventsPageDefault = min(l.EventsPageDefault, l.EventsPageMax)
	l.ListPageDefault = min(l.ListPageDefault, l.ListPageMax)
	return l
}

// rulesWithDefaults applies the zero-is-default, negative-is-off convention
// to the adp limits.
func rulesWithDefaults(l, d adp.Limits) adp.Limits {
	i := func(v *int, def int) {
		switch {
		case *v == 0:
			*v = def
		case *v < 0:
			*v = 0
		}
	}
	dur := func(v *time.Duration, def time.Duration) {
		switch {
		case *v == 0:
			*v = def
		case *v < 0:
			*v = 0
		}
	}
	i(&l.MessageRate, d.MessageRate)
	i(&l.SignalRate, d.SignalRate)
	i(&l.ControlRate, d.ControlRate)
	i(&l.MaxRateHint, d.MaxRateHint)
	i(&l.MaxPayload, d.MaxPayload)
	i(&l.MaxPayloadCeiling, d.MaxPayloadCeiling)
	i(&l.MaxSchemaSize, d.MaxSchemaSize)
	i(&l.MaxTypes, d.MaxTypes)
	i(&l.MaxPackSize, d.MaxPackSize)
	i(&l.MaxSpeakers, d.MaxSpeakers)
	i(&l.MaxObservers, d.MaxObservers)
	dur(&l.JoinRequestLifetime, d.JoinRequestLifetime)
	dur(&l.MinRoomDuration, d.MinRoomDuration)
	dur(&l.MaxRoomDuration, d.MaxRoomDuration)
	return l
}

// Published is the quota policy the discovery document publishes (ADP 20:
// hosts SHOULD publish it). Zero means no limit.
type Published struct {
	MessagesPerMinute     int   `json:"message_events_per_minute"`      // message-kind events per agent per room
	SignalsPerMinute      int   `json:"signal_events_per_minute"`       // signal-kind and membership events
	ControlPerMinute      int   `json:"control_events_per_minute"`      // control-kind and contract events, room.create
	RateHintCeiling       int   `json:"rate_hint_ceiling"`              // the most a type's rate_hint may allow
	PayloadBytes          int   `json:"payload_bytes"`                  // JCS size of a payload
	PayloadCeilingBytes   int   `json:"payload_ceiling_bytes"`          // what max_payload_hint may raise it to
	Mentions              int   `json:"mentions"`                       // entries of an event's mentions
	TypeSchemaBytes       int   `json:"type_schema_bytes"`              // JCS size of one type schema
	TypesPerRoom          int   `json:"types_per_room"`                 // a room's registry
	ExternalPackBytes     int   `json:"external_pack_bytes"`            // an external pack document
	JoinRequestLifetimeMS int64 `json:"join_request_lifetime_ms"`       // before a pending request expires
	MinRoomDurationMS     int64 `json:"min_room_duration_ms"`           // end_time - start_time, at least
	MaxRoomDurationMS     int64 `json:"max_room_duration_ms"`           // end_time - start_time, at most
	SpeakersPerRoom       int   `json:"speakers_per_room"`              // members with a speaking role
	ObserversPerRoom      int   `json:"observers_per_room"`             // active observers
	AgentStatusTTLMS      int64 `json:"agent_status_ttl_ms"`            // maximum agent status lifetime
	StatusWritesPerMinute int   `json:"agent_status_writes_per_minute"` // agent-status PUTs per agent per room
	EventsPageMax         int   `json:"events_page_max"`                // limit cap of GET .../events
	HeartbeatMS           int64 `json:"sse_heartbeat_ms"`               // idle time before a heartbeat comment
	MaxStreamLifetimeMS   int64 `json:"sse_max_stream_lifetime_ms"`     // a live stream ends after this
	// RateScope says what a per-minute quota counts: each agent's events in
	// each room (room.create counts per agent across the hub).
	RateScope string `json:"rate_scope"`
}

// published returns the limits in their published form.
func (l Limits) published() Published {
	r := l.Rules
	return Published{
		MessagesPerMinute: r.MessageRate, SignalsPerMinute: r.SignalRate, ControlPerMinute: r.ControlRate,
		RateHintCeiling: r.MaxRateHint,
		PayloadBytes:    r.MaxPayload, PayloadCeilingBytes: r.MaxPayloadCeiling, Mentions: 32,
		TypeSchemaBytes: r.MaxSchemaSize, TypesPerRoom: r.MaxTypes, ExternalPackBytes: r.MaxPackSize,
		JoinRequestLifetimeMS: r.JoinRequestLifetime.Milliseconds(),
		MinRoomDurationMS:     r.MinRoomDuration.Milliseconds(), MaxRoomDurationMS: r.MaxRoomDuration.Milliseconds(),
		SpeakersPerRoom: r.MaxSpeakers, ObserversPerRoom: r.MaxObservers,
		AgentStatusTTLMS: l.StatusTTL.Milliseconds(), StatusWritesPerMinute: max(l.StatusWritesPerMinute, 0),
		EventsPageMax: l.EventsPageMax, HeartbeatMS: l.HeartbeatInterval.Milliseconds(),
		MaxStreamLifetimeMS: l.MaxStreamLifetime.Milliseconds(),
		RateScope:           "per agent per room; room.create per agent",
	}
}
