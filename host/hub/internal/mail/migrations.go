package mail

import "apconnect/host/hub/internal/hubdb"

// migrations is the mail group of hub.db.
func migrations() []hubdb.Migration {
	return []hubdb.Migration{
		{Version: 1, Name: "mail relay", SQL: schemaV1},
	}
}

const schemaV1 = `
-- Each mailbox the relay knows, bound to the owner of its first card, with
-- its current card (the relay keeps only the current one) and the last seq
-- it assigned to a packet.
CREATE TABLE mail_mailboxes (
	mailbox_id    TEXT    PRIMARY KEY,
	owner         TEXT    NOT NULL,
	card_hash     TEXT    NOT NULL,
	nonce         INTEGER NOT NULL,
	receive_until INTEGER NOT NULL,
	accepted_at   INTEGER NOT NULL,
	card          BLOB    NOT NULL, -- the current card envelope, canonical JSON
	last_seq      INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX mail_mailboxes_owner ON mail_mailboxes (owner, mailbox_id);
CREATE INDEX mail_mailboxes_receive ON mail_mailboxes (receive_until);

-- Accepted packets until their owner deletes them or they expire, in seq
-- order per mailbox.
CREATE TABLE mail_packets (
	mailbox_id  TEXT    NOT NULL,
	seq         INTEGER NOT NULL,
	packet_id   TEXT    NOT NULL,
	accepted_at INTEGER NOT NULL,
	expires_at  INTEGER NOT NULL, -- the header's expires_at
	size        INTEGER NOT NULL, -- len(JCS(packet))
	packet      BLOB    NOT NULL, -- the packet envelope, canonical JSON
	PRIMARY KEY (mailbox_id, seq)
) STRICT, WITHOUT ROWID;
CREATE UNIQUE INDEX mail_packets_id ON mail_packets (mailbox_id, packet_id);
CREATE INDEX mail_packets_expiry ON mail_packets (expires_at);

-- The first result of every accepted packet, until the packet expires:
-- a resent packet gets it again (delivery is idempotent), even after its
-- owner deleted it.
CREATE TABLE mail_tombstones (
	mailbox_id  TEXT    NOT NULL,
	packet_id   TEXT    NOT NULL,
	accepted_at INTEGER NOT NULL,
	expires_at  INTEGER NOT NULL,
	PRIMARY KEY (mailbox_id, packet_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX mail_tombstones_expiry ON mail_tombstones (expires_at);
`
