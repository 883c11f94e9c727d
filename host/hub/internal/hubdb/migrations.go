package hubdb

import (
	"context"
	"slices"

	"apconnect/host/internal/sqlitedb"
)

// Migration is one forward-only schema step (see sqlitedb.Migration).
type Migration = sqlitedb.Migration

// Group is one migration history of hub.db: the shared tables' (Shared),
// or one service's, which the service declares and the hub passes to Open.
type Group = sqlitedb.Group

// SharedGroup names the migration group of the tables every service shares.
const SharedGroup = "shared"

// Shared returns the migration group of the shared tables:
// accepted_envelopes and nonce_cache. Open applies it before every
// service's group, whose tables may reference accepted_envelopes.
func Shared() Group {
	return Group{Name: SharedGroup, Migrations: slices.Clone(sharedMigrations)}
}

var sharedMigrations = []Migration{
	{Version: 1, Name: "accepted envelopes and the nonce cache", SQL: sharedV1},
	{Version: 2, Name: "no index of every envelope by actor", SQL: sharedV2},
}

// legacy maps the single history hub.db kept before migration groups:
// version 1 held the shared tables and the profile service's, version 2
// the Agent Discourse host's, and version 3 a Discourse replay step. The
// group names are the services' (profile, discourse) and never change.
var legacy = sqlitedb.Legacy{Steps: [][]sqlitedb.GroupVersion{
	{{Group: SharedGroup, Version: 1}, {Group: "profile", Version: 1}},
	{{Group: "discourse", Version: 1}},
	{{Group: "discourse", Version: 2}},
}}

// sharedV1 holds the tables shared by every protocol: accepted envelopes
// for exact resubmission and the per-actor nonce cache. (Legacy version 1
// created them with the profile service's table, in this text.)
const sharedV1 = `
-- Every envelope the hub accepted, by any protocol, exactly as submitted
-- (compacted JSON). The hash is the event ID; a submission whose hash is
-- here is an exact resubmission (Agent Identity 6.3).
CREATE TABLE accepted_envelopes (
	hash        TEXT    PRIMARY KEY,
	protocol    TEXT    NOT NULL,
	type        TEXT    NOT NULL,
	actor       TEXT    NOT NULL,
	nonce       INTEGER NOT NULL,
	created_at  INTEGER NOT NULL, -- event.created_at, Unix ms
	accepted_at INTEGER NOT NULL, -- hub clock at first acceptance, Unix ms
	envelope    BLOB    NOT NULL
) STRICT;
CREATE INDEX accepted_envelopes_actor ON accepted_envelopes (protocol, actor, nonce);

-- The Agent Identity 6.2 nonce cache, one row per actor and shared by every
-- protocol: the greatest accepted nonce and when that entry stops counting.
CREATE TABLE nonce_cache (
	actor      TEXT    PRIMARY KEY,
	max_nonce  INTEGER NOT NULL,
	expires_at INTEGER NOT NULL -- Unix ms
) STRICT;
`

// sharedV2 drops accepted_envelopes_actor. One reader used it, the Profile
// service's history of an actor's updates, yet every envelope of every
// protocol added an entry: a page more written to the write-ahead log by
// each accepted write (about one in nine of a Discourse message's), in the
// hub's single writer. The Profile group indexes its own rows instead
// (a partial index, profile migration 2).
const sharedV2 = `
DROP INDEX accepted_envelopes_actor;
`

// SchemaVersions returns the applied version of each migration group.
func (db *DB) SchemaVersions(ctx context.Context) (map[string]int, error) {
	return sqlitedb.GroupVersions(ctx, db.reader)
}
