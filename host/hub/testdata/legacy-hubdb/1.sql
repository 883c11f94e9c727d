
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
