package mail

// Protocol and event types.
const (
	// Protocol is the protocol identifier of every Agent Mail event; it is
	// also the HPKE info string.
	Protocol = "agent-mail/1.0"
	// TypeMailboxPublish is the event type of a mailbox card.
	TypeMailboxPublish = "mailbox.publish"
	// TypeMailSubmit is the event type of a packet.
	TypeMailSubmit = "mail.submit"
	// DiscoveryPath is the relay's discovery document.
	DiscoveryPath = "/.well-known/agent-mail"
)

// Protocol limits (crate src/mail/mod.rs, python agent_protocols/mail.py).
const (
	// MaxTTL bounds a card's and a message's lifetime (expires_at -
	// created_at), receive_until - expires_at, and a packet's lifetime
	// together with FutureSkew: 30 days, in milliseconds.
	MaxTTL int64 = 30 * 86_400_000
	// FutureSkew is how far in the future a created_at may be: 300 s.
	FutureSkew int64 = 300_000
	// MaxPacketBytes is the largest JCS(packet) and the largest
	// max_packet_bytes a card may set: 1 MiB.
	MaxPacketBytes = 1_048_576
	// MinCardPacketBytes is the smallest max_packet_bytes a card may set.
	MinCardPacketBytes = 4096
	// MaxPacketBodyBytes bounds a raw packet or card body before parsing
	// (the Python relay's max_body_bytes default).
	MaxPacketBodyBytes = MaxPacketBytes + 65_536
	// MaxRoutes is the most routes a card lists; zero routes close it.
	MaxRoutes = 8
	// MinParts and MaxParts bound a message's parts.
	MinParts = 1
	MaxParts = 32
	// MaxSubjectChars bounds a subject, in code points.
	MaxSubjectChars = 1024
	// FrameBlock is the plaintext block: frames are padded to a multiple.
	FrameBlock = 1024
	// MinCiphertextBytes is the smallest ciphertext: one block plus the
	// 16-byte AEAD tag. Every ciphertext length is 16 modulo FrameBlock.
	MinCiphertextBytes = FrameBlock + 16
	// IDBytes is the length of a mailbox, thread and message ID.
	IDBytes = 16
)

// Relay defaults (MailRelayStore).
const (
	// DefaultRelayMaxPackets and DefaultRelayMaxBytes are the per-mailbox
	// storage quotas of the SDK relay: 10 000 packets and 64 MiB.
	DefaultRelayMaxPackets = 10_000
	DefaultRelayMaxBytes   = 64 * MaxPacketBytes
	// MaxListLimit is the largest page a relay serves; DefaultListLimit the
	// page when none is asked for.
	MaxListLimit     = 1000
	DefaultListLimit = 100
)

// Connector defaults (crate src/local_connector/mail_tools.rs).
const (
	// DefaultCardTTL is a new card's lifetime: 30 days.
	DefaultCardTTL = MaxTTL
	// DefaultReceiveWindow is receive_until - expires_at of a new card.
	DefaultReceiveWindow = MaxTTL
	// DefaultCardPacketBytes is a new mailbox's max_packet_bytes.
	DefaultCardPacketBytes = 262_144
	// DefaultMessageTTL is a letter's lifetime, capped at the card's
	// receive_until: 7 days.
	DefaultMessageTTL int64 = 7 * 86_400_000
	// SyncMaxPages and SyncPageLimit bound one sync's reading of one route.
	SyncMaxPages  = 10
	SyncPageLimit = 100
	// SummaryMaxChars bounds an inbox summary, in code points.
	SummaryMaxChars = 160
)

// PinLifetime is how long a card pin is kept after the pinned card's
// created_at: by then every card of the mailbox signed before it has
// expired (MaxTTL + FutureSkew).
const PinLifetime = MaxTTL + FutureSkew
