package profile

import "apconnect/host/hub/internal/hubdb"

// migrations is the profile group of hub.db. Version 1 is the profiles
// table as legacy hub.db version 1 created it (beside the shared tables).
func migrations() []hubdb.Migration {
	return []hubdb.Migration{
		{Version: 1, Name: "agent profiles", SQL: schemaV1},
	}
}

const schemaV1 = `
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
