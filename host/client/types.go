package client

import (
	"apconnect/host/identity"
	"apconnect/host/proto/adp"
)

// RoomResource is the room resource (ADP 15, GET /v1/rooms/{room_id}), also
// the item of public room lists. It is host data, not verified: the signed
// records are the truth. Raw holds the whole object as strictly parsed,
// unknown members included.
type RoomResource struct {
	ID         string         `json:"id"`                   // room id
	URL        string         `json:"url,omitempty"`        // canonical room URL
	Status     adp.RoomStatus `json:"status,omitempty"`     // room state at read time
	Creator    string         `json:"creator,omitempty"`    // creator Agent ID
	CreatedAt  int64          `json:"created_at,omitempty"` // room.create created_at
	Host       string         `json:"host,omitempty"`       // host origin named by room.create
	Topic      string         `json:"topic,omitempty"`      // current topic
	Agenda     string         `json:"agenda,omitempty"`     // current agenda
	Guidance   string         `json:"guidance,omitempty"`   // untrusted guidance text
	Visibility adp.Visibility `json:"visibility,omitempty"` // public, restricted or private
	StartTime  int64          `json:"start_time,omitempty"` // effective start, Unix ms
	EndTime    int64          `json:"end_time,omitempty"`   // effective end, Unix ms
	Tags       []string       `json:"tags,omitempty"`       // discovery tags
	Language   string         `json:"language,omitempty"`   // primary language
	// Policy is the policy object as sent (invites, open_roles, …).
	Policy map[string]any `json:"policy,omitempty"`
	// Extra is the room's opaque extra object.
	Extra map[string]any `json:"extra,omitempty"`
	// Types is the materialized type registry as sent (type definitions).
	Types []map[string]any `json:"types,omitempty"`
	// Seq, PreHash, Hash and AcceptedAt are the latest record's fields;
	// PreHash is "" for null (seq 1).
	Seq        int64  `json:"seq,omitempty"`         // latest seq
	PreHash    string `json:"pre_hash,omitempty"`    // its pre_hash
	Hash       string `json:"hash,omitempty"`        // its record hash
	AcceptedAt int64  `json:"accepted_at,omitempty"` // its accepted_at
	// Head is the current room head (ADP 5.1). A host that sends no head
	// (allowed by SDK 0.12.6 for older hosts) gets seq and hash, as the
	// SDK reads it.
	Head adp.Link `json:"head"`
	// Raw is the whole resource as strictly parsed.
	Raw map[string]any `json:"-"`
}

// MyRoom is one item of GET {my_rooms}: the room resource (D-05; older
// apconnect hubs sent a summary of its identity, contract and head fields)
// with the authenticated agent's relation to the room. Raw (in
// RoomResource) holds the whole item.
type MyRoom struct {
	RoomResource
	// IsCreator is true when the agent created the room.
	IsCreator bool `json:"is_creator,omitempty"`
	// Role is the agent's current role while an active member (or its
	// invited role while invited); "" when none.
	Role adp.Role `json:"role,omitempty"`
	// Membership is the agent's membership state as the host reports it:
	// "active", "invited", "pending", "left", "removed", "banned", or a
	// rejected or expired request's status on the local hub.
	Membership string `json:"membership,omitempty"`
	// Perspective is the agent's declared perspective, when a member.
	Perspective string `json:"perspective,omitempty"`
	// JoinRequest is the agent's latest join request in the room, if any.
	JoinRequest *MyJoinRequest `json:"join_request,omitempty"`
}

// MyJoinRequest is the agent's latest join request as a room summary
// shows it.
type MyJoinRequest struct {
	ID        string                `json:"id"`                   // the request's event ID
	Status    adp.JoinRequestStatus `json:"status"`               // pending, approved, rejected, expired
	Role      adp.Role              `json:"role,omitempty"`       // the requested role
	ExpiresAt int64                 `json:"expires_at,omitempty"` // Unix ms
}

// CreateRoomResult is the response to a room.create (ADP 8): the room id and
// the genesis record's acceptance fields. Record rebuilds the record.
type CreateRoomResult struct {
	ID         string         `json:"id"`                 // the new room's id
	Status     adp.RoomStatus `json:"status,omitempty"`   // room state
	URL        string         `json:"url,omitempty"`      // canonical room URL
	Seq        int64          `json:"seq"`                // 1
	PreHash    string         `json:"pre_hash,omitempty"` // "" (null)
	Hash       string         `json:"hash"`               // record hash
	AcceptedAt int64          `json:"accepted_at"`        // host acceptance time
	// MaxSeenNonce is the Max-Seen-Nonce response header ("" if absent).
	MaxSeenNonce string `json:"-"`
	// Raw is the whole response as strictly parsed.
	Raw map[string]any `json:"-"`
}

// SubmitResult is the response to a room write: the accepted server record
// (shape and record hash checked, envelope not verified) and the
// Max-Seen-Nonce header.
type SubmitResult struct {
	// Record is the accepted server record of the submitted envelope.
	Record *adp.Record
	// MaxSeenNonce is the Max-Seen-Nonce response header ("" if absent).
	MaxSeenNonce string
}

// JoinRequest is the join request resource (ADP 10). Request is the
// applicant's signed room.join.request, shape-checked but not verified.
type JoinRequest struct {
	ID            string                `json:"id"`                        // the request's event ID
	Request       *identity.Envelope    `json:"request"`                   // signed room.join.request
	Status        adp.JoinRequestStatus `json:"status"`                    // pending, approved, rejected, expired
	ExpiresAt     int64                 `json:"expires_at"`                // Unix ms
	ReviewedBy    string                `json:"reviewed_by,omitempty"`     // reviewer Agent ID, "" for null
	ReviewedAt    int64                 `json:"reviewed_at,omitempty"`     // review time, 0 for null
	ReviewEventID string                `json:"review_event_id,omitempty"` // review record's event ID, "" for null
	// Raw is the whole resource as strictly parsed.
	Raw map[string]any `json:"-"`
}

// JoinRequestResult is the response to a submitted join request.
type JoinRequestResult struct {
	// JoinRequest is the join request resource the host holds.
	JoinRequest *JoinRequest
	// MaxSeenNonce is the Max-Seen-Nonce response header ("" if absent).
	MaxSeenNonce string
}

// JoinRequestQuery selects join requests to list.
type JoinRequestQuery struct {
	Status string // "pending", "approved", … ; "" for the host default
	Limit  int    // page size; 0 for the host default
	Cursor string // next_cursor of the previous page
}

// EventsQuery selects a page of room history.
type EventsQuery struct {
	AfterSeq int64  // records with seq > AfterSeq
	Limit    int    // page size; 0 for the host default (100)
	Cursor   string // next_cursor of the previous page
}

// PublicRoomQuery holds the public room discovery filters (ADP 17); zero
// fields are not sent.
type PublicRoomQuery struct {
	Status      string // room state: scheduled, active, …
	Tag         string // one discovery tag
	Keyword     string // free-text search
	Creator     string // creator Agent ID
	StartsAfter int64  // Unix ms
	EndsBefore  int64  // Unix ms
	Language    string // primary language
	Limit       int    // page size; 0 for the host default
	Cursor      string // next_cursor of the previous page
}

// MyRoomsQuery holds the GET /v1/me/rooms filters; zero fields are not sent.
type MyRoomsQuery struct {
	Status     string // room state filter
	Membership string // all, member, creator, moderator, pending, … (host-defined)
	Limit      int    // page size; 0 for the host default
	Cursor     string // next_cursor of the previous page
}

// AgentStatus is a transient agent status (ADP 16.4): untrusted,
// short-lived, never a permission input. The same type carries the
// room.agent_status SSE item, which may lack UpdatedAt.
type AgentStatus struct {
	RoomID    string         `json:"room_id"`              // room
	AgentID   string         `json:"agent_id"`             // whose status
	State     string         `json:"state"`                // idle, reading, drafting, working, waiting, away, …
	Summary   string         `json:"summary,omitempty"`    // free text (untrusted)
	SeenSeq   int64          `json:"seen_seq,omitempty"`   // latest seq seen, 0 when absent
	SeenHash  string         `json:"seen_hash,omitempty"`  // its record hash
	ClaimID   string         `json:"claim_id,omitempty"`   // claimed work item
	Activity  string         `json:"activity,omitempty"`   // free text
	ExpiresAt int64          `json:"expires_at,omitempty"` // Unix ms
	UpdatedAt int64          `json:"updated_at,omitempty"` // Unix ms
	Extra     map[string]any `json:"extra,omitempty"`      // opaque
	// Raw is the whole object as strictly parsed.
	Raw map[string]any `json:"-"`
}

// AgentStatusInput is the body of PUT /v1/rooms/{room_id}/agent-status
// (the schema's agentStatusInput). Zero optional fields are omitted;
// ExpiresAt 0 lets the host assign its maximum TTL.
type AgentStatusInput struct {
	State     string         `json:"state"`                // required: idle, reading, drafting, …
	Summary   string         `json:"summary,omitempty"`    // free text
	SeenSeq   int64          `json:"seen_seq,omitempty"`   // latest seq seen
	SeenHash  string         `json:"seen_hash,omitempty"`  // its record hash
	ClaimID   string         `json:"claim_id,omitempty"`   // claimed work item
	Activity  string         `json:"activity,omitempty"`   // free text
	ExpiresAt int64          `json:"expires_at,omitempty"` // Unix ms; capped by the host
	Extra     map[string]any `json:"extra,omitempty"`      // opaque
}

// JoinRequestNotice is a room.join_request SSE item (ADP 16.5): a hint that
// a join request awaits review. The authoritative list is JoinRequests.
type JoinRequestNotice struct {
	RoomID    string   `json:"room_id"`              // the room
	RequestID string   `json:"request_id"`           // the request's event ID
	Applicant string   `json:"applicant"`            // the applicant's Agent ID
	Role      adp.Role `json:"role,omitempty"`       // the requested role
	ExpiresAt int64    `json:"expires_at,omitempty"` // Unix ms
	// Raw is the whole item as strictly parsed.
	Raw map[string]any `json:"-"`
}

// Archive is a room's archive as DownloadArchive read it (ADP 18): the
// manifest, every record in seq order and every external pack document the
// room imported — everything adp.VerifyArchive needs offline.
type Archive struct {
	// Manifest is the archive manifest (validated against the kernel
	// schema); nil when ArchiveRecords read a current-layout record log
	// on its own.
	Manifest *adp.ArchiveManifest
	// Records are the archived records in seq order (shape and record hash
	// checked only).
	Records []*adp.Record
	// Packs maps external pack URLs (the imports) to their documents'
	// exact bytes (VerifyArchive's packDocs; digests checked there).
	Packs map[string][]byte
	// Layout is adp.ArchiveLayoutCurrent or adp.ArchiveLayoutSelfContained.
	Layout string
}
