package hubdb

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Migration is one forward-only schema step. Versions start at 1, increase
// by exactly 1, and are never edited once released: a change is a new step.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations is the ordered schema history of hub.db. The ADP host appends
// its tables here as further steps.
var Migrations = []Migration{
	{Version: 1, Name: "live writes and agent profiles", SQL: schemaV1},
}

// schemaV1 holds the tables shared by every protocol (accepted envelopes for
// exact resubmission, the per-actor nonce cache) and the profile service's.
const schemaV1 = `
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

-- The materialized Agent Profile document of each Agent ID: the accepted
-- profile.update with the greatest nonce (Agent Profile 6). nonce is the
-- durable comparison every new update must exceed.
CREATE TABLE profiles (
	agent_id   TEXT    PRIMARY KEY,
	event_hash TEXT    NOT NULL REFERENCES accepted_envelopes (hash),
	nonce      INTEGER NOT NULL,
	updated_at INTEGER NOT NULL, -- event.created_at of that update
	document   BLOB    NOT NULL  -- the document's canonical JSON
) STRICT;
`

// migrate applies pending migrations, each in its own transaction.
func (db *DB) migrate(ctx context.Context) error {
	if _, err := db.writer.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT    NOT NULL,
		applied_at INTEGER NOT NULL
	) STRICT`); err != nil {
		return err
	}
	current, err := db.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	latest := Migrations[len(Migrations)-1].Version
	if current > latest {
		return fmt.Errorf("database schema version %d is newer than this hub knows (%d); use a newer apconnect", current, latest)
	}
	for i, m := range Migrations {
		if m.Version != i+1 {
			return fmt.Errorf("migration %q has version %d, want %d", m.Name, m.Version, i+1)
		}
		if m.Version <= current {
			continue
		}
		err := db.Write(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
				return fmt.Errorf("migration %d (%s): %w", m.Version, m.Name, err)
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
				m.Version, m.Name, time.Now().UnixMilli())
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// SchemaVersion returns the highest applied migration version (0 for none).
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v sql.NullInt64
	if err := db.writer.QueryRowContext(ctx, `SELECT MAX(version) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, err
	}
	return int(v.Int64), nil
}
