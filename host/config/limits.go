package config

// Defaults of the [limits] budgets, in writes per minute. The room budgets
// mirror the per-agent quotas of ADP section 20 (host/proto/adp
// DefaultLimits), so the connector refuses what a host with the
// recommended limits would refuse, before anything is signed; a test keeps
// them equal.
const (
	// DefaultRoomMessages is room_messages: adp DefaultLimits().MessageRate.
	DefaultRoomMessages = 5
	// DefaultRoomSignals is room_signals: adp DefaultLimits().SignalRate.
	DefaultRoomSignals = 60
	// DefaultRoomControls is room_controls: adp DefaultLimits().ControlRate.
	DefaultRoomControls = 10
	// DefaultRoomsCreated is rooms_created: the quota of room.create, a
	// control-class event, under adp DefaultLimits() (its ControlRate).
	DefaultRoomsCreated = 10
	// DefaultProfileUpdates is profile_updates.
	DefaultProfileUpdates = 10
	// DefaultMailSends is mail_sends.
	DefaultMailSends = 30
	// DefaultMailSendsPerRecipient is mail_sends_per_recipient.
	DefaultMailSendsPerRecipient = 10
	// DefaultMailboxPublishes is mailbox_publishes.
	DefaultMailboxPublishes = 10
	// DefaultKnowledgeSubmits is knowledge_submits.
	DefaultKnowledgeSubmits = 30
	// DefaultDelegationWrites is delegation_writes.
	DefaultDelegationWrites = 10
)

// Limits are the local write budgets of [limits]: how many writes per
// minute the connector itself allows before it refuses one with
// rate_limited, before anything is signed. The fields hold the values as
// written: nil means the key was left out and the default applies; 0 means
// unlimited; negative values are refused by Validate. Read the effective
// budgets with the methods (Limits{}.MailSends() is DefaultMailSends).
//
// Set one in memory with new: cfg.Limits.MailSendsPerMinute = new(3).
type Limits struct {
	// RoomMessagesPerMinute is room_messages: message-class events (and
	// message.create) per room.
	RoomMessagesPerMinute *int `toml:"room_messages,omitempty"`
	// RoomSignalsPerMinute is room_signals: signal-class events (and
	// membership events) per room.
	RoomSignalsPerMinute *int `toml:"room_signals,omitempty"`
	// RoomControlsPerMinute is room_controls: control-class events (and
	// contract writes) per room.
	RoomControlsPerMinute *int `toml:"room_controls,omitempty"`
	// RoomsCreatedPerMinute is rooms_created: rooms created per host.
	RoomsCreatedPerMinute *int `toml:"rooms_created,omitempty"`
	// ProfileUpdatesPerMinute is profile_updates: profile publications per
	// profile service.
	ProfileUpdatesPerMinute *int `toml:"profile_updates,omitempty"`
	// MailSendsPerMinute is mail_sends: letters sent, all recipients
	// together.
	MailSendsPerMinute *int `toml:"mail_sends,omitempty"`
	// MailSendsPerRecipientPerMinute is mail_sends_per_recipient: letters
	// sent to one recipient Agent ID.
	MailSendsPerRecipientPerMinute *int `toml:"mail_sends_per_recipient,omitempty"`
	// MailboxPublishesPerMinute is mailbox_publishes: publications per
	// mailbox.
	MailboxPublishesPerMinute *int `toml:"mailbox_publishes,omitempty"`
	// KnowledgeSubmitsPerMinute is knowledge_submits: knowledge
	// submissions, all services together.
	KnowledgeSubmitsPerMinute *int `toml:"knowledge_submits,omitempty"`
	// DelegationWritesPerMinute is delegation_writes: delegation grants
	// and revocations together.
	DelegationWritesPerMinute *int `toml:"delegation_writes,omitempty"`
}

// budget is the effective value of one budget: its default when unset.
func budget(v *int, def int) int {
	if v == nil {
		return def
	}
	return *v
}

// RoomMessages returns the message-class events allowed per room per
// minute; 0 means unlimited.
func (l Limits) RoomMessages() int { return budget(l.RoomMessagesPerMinute, DefaultRoomMessages) }

// RoomSignals returns the signal-class events allowed per room per minute;
// 0 means unlimited.
func (l Limits) RoomSignals() int { return budget(l.RoomSignalsPerMinute, DefaultRoomSignals) }

// RoomControls returns the control-class events allowed per room per
// minute; 0 means unlimited.
func (l Limits) RoomControls() int { return budget(l.RoomControlsPerMinute, DefaultRoomControls) }

// RoomsCreated returns the rooms that may be created per host per minute;
// 0 means unlimited.
func (l Limits) RoomsCreated() int { return budget(l.RoomsCreatedPerMinute, DefaultRoomsCreated) }

// ProfileUpdates returns the profile publications allowed per profile
// service per minute; 0 means unlimited.
func (l Limits) ProfileUpdates() int {
	return budget(l.ProfileUpdatesPerMinute, DefaultProfileUpdates)
}

// MailSends returns the letters that may be sent per minute, all
// recipients together; 0 means unlimited.
func (l Limits) MailSends() int { return budget(l.MailSendsPerMinute, DefaultMailSends) }

// MailSendsPerRecipient returns the letters that may be sent to one
// recipient Agent ID per minute; 0 means unlimited.
func (l Limits) MailSendsPerRecipient() int {
	return budget(l.MailSendsPerRecipientPerMinute, DefaultMailSendsPerRecipient)
}

// MailboxPublishes returns the publications allowed per mailbox per
// minute; 0 means unlimited.
func (l Limits) MailboxPublishes() int {
	return budget(l.MailboxPublishesPerMinute, DefaultMailboxPublishes)
}

// KnowledgeSubmits returns the knowledge submissions allowed per minute,
// all services together; 0 means unlimited.
func (l Limits) KnowledgeSubmits() int {
	return budget(l.KnowledgeSubmitsPerMinute, DefaultKnowledgeSubmits)
}

// DelegationWrites returns the delegation grants and revocations allowed
// per minute, together; 0 means unlimited.
func (l Limits) DelegationWrites() int {
	return budget(l.DelegationWritesPerMinute, DefaultDelegationWrites)
}

// IsZero reports whether no budget is set (the [limits] table is absent or
// empty): Marshal then leaves the table out.
func (l Limits) IsZero() bool { return l == Limits{} }

// limitKey is one [limits] key and the field it decodes into.
type limitKey struct {
	key string
	v   **int
}

// limitKeys pairs each [limits] key with its field, in file order, for
// Validate, clone and the tests.
func (l *Limits) limitKeys() []limitKey {
	return []limitKey{
		{"room_messages", &l.RoomMessagesPerMinute},
		{"room_signals", &l.RoomSignalsPerMinute},
		{"room_controls", &l.RoomControlsPerMinute},
		{"rooms_created", &l.RoomsCreatedPerMinute},
		{"profile_updates", &l.ProfileUpdatesPerMinute},
		{"mail_sends", &l.MailSendsPerMinute},
		{"mail_sends_per_recipient", &l.MailSendsPerRecipientPerMinute},
		{"mailbox_publishes", &l.MailboxPublishesPerMinute},
		{"knowledge_submits", &l.KnowledgeSubmitsPerMinute},
		{"delegation_writes", &l.DelegationWritesPerMinute},
	}
}

// validateLimits checks that every budget written is an integer ≥ 0.
func (c *Config) validateLimits(ps *problems) {
	for _, k := range c.Limits.limitKeys() {
		if v := *k.v; v != nil && *v < 0 {
			ps.add("limits."+k.key, "%d is negative: write a number of writes per minute, 0 for unlimited, or leave the key out for the default", *v)
		}
	}
}

// clone returns a copy whose pointers do not alias l's.
func (l Limits) clone() Limits {
	cp := l
	for _, k := range cp.limitKeys() {
		if v := *k.v; v != nil {
			*k.v = new(*v)
		}
	}
	return cp
}
