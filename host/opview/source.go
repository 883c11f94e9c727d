package opview

import (
	"context"
	"errors"
)

// Source is everything the view reads: plain data, read from verified
// local state and the process's own health. It is the only thing the
// handlers hold of the connector, and nothing it returns can sign, allocate
// a nonce, change state or reach a service (TestHandlersCannotReachTheSigner
// walks these types to prove it).
type Source interface {
	// Status is the identity, its origins with their grants and
	// connection state, the plugins and the connector processes.
	Status(ctx context.Context) (*Status, error)
	// Rooms lists the rooms known locally.
	Rooms(ctx context.Context) ([]Room, error)
	// Room is one room by its local key, with its members, statuses and
	// newest timeline items (ErrNotFound when local state has no such
	// room).
	Room(ctx context.Context, key int64) (*RoomDetail, error)
	// Inbox is the inbox by state.
	Inbox(ctx context.Context) (*Inbox, error)
	// Outbox is the held drafts and the outbox entries by state.
	Outbox(ctx context.Context) (*Outbox, error)
	// Version digests the state by topic (TopicRooms, …): a topic's string
	// changes when what its pages show may have changed.
	Version(ctx context.Context) (map[string]string, error)
	// Changed returns a channel closed at the next change this process
	// makes to local state (other processes' changes are seen by Version).
	Changed() <-chan struct{}
}

// ErrNotFound: local state holds no such thing.
var ErrNotFound = errors.New("opview: not found")

// Topics of Version: which part of the state changed.
const (
	TopicStatus = "status" // processes, plugins, live streams
	TopicRooms  = "rooms"
	TopicInbox  = "inbox"
	TopicOutbox = "outbox" // the outbox and held drafts
)

// Topics lists the topics in a fixed order.
func Topics() []string { return []string{TopicStatus, TopicRooms, TopicInbox, TopicOutbox} }

// Status is the status page's data. Times are Unix ms (0: never).
type Status struct {
	Identity  string
	AgentID   string
	Home      string
	Database  string
	Now       int64
	Origins   []Origin
	Plugins   []Plugin
	Processes []Process
	Counts    Counts
}

// Counts are the totals the status page leads with.
type Counts struct {
	Rooms, FailedRooms                      int
	Pending, Claimed, Deferred              int64
	Drafts                                  int64
	OutboxPending, OutboxHeld, OutboxFailed int64
}

// Origin is one configured origin.
type Origin struct {
	URL    string
	Label  string
	Kind   string // "host" (a [[hosts]] entry) or "profile service"
	Grants []string
	// DiscoveryAt is when its discovery document was last read.
	DiscoveryAt int64
	Rooms       int
	FailedRooms int
	// Streams counts this process's live streams to it by state;
	// StreamError is the latest failure of one that is retrying or waiting.
	Streams     []Count
	StreamError string
	// LastEventAt is the newest record time of its rooms.
	LastEventAt int64
	// Lag is the sum over its rooms of remote_seq − synced_seq.
	Lag int64
}

// Count is a label and a number.
type Count struct {
	Label string
	N     int
}

// Plugin is one plugin's health in this process.
type Plugin struct {
	Name, Version, State string
	Grants, Tools        []string
	Validates, Watches   []string
	Calls, Failures      uint64
	LastError            string
	LastErrorCode        string
	LastErrorAt          int64
}

// Process states.
const (
	ProcessOnline  = "online"
	ProcessStale   = "stale"
	ProcessStopped = "stopped"
)

// Process is one connector process of the identity, from its heartbeat.
type Process struct {
	PID        int64
	Hostname   string
	Command    string
	Transport  string
	Addr       string
	Client     string // clientInfo name and version
	StartedAt  int64
	BeatAt     int64
	StoppedAt  int64
	LastCall   string
	LastCallAt int64
	Calls      int64
	// State is online, stale (no heartbeat for three intervals) or
	// stopped (a clean exit).
	State string
	// Self marks the process serving this view.
	Self    bool
	Streams []Stream
}

// Stream is a room followed live by a process.
type Stream struct {
	Host, RoomID, State string
	Since               int64
	Error               string
}

// Room is one room known locally.
type Room struct {
	Key        int64
	Host       string
	HostLabel  string
	RoomID     string
	Topic      string
	Status     string // scheduled, active, ended, cancelled or unknown
	HeadSeq    int64
	SyncedSeq  int64
	RemoteSeq  int64
	Lag        int64 // remote_seq − synced_seq, never negative
	ReadSeq    int64
	Unread     int64
	Pending    int64
	Subscribed bool
	SelfRole   string
	SelfState  string
	// Verification is VerificationOK, VerificationPending (no verified
	// genesis yet) or VerificationFailed (Failure says why).
	Verification string
	Failure      *Failure
	// Stream is this process's live state of the room ("" when it does
	// not follow it).
	Stream      string
	LastEventAt int64
}

// Verification states of a room.
const (
	VerificationOK      = "verified"
	VerificationPending = "not verified yet"
	VerificationFailed  = "verification_failed"
)

// Failure is a room's verification failure.
type Failure struct {
	Seq     int64
	Code    string
	Message string
	At      int64
}

// RoomDetail is a room's page.
type RoomDetail struct {
	Room
	Now      int64
	Self     string
	Members  []Member
	Statuses []AgentStatus
	Timeline []Item // oldest first
	// Older says that older items exist locally.
	Older bool
}

// Member is a room member.
type Member struct {
	AgentID string
	Role    string
	Status  string
	Creator bool
	Self    bool
}

// AgentStatus is a cached agent status of a room.
type AgentStatus struct {
	AgentID   string
	State     string
	Summary   string
	Activity  string
	ExpiresAt int64
	UpdatedAt int64
}

// Item is a timeline item.
type Item struct {
	Seq      int64
	Type     string
	Kind     string
	Actor    string
	Self     bool // written by this agent
	At       int64
	Text     string // the content or summary, cut to MaxItemRunes
	Cut      bool
	Mention  bool // mentions this agent
	Redacted bool
}

// MaxItemRunes cuts long content on the pages.
const MaxItemRunes = 600

// Inbox is the inbox page's data.
type Inbox struct {
	Now          int64
	Pending      []InboxItem
	Claimed      []InboxItem
	Deferred     []InboxItem
	Acknowledged []InboxItem
	Counts       map[string]int64
}

// InboxItem is one inbox item.
type InboxItem struct {
	ID               string
	Kind             string
	Priority         string
	State            string
	RoomKey          int64
	Host             string
	RoomID           string
	Source           string // what raised an item of no room
	Seq              int64
	Actor            string
	Reason           string
	Summary          string
	CreatedAt        int64
	Until            int64  // claim lease or deferral end
	Session          string // the claiming session
	RequiresResponse bool
	Mention          bool
}

// Outbox is the outbox page's data.
type Outbox struct {
	Now     int64
	Drafts  []Draft
	Pending []OutboxEntry
	Done    []OutboxEntry
	Failed  []OutboxEntry
	Counts  map[string]int64
}

// Draft is a held draft and what changed in its room since its base.
type Draft struct {
	ID        string
	RoomKey   int64
	Host      string
	RoomID    string
	Kind      string
	Reason    string
	CreatedAt int64
	BaseSeq   int64
	HeadSeq   int64
	Text      string // what it would write, cut
	Changes   []Item // records after its base (newest MaxDraftChanges)
}

// MaxDraftChanges bounds the changes listed per draft.
const MaxDraftChanges = 10

// OutboxEntry is a signed write on its way to a service.
type OutboxEntry struct {
	ID        int64
	Kind      string
	Service   string
	Ref       string
	EventID   string
	Nonce     int64
	State     string
	Attempts  int64
	CreatedAt int64
	UpdatedAt int64
	Error     string
	// Held: waiting, unsent, because the grant it needs was withdrawn
	// (its error says permission_denied).
	Held bool
}
