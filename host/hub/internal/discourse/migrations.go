package discourse

import "apconnect/host/hub/internal/hubdb"

// migrations is the discourse group of hub.db: version 1 is legacy hub.db
// version 2, version 2 is legacy version 3; version 3 came after groups.
func migrations() []hubdb.Migration {
	return []hubdb.Migration{
		{Version: 1, Name: "agent discourse rooms", SQL: schemaV1},
		{Version: 2, Name: "replay rooms under the 0.12.6 head rule", SQL: `
-- Snapshots written before this step hold the room head of the 0f87fee rule
-- (messages moved it) and type definitions with a version. snapshot_seq 0
-- makes the host replay each room from its genesis record on next load and
-- write a fresh snapshot; the records themselves are unchanged.
UPDATE adp_rooms SET snapshot_seq = 0;
`},
		{Version: 3, Name: "adp_records as a rowid table", SQL: recordsRowidV3},
	}
}

// recordsRowidV3 rebuilds adp_records as an ordinary rowid table with the
// same columns, primary key and event index. As a WITHOUT ROWID table it was
// an index b-tree, whose interior cells hold whole entries: with records of
// about 900 bytes an interior page held four, so the tree grew a level for
// every fourfold growth and an insert split pages up the tree several times
// as often, writing about 3.6 pages to the write-ahead log per record. A
// rowid table keeps the records in leaves under 8-byte keys and appends in
// acceptance order; (room_id, seq) stays unique and is served by the
// primary key's index. The copy keeps each room's records together, in seq
// order.
const recordsRowidV3 = `
CREATE TABLE adp_records_rowid (
	room_id     TEXT    NOT NULL REFERENCES adp_rooms (id),
	seq         INTEGER NOT NULL,
	hash        TEXT    NOT NULL,
	event_hash  TEXT    NOT NULL,
	type        TEXT    NOT NULL,
	actor       TEXT    NOT NULL,
	accepted_at INTEGER NOT NULL,
	redacted    INTEGER NOT NULL DEFAULT 0,
	record      BLOB    NOT NULL,
	PRIMARY KEY (room_id, seq)
) STRICT;
INSERT INTO adp_records_rowid (room_id, seq, hash, event_hash, type, actor, accepted_at, redacted, record)
	SELECT room_id, seq, hash, event_hash, type, actor, accepted_at, redacted, record FROM adp_records ORDER BY room_id, seq;
DROP TABLE adp_records;
ALTER TABLE adp_records_rowid RENAME TO adp_records;
CREATE UNIQUE INDEX adp_records_event ON adp_records (event_hash);
`

// schemaV1 holds the Agent Discourse host's state: rooms with their
// materialized snapshots, every server record (the hub is the archive
// source), join requests, external pack documents and the index behind
// GET /v1/me/rooms. Transient agent status is not stored (ADP 16.4).
const schemaV1 = `
-- One row per room. snapshot is the adp.Room JSON after the record at
-- snapshot_seq; the records after it are replayed on load, so a write costs
-- the same however old the room is. The discovery columns mirror the
-- contract (refreshed with every snapshot, which every contract write takes)
-- and last_seq/last_accepted_at the latest record.
CREATE TABLE adp_rooms (
	id               TEXT    PRIMARY KEY,
	creator          TEXT    NOT NULL,
	visibility       TEXT    NOT NULL,
	topic            TEXT    NOT NULL,
	agenda           TEXT    NOT NULL,
	tags             TEXT    NOT NULL, -- JSON array of strings
	language         TEXT    NOT NULL,
	start_time       INTEGER NOT NULL, -- effective, Unix ms
	end_time         INTEGER NOT NULL, -- effective, Unix ms
	closed           TEXT,             -- 'ended' (room.close) or 'cancelled' (room.cancel)
	created_at       INTEGER NOT NULL, -- accepted_at of room.create
	last_seq         INTEGER NOT NULL,
	last_accepted_at INTEGER NOT NULL,
	create_response  BLOB    NOT NULL, -- the room.create response, for exact resubmission
	snapshot         BLOB    NOT NULL,
	snapshot_seq     INTEGER NOT NULL,
	archived_at      INTEGER           -- generated_at of the archive once the room ended
) STRICT;
CREATE INDEX adp_rooms_discovery ON adp_rooms (visibility, start_time);

-- Every server record (ADP 14) as served: canonical chain fields and the
-- envelope exactly as submitted (compacted), or its redacted form (14.1).
CREATE TABLE adp_records (
	room_id     TEXT    NOT NULL REFERENCES adp_rooms (id),
	seq         INTEGER NOT NULL,
	hash        TEXT    NOT NULL,
	event_hash  TEXT    NOT NULL,
	type        TEXT    NOT NULL,
	actor       TEXT    NOT NULL,
	accepted_at INTEGER NOT NULL,
	redacted    INTEGER NOT NULL DEFAULT 0,
	record      BLOB    NOT NULL,
	PRIMARY KEY (room_id, seq)
) STRICT, WITHOUT ROWID;
CREATE UNIQUE INDEX adp_records_event ON adp_records (event_hash);

-- Join requests (ADP 10): never records; held for review. status is as
-- stored: a pending request whose expires_at has passed reads as expired.
CREATE TABLE adp_join_requests (
	id              TEXT    PRIMARY KEY, -- the request's event ID
	room_id         TEXT    NOT NULL REFERENCES adp_rooms (id),
	applicant       TEXT    NOT NULL,
	role            TEXT    NOT NULL,
	status          TEXT    NOT NULL,
	expires_at      INTEGER NOT NULL,
	created_at      INTEGER NOT NULL, -- accepted_at
	reviewed_by     TEXT,
	reviewed_at     INTEGER,
	review_event_id TEXT,
	envelope        BLOB    NOT NULL
) STRICT;
CREATE INDEX adp_join_requests_room ON adp_join_requests (room_id, created_at, id);
CREATE INDEX adp_join_requests_applicant ON adp_join_requests (applicant, room_id, status);

-- External pack documents (ADP 12.5) as fetched, byte for byte, so archives
-- ship them and rooms replay offline.
CREATE TABLE adp_packs (
	url      TEXT    NOT NULL,
	digest   TEXT    NOT NULL,
	document BLOB    NOT NULL,
	added_at INTEGER NOT NULL,
	PRIMARY KEY (url, digest)
) STRICT;

-- Agents related to a room (creator, members past and present, invitees,
-- applicants): the candidate set of GET /v1/me/rooms. The relation itself is
-- computed from the room state and join requests when listing.
CREATE TABLE adp_room_agents (
	agent_id TEXT NOT NULL,
	room_id  TEXT NOT NULL REFERENCES adp_rooms (id),
	PRIMARY KEY (agent_id, room_id)
) STRICT, WITHOUT ROWID;
`
