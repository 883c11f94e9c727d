package discourse

import "encoding/json"

// Tool inputs and results. Field names and JSON tags follow the tool
// schemas in schemas/tools (the MCP layer validates inputs against them and
// decodes into these types); optional inputs whose absence matters are
// pointers.

// RoomsSearchInput is the input of agent_protocols_rooms_search.
type RoomsSearchInput struct {
	Host        string `json:"host"`
	Status      string `json:"status,omitempty"`
	Tag         string `json:"tag,omitempty"`
	Keyword     string `json:"keyword,omitempty"`
	Creator     string `json:"creator,omitempty"`
	StartsAfter int64  `json:"starts_after,omitempty"`
	EndsBefore  int64  `json:"ends_before,omitempty"`
	Language    string `json:"language,omitempty"`
	Limit       int    `json:"limit,omitempty"`
	Cursor      string `json:"cursor,omitempty"`
}

// RoomsResult is the result of agent_protocols_rooms_search and
// agent_protocols_rooms_list.
type RoomsResult struct {
	Rooms      []RoomSummary `json:"rooms"`
	NextCursor string        `json:"next_cursor,omitempty"`
}

// RoomsListInput is the input of agent_protocols_rooms_list: the seed's
// local list, and the 0.12.6 scopes public (a host's directory, like
// rooms_search) and mine (the host's rooms of the agent).
type RoomsListInput struct {
	Scope       string `json:"scope,omitempty"`
	Host        string `json:"host,omitempty"`
	Status      string `json:"status,omitempty"`
	Membership  string `json:"membership,omitempty"`
	Tag         string `json:"tag,omitempty"`
	Keyword     string `json:"keyword,omitempty"`
	Creator     string `json:"creator,omitempty"`
	StartsAfter *int64 `json:"starts_after,omitempty"`
	EndsBefore  *int64 `json:"ends_before,omitempty"`
	Language    string `json:"language,omitempty"`
	Limit       int    `json:"limit,omitempty"`
	Cursor      string `json:"cursor,omitempty"`
}

// Scopes of agent_protocols_rooms_list.
const (
	ScopeKnown  = "known"
	ScopePublic = "public"
	ScopeMine   = "mine"
)

// RoomOpenInput is the input of agent_protocols_room_open.
type RoomOpenInput struct {
	Host      string `json:"host"`
	RoomID    string `json:"room_id"`
	Subscribe *bool  `json:"subscribe,omitempty"`
	Refresh   bool   `json:"refresh,omitempty"`
}

// RoomOpenResult is the result of agent_protocols_room_open.
type RoomOpenResult struct {
	Room       RoomStateView `json:"room"`
	Sync       SyncState     `json:"sync"`
	ActiveTurn *ActiveTurn   `json:"active_turn,omitempty"`
}

// RoomStateInput is the input of agent_protocols_room_state. Subscribe
// (0.12.6) sets or clears the live-follow flag; IncludeTypes false asks for
// the brief registry (omitted or true: full definitions, as 0.12.6 always
// returns them).
type RoomStateInput struct {
	RoomID       string `json:"room_id"`
	Host         string `json:"host,omitempty"`
	Refresh      bool   `json:"refresh,omitempty"`
	IncludeTypes *bool  `json:"include_types,omitempty"`
	Subscribe    *bool  `json:"subscribe,omitempty"`
}

// RoomStateResult is the result of agent_protocols_room_state.
type RoomStateResult struct {
	Room       RoomStateView `json:"room"`
	Sync       SyncState     `json:"sync"`
	ActiveTurn *ActiveTurn   `json:"active_turn,omitempty"`
}

// RoomMembersListInput is the input of agent_protocols_room_members_list.
type RoomMembersListInput struct {
	RoomID                string `json:"room_id"`
	Host                  string `json:"host,omitempty"`
	AgentID               string `json:"agent_id,omitempty"`
	Status                string `json:"status,omitempty"`
	Role                  string `json:"role,omitempty"`
	IncludeProfiles       bool   `json:"include_profiles,omitempty"`
	IncludeRecentActivity bool   `json:"include_recent_activity,omitempty"`
	Limit                 int    `json:"limit,omitempty"`
	Cursor                string `json:"cursor,omitempty"`
}

// RoomMembersListResult is the result of agent_protocols_room_members_list.
// Recent is set with agent_id and include_recent_activity.
type RoomMembersListResult struct {
	Members    []RoomMemberView `json:"members"`
	Recent     []TimelineItem   `json:"recent,omitempty"`
	NextCursor string           `json:"next_cursor,omitempty"`
	Sync       SyncState        `json:"sync"`
}

// RoomMemberGetInput is the input of agent_protocols_room_member_get.
type RoomMemberGetInput struct {
	RoomID                string `json:"room_id"`
	Host                  string `json:"host,omitempty"`
	AgentID               string `json:"agent_id"`
	IncludeProfile        bool   `json:"include_profile,omitempty"`
	IncludeRecentActivity bool   `json:"include_recent_activity,omitempty"`
}

// RoomMemberGetResult is the result of agent_protocols_room_member_get.
type RoomMemberGetResult struct {
	Member RoomMemberView `json:"member"`
	Recent []TimelineItem `json:"recent,omitempty"`
	Sync   SyncState      `json:"sync"`
}

// AgentStatusListInput is the input of agent_protocols_agent_status_list.
type AgentStatusListInput struct {
	RoomID  string `json:"room_id"`
	Host    string `json:"host,omitempty"`
	AgentID string `json:"agent_id,omitempty"`
	Refresh bool   `json:"refresh,omitempty"`
}

// AgentStatusListResult is the result of agent_protocols_agent_status_list.
type AgentStatusListResult struct {
	Statuses []AgentStatus `json:"statuses"`
	Sync     *SyncState    `json:"sync,omitempty"`
}

// AgentStatusGetInput is the input of agent_protocols_agent_status_get.
type AgentStatusGetInput struct {
	RoomID  string `json:"room_id"`
	Host    string `json:"host,omitempty"`
	AgentID string `json:"agent_id"`
	Refresh bool   `json:"refresh,omitempty"`
}

// AgentStatusGetResult is the result of agent_protocols_agent_status_get.
type AgentStatusGetResult struct {
	Status *AgentStatus `json:"status,omitempty"`
	Sync   *SyncState   `json:"sync,omitempty"`
}

// AgentStatusSetInput is the input of agent_protocols_agent_status_set.
type AgentStatusSetInput struct {
	RoomID    string         `json:"room_id"`
	Host      string         `json:"host,omitempty"`
	State     string         `json:"state"`
	Summary   string         `json:"summary,omitempty"`
	SeenSeq   *int64         `json:"seen_seq,omitempty"`
	SeenHash  string         `json:"seen_hash,omitempty"`
	ClaimID   string         `json:"claim_id,omitempty"`
	Activity  string         `json:"activity,omitempty"`
	ExpiresAt *int64         `json:"expires_at,omitempty"`
	Extra     map[string]any `json:"extra,omitempty"`
}

// AgentStatusSetResult is the result of agent_protocols_agent_status_set.
type AgentStatusSetResult struct {
	Status AgentStatus `json:"status"`
	Sync   *SyncState  `json:"sync,omitempty"`
}

// RoomTimelineInput is the input of agent_protocols_room_timeline.
type RoomTimelineInput struct {
	RoomID         string   `json:"room_id"`
	Host           string   `json:"host,omitempty"`
	AfterSeq       int64    `json:"after_seq,omitempty"`
	BeforeSeq      int64    `json:"before_seq,omitempty"`
	Limit          int      `json:"limit,omitempty"`
	Types          []string `json:"types,omitempty"`
	Actors         []string `json:"actors,omitempty"`
	UnreadOnly     bool     `json:"unread_only,omitempty"`
	MarkRead       bool     `json:"mark_read,omitempty"`
	Refresh        bool     `json:"refresh,omitempty"`
	IncludeRecords bool     `json:"include_records,omitempty"`
	// Source is "local" (default) or "remote" (0.12.6): remote reads the
	// whole history from the host and verifies it from genesis, changing
	// no read cursor or presented head.
	Source string `json:"source,omitempty"`
}

// RoomTimelineResult is the result of agent_protocols_room_timeline.
type RoomTimelineResult struct {
	Items        []TimelineItem  `json:"items"`
	Sync         SyncState       `json:"sync"`
	NextAfterSeq *int64          `json:"next_after_seq,omitempty"`
	UnreadCount  int64           `json:"unread_count"`
	History      TimelineHistory `json:"history"`
}

// TimelineHistory is the range of records a timeline read drew from: the
// local window (first_seq..last_seq; truncated when records before it
// were trimmed) or, for source remote, the verified remote history
// (truncated when it was longer than one read verifies).
type TimelineHistory struct {
	Source    string `json:"source"`
	FirstSeq  int64  `json:"first_seq"`
	LastSeq   int64  `json:"last_seq"`
	Truncated bool   `json:"truncated"`
}

// RoomMarkReadInput is the input of agent_protocols_room_mark_read.
type RoomMarkReadInput struct {
	RoomID     string `json:"room_id"`
	Host       string `json:"host,omitempty"`
	ThroughSeq int64  `json:"through_seq"`
}

// RoomMarkReadResult is the result of agent_protocols_room_mark_read.
type RoomMarkReadResult struct {
	RoomID      string `json:"room_id"`
	ReadSeq     int64  `json:"read_seq"`
	UnreadCount int64  `json:"unread_count"`
}

// DraftsListInput is the input of agent_protocols_drafts_list. With
// DraftID (0.12.6) it reads that one draft like draft_get.
type DraftsListInput struct {
	RoomID  string `json:"room_id,omitempty"`
	Host    string `json:"host,omitempty"`
	DraftID string `json:"draft_id,omitempty"`
	Limit   int    `json:"limit,omitempty"`
	Cursor  string `json:"cursor,omitempty"`
}

// DraftsListResult is the result of agent_protocols_drafts_list. With
// draft_id, Changes and Sync are set as by draft_get.
type DraftsListResult struct {
	Drafts           []HeldDraft     `json:"drafts"`
	Changes          *[]TimelineItem `json:"changes,omitempty"`
	ChangesTruncated bool            `json:"changes_truncated,omitempty"`
	Sync             *SyncState      `json:"sync,omitempty"`
	NextCursor       string          `json:"next_cursor,omitempty"`
}

// DraftGetInput is the input of agent_protocols_draft_get.
type DraftGetInput struct {
	DraftID string `json:"draft_id"`
}

// DraftGetResult is the result of agent_protocols_draft_get.
type DraftGetResult struct {
	Draft   HeldDraft      `json:"draft"`
	Changes []TimelineItem `json:"changes"`
	Sync    SyncState      `json:"sync"`
	// ChangesTruncated is true when Changes lists only the newest records.
	ChangesTruncated bool `json:"changes_truncated,omitempty"`
}

// DraftCommitInput is the input of agent_protocols_draft_commit.
type DraftCommitInput struct {
	DraftID        string         `json:"draft_id"`
	Action         string         `json:"action"`
	Content        *string        `json:"content,omitempty"`
	ContentType    *string        `json:"content_type,omitempty"`
	Mentions       []string       `json:"mentions,omitempty"`
	References     []string       `json:"references,omitempty"`
	Extra          map[string]any `json:"extra,omitempty"`
	Type           *string        `json:"type,omitempty"`
	Payload        map[string]any `json:"payload,omitempty"`
	BaseSeq        *int64         `json:"base_seq,omitempty"`
	BaseHash       *string        `json:"base_hash,omitempty"`
	OnHeadMismatch string         `json:"on_head_mismatch,omitempty"`
}

// DraftDropInput is the input of agent_protocols_draft_drop.
type DraftDropInput struct {
	DraftID string `json:"draft_id"`
}

// DraftDropResult is the result of agent_protocols_draft_drop.
type DraftDropResult struct {
	Status       string `json:"status"`
	DraftID      string `json:"draft_id"`
	PendingCount int64  `json:"pending_count"`
}

// RoomCreateInput is the input of agent_protocols_room_create.
type RoomCreateInput struct {
	Host       string           `json:"host"`
	Topic      string           `json:"topic"`
	Visibility string           `json:"visibility"`
	StartTime  int64            `json:"start_time"`
	EndTime    int64            `json:"end_time"`
	Agenda     *string          `json:"agenda,omitempty"`
	Guidance   *string          `json:"guidance,omitempty"`
	Tags       []string         `json:"tags,omitempty"`
	Language   *string          `json:"language,omitempty"`
	Policy     map[string]any   `json:"policy,omitempty"`
	Types      []map[string]any `json:"types,omitempty"`
	Extra      map[string]any   `json:"extra,omitempty"`
}

// RoomCreateResult is the result of agent_protocols_room_create.
type RoomCreateResult struct {
	Room     RoomStateView  `json:"room"`
	Envelope map[string]any `json:"envelope"`
	Sync     SyncState      `json:"sync"`
}

// RoomJoinInput is the input of agent_protocols_room_join.
type RoomJoinInput struct {
	RoomID      string         `json:"room_id"`
	Host        string         `json:"host,omitempty"`
	Role        string         `json:"role"`
	Perspective string         `json:"perspective,omitempty"`
	Reason      string         `json:"reason,omitempty"`
	RequestID   string         `json:"request_id,omitempty"`
	Extra       map[string]any `json:"extra,omitempty"`
}

// RoomJoinResult is the result of agent_protocols_room_join.
type RoomJoinResult struct {
	Status      string          `json:"status"`
	Record      json.RawMessage `json:"record,omitempty"`
	Member      *RoomMemberView `json:"member,omitempty"`
	JoinRequest map[string]any  `json:"join_request,omitempty"`
	Sync        *SyncState      `json:"sync,omitempty"`
}

// Join statuses.
const (
	JoinJoined           = "joined"
	JoinApprovalRequired = "approval_required"
	JoinRejected         = "rejected"
)

// RoomLeaveInput is the input of agent_protocols_room_leave.
type RoomLeaveInput struct {
	RoomID string `json:"room_id"`
	Host   string `json:"host,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// RoomSendMessageInput is the input of agent_protocols_room_send_message.
type RoomSendMessageInput struct {
	RoomID         string         `json:"room_id"`
	Host           string         `json:"host,omitempty"`
	Content        string         `json:"content"`
	ContentType    string         `json:"content_type,omitempty"`
	Mentions       []string       `json:"mentions,omitempty"`
	References     []string       `json:"references,omitempty"`
	Extra          map[string]any `json:"extra,omitempty"`
	BaseSeq        *int64         `json:"base_seq,omitempty"`
	BaseHash       *string        `json:"base_hash,omitempty"`
	OnHeadMismatch string         `json:"on_head_mismatch,omitempty"`
}

// RoomSubmitEventInput is the input of agent_protocols_room_submit_event.
type RoomSubmitEventInput struct {
	RoomID         string         `json:"room_id"`
	Host           string         `json:"host,omitempty"`
	Type           string         `json:"type"`
	Payload        map[string]any `json:"payload"`
	Mentions       []string       `json:"mentions,omitempty"`
	References     []string       `json:"references,omitempty"`
	BaseSeq        *int64         `json:"base_seq,omitempty"`
	BaseHash       *string        `json:"base_hash,omitempty"`
	OnHeadMismatch string         `json:"on_head_mismatch,omitempty"`
}

// JoinRequestsListInput is the input of agent_protocols_join_requests_list.
type JoinRequestsListInput struct {
	RoomID string `json:"room_id"`
	Host   string `json:"host,omitempty"`
	Status string `json:"status,omitempty"`
	Limit  int    `json:"limit,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

// JoinRequestsListResult is the result of agent_protocols_join_requests_list.
type JoinRequestsListResult struct {
	JoinRequests []map[string]any `json:"join_requests"`
	NextCursor   string           `json:"next_cursor,omitempty"`
}

// JoinRequestReviewInput is the input of agent_protocols_join_request_review.
type JoinRequestReviewInput struct {
	RoomID    string `json:"room_id"`
	Host      string `json:"host,omitempty"`
	RequestID string `json:"request_id"`
	Decision  string `json:"decision"`
	Role      string `json:"role,omitempty"`
	Reason    string `json:"reason,omitempty"`
}
