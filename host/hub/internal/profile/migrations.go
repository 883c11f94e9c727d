package profile

import "apconnect/host/hub/internal/hubdb"

// migrations is the profile group of hub.db. Version 1 is the profiles
// table as legacy hub.db version 1 created it (beside the shared tables).
func migrations() []hubdb.Migration {
	return []hubdb.Migration{
		{Version: 1, Name: "agent profiles", SQL: schemaV1},
		{Version: 2, Name: "profile history index", SQL: historyIndexV2},
	}
}

// historyIndexV2 indexes the accepted profile.update envelopes by actor and
// nonce, for history, and no other protocol's envelope (which the shared
// index it replaces, dropped by shared migration 2, held too). The
// predicate names the protocol and type as literals, and historySQL
// repeats them as literals, so that SQLite can tell the query is within
// the index (a bound parameter would not show it); TestHistoryUsesItsIndex
// reads the plan.
const historyIndexV2 = `
CREATE INDEX profile_history ON accepted_envelopes (actor, nonce)
	WHERE protocol = 'agent-profile/1.0' AND type = 'profile.update';
`

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
