package delegation

import "apconnect/host/hub/internal/hubdb"

// migrations is the delegation group of hub.db.
func migrations() []hubdb.Migration {
	return []hubdb.Migration{
		{Version: 1, Name: "principals and delegation credentials", SQL: schemaV1},
	}
}

const schemaV1 = `
-- The principal documents the hub hosts at /principals/{name}, as the
-- operator wrote them (apconnect hub principal put): every member but id,
-- protocol, delegation_service and updated_at, which the hub sets when it
-- serves the document.
CREATE TABLE principals (
	name       TEXT    PRIMARY KEY,
	document   BLOB    NOT NULL, -- canonical JSON of the written members
	updated_at INTEGER NOT NULL, -- Unix ms of the latest put or retire
	created_at INTEGER NOT NULL
) STRICT;

-- The aliases the documents list, each URL naming one principal; an alias
-- under /principals/ on the hub's origin serves a copy of its document.
CREATE TABLE principal_aliases (
	url  TEXT PRIMARY KEY,
	name TEXT NOT NULL REFERENCES principals (name) ON DELETE CASCADE
) STRICT;

-- The hub's origin, as the service last started with it, so the command
-- line can name the URLs it serves.
CREATE TABLE principal_origin (
	k      INTEGER PRIMARY KEY CHECK (k = 1),
	origin TEXT    NOT NULL
) STRICT;

-- Every accepted delegation event, in acceptance order (seq), with the
-- credential as it stood after it (what an exact resubmission answers).
CREATE TABLE delegation_records (
	seq         INTEGER PRIMARY KEY AUTOINCREMENT,
	id          TEXT    NOT NULL, -- the delegation id the event names
	event_hash  TEXT    NOT NULL UNIQUE REFERENCES accepted_envelopes (hash),
	accepted_at INTEGER NOT NULL,
	credential  BLOB    NOT NULL  -- canonical JSON, checked_at = accepted_at
) STRICT;
CREATE INDEX delegation_records_by_id ON delegation_records (id, seq);

-- The current credential of each delegation id: one namespace per service,
-- whatever the principal.
CREATE TABLE delegation_credentials (
	id           TEXT    PRIMARY KEY,
	principal_id TEXT    NOT NULL,
	subject      TEXT    NOT NULL,
	seq          INTEGER NOT NULL REFERENCES delegation_records (seq),
	credential   BLOB    NOT NULL  -- canonical JSON, checked_at = accepted_at
) STRICT;
CREATE INDEX delegation_credentials_by_subject ON delegation_credentials (subject, id);
CREATE INDEX delegation_credentials_by_principal ON delegation_credentials (principal_id, id);
`
