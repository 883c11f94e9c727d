package discourse

import (
	"encoding/json"

	"apconnect/host/room"
)

// The shapes of connector spec 4.2, shared with host/room.
type (
	// TimelineItem is a simplified view of one accepted record.
	TimelineItem = room.TimelineItem
	// InboxItem is an actionable request for the agent's attention.
	InboxItem = room.InboxItem
	// ActiveTurn is the room's latest turn.update.
	ActiveTurn = room.ActiveTurn
	// RoomMemberView is a member materialized from verified records.
	RoomMemberView = room.MemberView
	// MemberProfile is best-effort profile metadata of a member.
	MemberProfile = room.MemberProfile
)

// SyncState is what a result represents of a room (connector spec 4.2):
// the verified head, the latest verified record, what the host advertised,
// the live flag and the local counters. PresentedSeq and PresentedHash are
// the head most recently presented to this session — the default base of its
// next write — and Verification reports a room marked as failing
// verification.
type SyncState struct {
	Host              string `json:"host"`
	RoomID            string `json:"room_id"`
	HeadSeq           int64  `json:"head_seq"`
	HeadHash          string `json:"head_hash"`
	SyncedSeq         int64  `json:"synced_seq"`
	RemoteSeq         int64  `json:"remote_seq"`
	Subscribed        bool   `json:"subscribed"`
	UnreadCount       int64  `json:"unread_count"`
	PendingInboxCount int64  `json:"pending_inbox_count"`
	// ReadSeq is the read cursor.
	ReadSeq       int64         `json:"read_seq"`
	PresentedSeq  int64         `json:"presented_seq,omitempty"`
	PresentedHash string        `json:"presented_hash,omitempty"`
	Verification  *Verification `json:"verification,omitempty"`
	// CatchingUp is set while a sync that stopped at its per-call bound
	// goes on in the background.
	CatchingUp bool `json:"catching_up,omitempty"`
	// Refused lists the Discourse capabilities the operator has not granted
	// on the room's host (config.toml [[hosts]] grants): what the connector
	// refuses there, and does not do in the background either.
	Refused []string `json:"refused,omitempty"`
}

// Verification describes a room marked as failing verification: the first
// record that failed and why. No later record is applied until a refresh
// resyncs the room cleanly.
type Verification struct {
	Status  string `json:"status"` // "failed"
	Seq     int64  `json:"seq"`
	Code    string `json:"code"`
	Message string `json:"message"`
	At      int64  `json:"at"`
}

// RoomSummary is a room in a list.
type RoomSummary struct {
	RoomID     string   `json:"room_id"`
	Host       string   `json:"host"`
	Topic      string   `json:"topic,omitempty"`
	Status     string   `json:"status"`
	Visibility string   `json:"visibility,omitempty"`
	StartTime  int64    `json:"start_time,omitempty"`
	EndTime    int64    `json:"end_time,omitempty"`
	Tags       []string `json:"tags"`
	Language   string   `json:"language,omitempty"`
	// Role is the agent's role while an active member (omitted
	// otherwise).
	Role              *string `json:"role,omitempty"`
	UnreadCount       int64   `json:"unread_count"`
	PendingInboxCount int64   `json:"pending_inbox_count"`
	// Known is true when the room is in local state.
	Known bool `json:"known"`
	// Membership is the host's relation of the agent to the room (scope
	// mine: active, invited, pending, left, …), as the host sent it.
	Membership string `json:"membership,omitempty"`
}

// RoomStateView is the room as materialized from verified records plus
// local projections (connector spec 4.3).
type RoomStateView struct {
	Host       string           `json:"host"`
	RoomID     string           `json:"room_id"`
	Status     string           `json:"status"`
	Visibility string           `json:"visibility,omitempty"`
	Topic      string           `json:"topic,omitempty"`
	Agenda     string           `json:"agenda,omitempty"`
	Guidance   string           `json:"guidance,omitempty"`
	Creator    string           `json:"creator,omitempty"`
	CreatedAt  int64            `json:"created_at,omitempty"`
	StartTime  int64            `json:"start_time,omitempty"`
	EndTime    int64            `json:"end_time,omitempty"`
	Tags       []string         `json:"tags"`
	Language   string           `json:"language,omitempty"`
	Policy     map[string]any   `json:"policy"`
	Types      []map[string]any `json:"types"`
	// SelfMember is the agent's own member entry (omitted when it has
	// none).
	SelfMember *RoomMemberView `json:"self_member,omitempty"`
	// MembersCount counts every member entry, of any status (as 0.12.6
	// does); ActiveMembersCount only the active members (DECISIONS #2).
	MembersCount       int `json:"members_count"`
	ActiveMembersCount int `json:"active_members_count"`
	// ActiveTurn is the room's active turn (omitted when none).
	ActiveTurn        *ActiveTurn    `json:"active_turn,omitempty"`
	UnreadCount       int64          `json:"unread_count"`
	PendingInboxCount int64          `json:"pending_inbox_count"`
	Extra             map[string]any `json:"extra,omitempty"`
}

// HeldDraft is a write held because the room head moved past its base
// (connector spec 4.2). It never holds a signed envelope.
type HeldDraft struct {
	ID          string         `json:"id"`
	RoomID      string         `json:"room_id"`
	Host        string         `json:"host"`
	Kind        string         `json:"kind"`
	CreatedAt   int64          `json:"created_at"`
	BaseSeq     int64          `json:"base_seq"`
	BaseHash    string         `json:"base_hash"`
	CurrentSync SyncState      `json:"current_sync"`
	Draft       map[string]any `json:"draft"`
	Reason      string         `json:"reason"`
	Options     []string       `json:"options"`
}

// DraftOptions returns the actions a held draft offers (the seed's four;
// draft_commit also takes send and drop, the 0.12.6 names).
func DraftOptions() []string { return []string{"revise", "send_as_is", "stay_silent", "send_anyway"} }

// AgentStatus is a transient agent status in a room (ADP 16.4): a hint,
// never a record or a lock.
type AgentStatus struct {
	RoomID    string         `json:"room_id"`
	AgentID   string         `json:"agent_id"`
	State     string         `json:"state"`
	Summary   string         `json:"summary,omitempty"`
	SeenSeq   int64          `json:"seen_seq,omitempty"`
	SeenHash  string         `json:"seen_hash,omitempty"`
	ClaimID   string         `json:"claim_id,omitempty"`
	Activity  string         `json:"activity,omitempty"`
	ExpiresAt int64          `json:"expires_at"`
	UpdatedAt int64          `json:"updated_at"`
	Extra     map[string]any `json:"extra,omitempty"`
}

// WriteResult is the outcome of a room write (send_message, submit_event,
// draft_commit): sent with the record and its timeline item; held with the
// draft and the changes; rejected with the changes.
type WriteResult struct {
	Status  string          `json:"status"`
	Reason  string          `json:"reason,omitempty"`
	Record  json.RawMessage `json:"record,omitempty"`
	Item    *TimelineItem   `json:"item,omitempty"`
	Draft   *HeldDraft      `json:"draft,omitempty"`
	Changes []TimelineItem  `json:"changes,omitempty"`
	// ChangesTruncated is true when more records were accepted after the
	// base than Changes lists (the newest are listed).
	ChangesTruncated bool       `json:"changes_truncated,omitempty"`
	Sync             *SyncState `json:"sync,omitempty"`
	// DraftID and PendingCount are set by draft_commit stay_silent
	// (status "dropped").
	DraftID      string `json:"draft_id,omitempty"`
	PendingCount *int64 `json:"pending_count,omitempty"`
}

// Write statuses.
const (
	StatusSent     = "sent"
	StatusHeld     = "held"
	StatusRejected = "rejected"
	StatusDropped  = "dropped"
)

// RecordResult is the result of room_leave and join_request_review.
type RecordResult struct {
	Record json.RawMessage `json:"record"`
	Sync   SyncState       `json:"sync"`
}
