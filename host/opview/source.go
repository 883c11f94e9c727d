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
	// Wake is the wake log and the background jobs' leases.
	Wake(ctx context.Context) (*WakeLog, error)
	// Mail is the agent's mailboxes and its letters' metadata.
	Mail(ctx context.Context) (*Mail, error)
	// Letter is one letter with its text, by its local id (ErrNotFound
	// when local state holds none the agent may read).
	Letter(ctx context.Context, id int64) (*LetterDetail, error)
	// Knowledge is what the agent submitted to Knowledge services.
	Knowledge(ctx context.Context) (*Knowledge, error)
	// Delegations is the credentials the agent granted or revoked and the
	// ones naming it, as it last saw them.
	Delegations(ctx context.Context) (*Delegations, error)
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
	TopicStatus     = "status" // processes, plugins, live streams
	TopicRooms      = "rooms"
	TopicInbox      = "inbox"
	TopicOutbox     = "outbox" // the outbox and held drafts
	TopicWake       = "wake"   // the wake log and leases
	TopicMail       = "mail"   // mailboxes and letters
	TopicKnowledge  = "knowledge"
	TopicDelegation = "delegation"
)

// Topics lists the topics in a fixed order.
func Topics() []string {
	return []string{TopicStatus, TopicRooms, TopicInbox, TopicOutbox, TopicWake, TopicMail, TopicKnowledge, TopicDelegation}
}

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

// WakeLog is the wake page's data: the newest wakes and the leases.
type WakeLog struct {
	Now    int64
	Leases []Lease
	Wakes  []Wake
	// More says that older wakes are kept.
	More bool
}

// Lease is a background job's lease: which process runs it.
type Lease struct {
	Job, Holder  string
	Since, Until int64
	// Lapsed: its holder stopped renewing it (Until passed).
	Lapsed bool
}

// Wake is one delivery of an inbox item to a command or a session, and
// what became of it.
type Wake struct {
	ID      int64
	InboxID string
	Kind    string
	RoomKey int64 // the room's local key (0: none known)
	Host    string
	RoomID  string
	Seq     int64
	// Via is command, claude_channel or codex_stop; Label what the operator
	// recognizes the target by; Holder the process that delivered it.
	Via, Target, Label, Holder string
	State                      string
	CreatedAt                  int64
	StartedAt                  int64
	EndedAt                    int64
	// Exited: the command exited, with ExitCode.
	Exited   bool
	ExitCode int
	Error    string
	// Output is the start of what the command wrote (cut to MaxItemRunes),
	// OutputBytes how much it wrote in all.
	Output      string
	OutputBytes int64
	OutputCut   bool // Output is not all of it
	// ClaimedAt and AckedAt: when the agent claimed and acknowledged the
	// item (0: not yet); AckState how.
	ClaimedAt, AckedAt int64
	AckState           string
}

// Mail is the mail page's data.
type Mail struct {
	Now int64
	// Refusal says why the agent may read no mail (no origin grants
	// mail.read); "" when it may. The page then lists nothing, as the
	// agent's own views would.
	Refusal   string
	Mailboxes []Mailbox
	Letters   []Letter // newest first, at most MaxLettersListed
	// Total is how many letters the agent may read; Unread how many
	// received ones it has not read.
	Total, Unread int
}

// MaxLettersListed bounds the letters the mail page lists.
const MaxLettersListed = 200

// Mailbox is one of the agent's mailboxes (never its key: only whether
// the key is held).
type Mailbox struct {
	MailboxID     string
	Address       string
	Routes        []string
	Status        string
	CreatedAt     int64
	ExpiresAt     int64
	ReceiveUntil  int64
	Unread        int
	KeyHeld       bool
	PendingRoutes []string
}

// Letter is a letter's metadata: never its content.
type Letter struct {
	// ID is its local id, for its page (0: not found locally).
	ID         int64
	Direction  string // received or sent
	MessageID  string
	ThreadID   string
	From, To   string
	MailboxID  string
	InReplyTo  string
	CreatedAt  int64
	ExpiresAt  int64
	ReceivedAt int64
	// Unread: a received letter the agent has not read.
	Unread bool
	// Delivery is a sent letter's delivery state (delivered, queued);
	// Route the relay that accepted it; DeliveryError the last failure of
	// a queued one.
	Delivery      string
	Route         string
	AcceptedAt    int64
	DeliveryError string
	Size          int64
	Parts         int
}

// LetterDetail is a letter's page: its metadata, subject and parts, the
// text of its text parts cut to MaxLetterRunes.
type LetterDetail struct {
	Letter
	Now        int64
	Subject    string
	HasSubject bool
	Parts      []LetterPart
	// Invalid says why the stored message could not be read ("" when it
	// could).
	Invalid string
}

// MaxLetterRunes cuts a text part on a letter's page.
const MaxLetterRunes = 20000

// LetterPart is one part of a letter.
type LetterPart struct {
	MediaType string
	Name      string
	Size      int64
	// IsText: a text/* part, whose Text is shown; Cut says it was cut,
	// Runes how long it is in all.
	IsText bool
	Text   string
	Cut    bool
	Runes  int
}

// Knowledge is the knowledge page's data.
type Knowledge struct {
	Now         int64
	Submissions []Submission
}

// Submission is one submission a service accepted, with every service's
// answer.
type Submission struct {
	ID, Type string
	// Kind and Title (an assessment's summary, a retraction's reason),
	// Target and Verdict are what it is about.
	Kind, Title, Target, Verdict string
	CreatedAt                    int64
	SubmittedAt                  int64
	UpdatedAt                    int64
	Results                      []SubmissionResult
}

// SubmissionResult is one service's answer.
type SubmissionResult struct {
	Service    string
	Accepted   bool
	Seq        int64
	AcceptedAt int64
	Code       string
	Message    string
}

// Delegations is the delegations page's data.
type Delegations struct {
	Now  int64
	Self string
	// Granted are the credentials this agent signed an event of; Held the
	// ones naming it as subject (a credential it granted itself is in
	// both).
	Granted, Held []Credential
}

// Credential is a delegation credential as the agent last saw it.
type Credential struct {
	Service, ID         string
	Principal, Subject  string
	Controller, EventID string
	Status              string // as of when it was seen; expired once past ExpiresAt
	Scopes, Audiences   []string
	ExpiresAt           int64 // 0: none
	AcceptedAt          int64
	Signed              bool
	Source              string // the tool that last returned it
	SeenAt              int64
	// Checked: the last check of its latest event said Verified and
	// Usable for Audience at CheckedAt, with Reasons.
	Checked          bool
	Audience         string
	Verified, Usable bool
	Reasons          []string
	CheckedAt        int64
}
