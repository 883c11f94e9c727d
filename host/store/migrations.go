package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"apconnect/host/internal/sqlitedb"
)

// Migration is one forward-only schema step (see sqlitedb.Migration).
type Migration = sqlitedb.Migration

// The database of one Agent ID keeps one forward-only migration history per
// group (sqlitedb.MigrateGroups): the engine's (core) and each protocol's,
// so a protocol's tables are its own steps and adding a protocol adds a
// group, not a step to a shared list. Groups are applied in this order.
func groups() []sqlitedb.Group {
	return []sqlitedb.Group{
		{Name: "core", Migrations: coreMigrations},
		{Name: "discourse", Migrations: discourseMigrations},
		{Name: "profile", Migrations: profileMigrations},
		{Name: "ops", Migrations: opsMigrations},
		{Name: "wake", Migrations: wakeMigrations},
		{Name: "mail", Migrations: mailMigrations},
		{Name: "knowledge", Migrations: knowledgeMigrations},
		{Name: "delegation", Migrations: delegationMigrations},
	}
}

var coreMigrations = []Migration{
	{Version: 1, Name: "connector state", SQL: coreV1},
	{Version: 2, Name: "inbox items with or without a room", SQL: coreV2},
}

var discourseMigrations = []Migration{
	{Version: 1, Name: "rooms", SQL: discourseV1},
	{Version: 2, Name: "pending own join requests", SQL: discourseV2},
	{Version: 3, Name: "re-verify rooms under the 0.12.6 head rule", SQL: reverifyV3},
	{Version: 4, Name: "room watches", SQL: watchesV4},
	{Version: 5, Name: "envelope index", SQL: envelopesV5},
}

var profileMigrations = []Migration{
	{Version: 1, Name: "pinned profiles", SQL: profileV1},
}

// legacyMigrations is the single history stores had before groups; an
// existing store at legacy version n is mapped once to legacy.Steps[n-1].
var legacyMigrations = []Migration{
	{Version: 1, Name: "connector state", SQL: legacyCoreV1 + discourseV1 + profileV1},
	{Version: 2, Name: "pending own join requests", SQL: discourseV2},
	{Version: 3, Name: "re-verify rooms under the 0.12.6 head rule", SQL: reverifyV3},
	{Version: 4, Name: "room watches", SQL: watchesV4},
	{Version: 5, Name: "envelope index", SQL: envelopesV5},
}

// migrateSchema brings a database to the current schema (tests replace it
// to build a store of a legacy version).
var migrateSchema = func(ctx context.Context, tx *sql.Tx) error {
	return sqlitedb.MigrateGroups(ctx, tx, groups(), legacy)
}

var legacy = sqlitedb.Legacy{Steps: [][]sqlitedb.GroupVersion{
	{{Group: "core", Version: 1}, {Group: "discourse", Version: 1}, {Group: "profile", Version: 1}},
	{{Group: "discourse", Version: 2}},
	{{Group: "discourse", Version: 3}},
	{{Group: "discourse", Version: 4}},
	{{Group: "discourse", Version: 5}},
}}

// coreV2 lets an inbox item have no room (a letter): room becomes optional
// and source names what raised an item that has none ("" for a room's).
// SQLite cannot drop NOT NULL in place, so the table is rebuilt. The room
// is a plain key: the engine's inbox does not depend on the Discourse
// group's table (rooms are never deleted, so the old cascade never ran).
const coreV2 = `
CREATE TABLE inbox_v2 (
	rid        INTEGER PRIMARY KEY,          -- insertion order
	id         TEXT    NOT NULL UNIQUE,
	room       INTEGER,                      -- the room's key (rooms.id); NULL for an item of no room
	source     TEXT    NOT NULL DEFAULT '',  -- what raised an item of no room (mail:<mailbox_id>)
	kind       TEXT    NOT NULL,
	seq        INTEGER NOT NULL DEFAULT 0,
	event_id   TEXT    NOT NULL DEFAULT '',
	prio       INTEGER NOT NULL,             -- 0 high, 1 normal, 2 low
	state      TEXT    NOT NULL,
	until      INTEGER NOT NULL DEFAULT 0,   -- claim lease or deferral end
	session    TEXT    NOT NULL DEFAULT '',  -- claiming MCP session
	created_at INTEGER NOT NULL,
	item       BLOB    NOT NULL
) STRICT;
INSERT INTO inbox_v2 (rid, id, room, kind, seq, event_id, prio, state, until, session, created_at, item)
	SELECT rid, id, room, kind, seq, event_id, prio, state, until, session, created_at, item FROM inbox;
DROP TABLE inbox;
ALTER TABLE inbox_v2 RENAME TO inbox;
CREATE INDEX inbox_ready ON inbox (state, prio, rid);
CREATE INDEX inbox_room ON inbox (room, state, prio, rid);
CREATE INDEX inbox_kind ON inbox (state, kind, prio, rid);
CREATE INDEX inbox_until ON inbox (state, until);
CREATE INDEX inbox_seq ON inbox (room, seq);
CREATE INDEX inbox_source ON inbox (source, state) WHERE source != '';
`

// discourseV2 indexes the agent's own pending join requests.
const discourseV2 = `
CREATE INDEX join_requests_own_pending ON join_requests (room) WHERE own = 1 AND consumed = 0 AND status = 'pending';
`

// envelopesV5 indexes the event hash of every verified record per room, for
// the whole verified history (the record window is pruned, the index is
// not): a reader refuses a history in which two records carry one signed
// envelope. A room whose window still holds its whole verified history,
// each envelope once, is indexed from it; every other room with verified
// records forgets its derived state as migration 3 does, so the next sync
// verifies it again from seq 1 and indexes it.
const envelopesV5 = `
CREATE TABLE room_envelopes (
	room INTEGER NOT NULL REFERENCES rooms (id) ON DELETE CASCADE,
	hash TEXT    NOT NULL, -- envelope hash (event ID)
	seq  INTEGER NOT NULL, -- the record that carries it
	PRIMARY KEY (room, hash)
) STRICT, WITHOUT ROWID;
INSERT INTO room_envelopes (room, hash, seq)
	SELECT e.room, e.event_id, e.seq FROM events e JOIN rooms r ON r.id = e.room
	WHERE r.synced_seq > 0 AND (SELECT COUNT(DISTINCT x.event_id) FROM events x WHERE x.room = r.id AND x.seq <= r.synced_seq) = r.synced_seq;
DELETE FROM events WHERE room IN (SELECT id FROM rooms WHERE synced_seq > 0 AND id NOT IN (SELECT room FROM room_envelopes));
DELETE FROM presented WHERE room IN (SELECT id FROM rooms WHERE synced_seq > 0 AND id NOT IN (SELECT room FROM room_envelopes));
UPDATE rooms SET snapshot = NULL, head_seq = 0, head_hash = '', synced_seq = 0, synced_hash = '', oldest_seq = 0,
	fail_seq = 0, fail_code = '', fail_message = '', failed_at = 0, active_turn = NULL
	WHERE synced_seq > 0 AND id NOT IN (SELECT room FROM room_envelopes);
`

// watchesV4 keeps the custom event types the agent watches per room
// (agent_protocols_room_watch): their records become room.event.custom
// inbox items, and a room with watches is followed live without joining.
const watchesV4 = `
CREATE TABLE room_watches (
	room  INTEGER PRIMARY KEY REFERENCES rooms (id) ON DELETE CASCADE,
	types BLOB    NOT NULL, -- JSON array of event type names, never empty
	updated_at INTEGER NOT NULL
) STRICT;
`

// reverifyV3 forgets every room's derived state — snapshot, head, record
// window and timeline, verification mark, presented heads — so the next sync
// verifies the history again from seq 1. Stores written before it computed
// the room head under the 0f87fee rule (messages moved it) and kept type
// definitions with a version; the current rules derive both differently.
// Read cursors, inbox items (their ids do not change, so acknowledged items
// stay acknowledged), drafts, join requests, statuses, profiles, the nonce
// and the outbox are kept.
const reverifyV3 = `
DELETE FROM events;
DELETE FROM presented;
UPDATE rooms SET snapshot = NULL, head_seq = 0, head_hash = '', synced_seq = 0, synced_hash = '', oldest_seq = 0,
	fail_seq = 0, fail_code = '', fail_message = '', failed_at = 0, active_turn = NULL;
`

// coreV1 is the engine's part of legacy migration 1: facts, the nonce, the
// discovery cache, the inbox, MCP sessions and the outbox. Timestamps are
// INTEGER Unix ms. (The inbox references rooms: a room's items go with it;
// core migration 2 makes the room optional.)
const coreV1 = coreV1Start + inboxV1 + coreV1End

// legacyCoreV1 is coreV1 as legacy migration 1 wrote it: the inbox
// referenced the Discourse group's rooms table. Core migration 2 rebuilds
// either form into the same table (a fresh database applies the core group
// before the Discourse group exists, so its core 1 cannot reference it).
const legacyCoreV1 = coreV1Start + inboxV1Legacy + coreV1End

const coreV1Start = `
-- Key/value facts about the database: agent_id, counters.
CREATE TABLE meta (
	key   TEXT PRIMARY KEY,
	value ANY
) STRICT;

-- The Agent Identity nonce sequence of this Agent ID, shared by every
-- service: the last nonce handed out. Allocation reads and bumps it in one
-- IMMEDIATE transaction, so no two writers (threads or processes) get the
-- same nonce.
CREATE TABLE nonce (
	id   INTEGER PRIMARY KEY CHECK (id = 1),
	last INTEGER NOT NULL
) STRICT;
INSERT INTO nonce (id, last) VALUES (1, 0);

-- Discovery cache of configured hosts (for hosts_list).
CREATE TABLE hosts (
	host       TEXT PRIMARY KEY,
	discovery  BLOB,
	checked_at INTEGER NOT NULL
) STRICT;

`

const inboxV1 = `
-- Inbox items. id is derived from (host, room_id, kind, seq, event_id), so
-- inserting an item twice is a no-op and an acknowledged item never comes
-- back. state: pending, claimed, deferred, handled, dismissed.
CREATE TABLE inbox (
	rid        INTEGER PRIMARY KEY,          -- insertion order
	id         TEXT    NOT NULL UNIQUE,
	room       INTEGER NOT NULL, -- the room's key (rooms.id of the Discourse tables)
	kind       TEXT    NOT NULL,
	seq        INTEGER NOT NULL DEFAULT 0,
	event_id   TEXT    NOT NULL DEFAULT '',
	prio       INTEGER NOT NULL,             -- 0 high, 1 normal, 2 low
	state      TEXT    NOT NULL,
	until      INTEGER NOT NULL DEFAULT 0,   -- claim lease or deferral end
	session    TEXT    NOT NULL DEFAULT '',  -- claiming MCP session
	created_at INTEGER NOT NULL,
	item       BLOB    NOT NULL
) STRICT;
CREATE INDEX inbox_ready ON inbox (state, prio, rid);
CREATE INDEX inbox_room ON inbox (room, state, prio, rid);
CREATE INDEX inbox_kind ON inbox (state, kind, prio, rid);
CREATE INDEX inbox_until ON inbox (state, until);
CREATE INDEX inbox_seq ON inbox (room, seq);

`

const inboxV1Legacy = `
-- Inbox items. id is derived from (host, room_id, kind, seq, event_id), so
-- inserting an item twice is a no-op and an acknowledged item never comes
-- back. state: pending, claimed, deferred, handled, dismissed.
CREATE TABLE inbox (
	rid        INTEGER PRIMARY KEY,          -- insertion order
	id         TEXT    NOT NULL UNIQUE,
	room       INTEGER NOT NULL REFERENCES rooms (id) ON DELETE CASCADE,
	kind       TEXT    NOT NULL,
	seq        INTEGER NOT NULL DEFAULT 0,
	event_id   TEXT    NOT NULL DEFAULT '',
	prio       INTEGER NOT NULL,             -- 0 high, 1 normal, 2 low
	state      TEXT    NOT NULL,
	until      INTEGER NOT NULL DEFAULT 0,   -- claim lease or deferral end
	session    TEXT    NOT NULL DEFAULT '',  -- claiming MCP session
	created_at INTEGER NOT NULL,
	item       BLOB    NOT NULL
) STRICT;
CREATE INDEX inbox_ready ON inbox (state, prio, rid);
CREATE INDEX inbox_room ON inbox (room, state, prio, rid);
CREATE INDEX inbox_kind ON inbox (state, kind, prio, rid);
CREATE INDEX inbox_until ON inbox (state, until);
CREATE INDEX inbox_seq ON inbox (room, seq);

`

const coreV1End = `
-- MCP sessions (presented heads are Discourse's: see discourseV1).
CREATE TABLE sessions (
	id           TEXT PRIMARY KEY,
	created_at   INTEGER NOT NULL,
	last_used_at INTEGER NOT NULL
) STRICT;
CREATE INDEX sessions_used ON sessions (last_used_at);

-- Signed envelopes on their way to a service. An entry is written, with its
-- nonce, before the envelope is sent; it is closed when the outcome is
-- known. state: pending, done, failed.
CREATE TABLE outbox (
	id          INTEGER PRIMARY KEY,
	kind        TEXT    NOT NULL, -- room_create, room_event, join_request, profile_update
	service     TEXT    NOT NULL, -- host or profile service origin
	room_id     TEXT    NOT NULL DEFAULT '',
	event_id    TEXT    NOT NULL UNIQUE,
	nonce       INTEGER NOT NULL,
	base_seq    INTEGER NOT NULL DEFAULT 0,
	envelope    BLOB    NOT NULL,
	state       TEXT    NOT NULL,
	attempts    INTEGER NOT NULL DEFAULT 0,
	lease_until INTEGER NOT NULL DEFAULT 0,
	created_at  INTEGER NOT NULL,
	updated_at  INTEGER NOT NULL,
	error       TEXT    NOT NULL DEFAULT '',
	result      BLOB
) STRICT;
CREATE INDEX outbox_state ON outbox (state, id);
`

// discourseV1 is the Agent Discourse part of legacy migration 1: rooms,
// their verified record windows, presented heads, drafts, join requests
// and statuses.
const discourseV1 = `
-- One row per (host, room_id) known locally.
CREATE TABLE rooms (
	id            INTEGER PRIMARY KEY,
	host          TEXT    NOT NULL,
	room_id       TEXT    NOT NULL,
	snapshot      BLOB,                       -- adp.Room JSON; NULL until the genesis record is verified
	head_seq      INTEGER NOT NULL DEFAULT 0, -- verified room head
	head_hash     TEXT    NOT NULL DEFAULT '',
	synced_seq    INTEGER NOT NULL DEFAULT 0, -- latest verified record: the link the next record must follow
	synced_hash   TEXT    NOT NULL DEFAULT '',
	remote_seq    INTEGER NOT NULL DEFAULT 0, -- latest seq the host advertised
	oldest_seq    INTEGER NOT NULL DEFAULT 0, -- oldest record kept in the window
	subscribed    INTEGER NOT NULL DEFAULT 0,
	read_seq      INTEGER NOT NULL DEFAULT 0, -- read cursor of the Agent ID
	pending_inbox INTEGER NOT NULL DEFAULT 0, -- inbox items of this room in state pending
	fail_seq      INTEGER NOT NULL DEFAULT 0, -- seq of the record that failed verification; 0 when clean
	fail_code     TEXT    NOT NULL DEFAULT '',
	fail_message  TEXT    NOT NULL DEFAULT '',
	failed_at     INTEGER NOT NULL DEFAULT 0,
	active_turn   BLOB,                       -- ActiveTurn JSON, NULL when none
	resource      BLOB,                       -- latest room resource read from the host
	closed        TEXT    NOT NULL DEFAULT '', -- ended or cancelled by a record
	start_time    INTEGER NOT NULL DEFAULT 0,
	end_time      INTEGER NOT NULL DEFAULT 0,
	self_role     TEXT    NOT NULL DEFAULT '',
	self_state    TEXT    NOT NULL DEFAULT '', -- '', active, left, removed, banned
	is_creator    INTEGER NOT NULL DEFAULT 0,
	statuses_at   INTEGER NOT NULL DEFAULT 0, -- when the status list was last read whole
	opened_at     INTEGER NOT NULL,
	updated_at    INTEGER NOT NULL,
	UNIQUE (host, room_id)
) STRICT;
CREATE INDEX rooms_room_id ON rooms (room_id);
CREATE INDEX rooms_live ON rooms (self_state, subscribed);

-- The verified record window of each room, with its timeline item.
CREATE TABLE events (
	id       INTEGER PRIMARY KEY,
	room     INTEGER NOT NULL REFERENCES rooms (id) ON DELETE CASCADE,
	seq      INTEGER NOT NULL,
	hash     TEXT    NOT NULL, -- record hash
	event_id TEXT    NOT NULL, -- envelope hash
	type     TEXT    NOT NULL,
	actor    TEXT    NOT NULL, -- '' for a redacted record
	head_seq  INTEGER NOT NULL, -- the room head after this record
	head_hash TEXT    NOT NULL,
	record   BLOB    NOT NULL, -- the server record, canonical JSON
	item     BLOB    NOT NULL, -- the timeline item JSON (without record)
	UNIQUE (room, seq)
) STRICT;
CREATE INDEX events_actor ON events (room, actor, seq);
CREATE INDEX events_event_id ON events (room, event_id);

-- The head most recently presented to each MCP session per room.
CREATE TABLE presented (
	session TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	room    INTEGER NOT NULL REFERENCES rooms (id) ON DELETE CASCADE,
	seq     INTEGER NOT NULL,
	hash    TEXT    NOT NULL,
	PRIMARY KEY (session, room)
) STRICT, WITHOUT ROWID;
CREATE INDEX presented_room ON presented (room);

-- Held drafts: unsigned write inputs waiting for the agent's decision.
CREATE TABLE drafts (
	rid        INTEGER PRIMARY KEY,
	id         TEXT    NOT NULL UNIQUE,
	room       INTEGER NOT NULL REFERENCES rooms (id) ON DELETE CASCADE,
	kind       TEXT    NOT NULL, -- message or event
	created_at INTEGER NOT NULL,
	base_seq   INTEGER NOT NULL,
	base_hash  TEXT    NOT NULL,
	reason     TEXT    NOT NULL,
	input      BLOB    NOT NULL
) STRICT;
CREATE INDEX drafts_room ON drafts (room, rid);

-- Join requests: the agent's own (own = 1) and those it reviews.
CREATE TABLE join_requests (
	room       INTEGER NOT NULL REFERENCES rooms (id) ON DELETE CASCADE,
	id         TEXT    NOT NULL,
	own        INTEGER NOT NULL,
	applicant  TEXT    NOT NULL,
	role       TEXT    NOT NULL,
	status     TEXT    NOT NULL,
	expires_at INTEGER NOT NULL DEFAULT 0,
	consumed   INTEGER NOT NULL DEFAULT 0, -- own approved request already turned into membership
	resource   BLOB    NOT NULL,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	PRIMARY KEY (room, id)
) STRICT;
CREATE INDEX join_requests_own ON join_requests (room, own, created_at);

-- Transient agent statuses (cache of the host's).
CREATE TABLE statuses (
	room       INTEGER NOT NULL REFERENCES rooms (id) ON DELETE CASCADE,
	agent_id   TEXT    NOT NULL,
	expires_at INTEGER NOT NULL,
	status     BLOB    NOT NULL,
	PRIMARY KEY (room, agent_id)
) STRICT, WITHOUT ROWID;
`

// profileV1 is the Agent Profile part of legacy migration 1: pinned
// profiles.
const profileV1 = `
-- Verified profiles, pinned to the greatest nonce seen per Agent ID.
CREATE TABLE profiles (
	agent_id   TEXT PRIMARY KEY,
	service    TEXT    NOT NULL,
	nonce      INTEGER NOT NULL,
	event_id   TEXT    NOT NULL,
	document   BLOB    NOT NULL,
	envelope   BLOB    NOT NULL,
	fetched_at INTEGER NOT NULL
) STRICT;
`

// migrate applies pending migrations and checks the database belongs to
// this Agent ID, in one transaction.
func (s *Store) migrate(ctx context.Context) error {
	return s.Write(ctx, func(tx *Tx) error {
		if err := migrateSchema(ctx, tx.tx); err != nil {
			return err
		}
		var owner string
		err := tx.tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'agent_id'`).Scan(&owner)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			_, err = tx.tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('agent_id', ?)`, s.agentID)
			return err
		case err != nil:
			return err
		case owner != s.agentID:
			return fmt.Errorf("database belongs to %s, not %s", owner, s.agentID)
		}
		return nil
	})
}

// counter reads an integer counter from meta (0 when absent).
func (q Q) counter(ctx context.Context, key string) (int64, error) {
	var v sql.NullInt64
	err := q.queryRow(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return v.Int64, err
}

// addCounter adds delta to a meta counter and returns the new value.
func (t *Tx) addCounter(ctx context.Context, key string, delta int64) (int64, error) {
	var v int64
	err := t.queryRow(ctx, `INSERT INTO meta (key, value) VALUES (?1, ?2)
		ON CONFLICT (key) DO UPDATE SET value = value + ?2 RETURNING value`, key, delta).Scan(&v)
	return v, err
}
