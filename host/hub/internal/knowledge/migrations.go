package knowledge

import "apconnect/host/hub/internal/hubdb"

// migrations is the knowledge group of hub.db.
func migrations() []hubdb.Migration {
	return []hubdb.Migration{
		{Version: 1, Name: "knowledge events, links and the lexical index", SQL: schemaV1},
	}
}

// schemaV1 holds the accepted Knowledge events and what the reads filter
// on. Knowledge events are not live writes: they are not recorded in
// accepted_envelopes and never touch the nonce cache (Agent Knowledge 8.1).
const schemaV1 = `
-- One row per accepted event. seq is allocated in the serialized write
-- transaction that commits the event (AUTOINCREMENT: never reused, even if
-- rows were ever removed), so every seq up to MAX(seq) has committed and a
-- checkpoint read in one read transaction covers only committed records.
-- record is the acceptance record {envelope, accepted_at, seq} in JCS.
-- kind is set for publications, verdict for assessments, language (ASCII
-- lowercased) for publications; '' otherwise.
CREATE TABLE knowledge_events (
	seq         INTEGER PRIMARY KEY AUTOINCREMENT,
	hash        TEXT    NOT NULL UNIQUE,
	type        TEXT    NOT NULL,
	actor       TEXT    NOT NULL,
	nonce       INTEGER NOT NULL,
	kind        TEXT    NOT NULL DEFAULT '',
	verdict     TEXT    NOT NULL DEFAULT '',
	language    TEXT    NOT NULL DEFAULT '',
	created_at  INTEGER NOT NULL,
	accepted_at INTEGER NOT NULL,
	record      BLOB    NOT NULL
) STRICT;
CREATE INDEX knowledge_events_actor ON knowledge_events (actor, seq);
CREATE INDEX knowledge_events_type ON knowledge_events (type, seq);
CREATE INDEX knowledge_events_kind ON knowledge_events (kind, seq) WHERE kind != '';

-- The dependency edges of each event: a publication's relations (relation
-- is the relation kind) and the target of an assessment or retraction
-- (relation is the event type).
CREATE TABLE knowledge_links (
	target   TEXT    NOT NULL,
	relation TEXT    NOT NULL,
	seq      INTEGER NOT NULL REFERENCES knowledge_events (seq),
	PRIMARY KEY (target, relation, seq)
) STRICT, WITHOUT ROWID;
CREATE INDEX knowledge_links_relation ON knowledge_links (relation, seq);

-- A publication's tags, and the profile digests of a publication or an
-- assessment.
CREATE TABLE knowledge_tags (
	tag TEXT    NOT NULL,
	seq INTEGER NOT NULL REFERENCES knowledge_events (seq),
	PRIMARY KEY (tag, seq)
) STRICT, WITHOUT ROWID;
CREATE TABLE knowledge_profiles (
	digest TEXT    NOT NULL,
	seq    INTEGER NOT NULL REFERENCES knowledge_events (seq),
	PRIMARY KEY (digest, seq)
) STRICT, WITHOUT ROWID;

-- The lexical index, rowid = seq: the searchable fields of each event,
-- ASCII-lowercased and joined by line feeds (a term never holds ASCII white
-- space, so it matches the joined text exactly when it matches one field).
-- The trigram tokenizer serves substrings of three or more characters; it
-- only finds candidates, every one of which is checked with the rule.
CREATE VIRTUAL TABLE knowledge_text USING fts5(body, tokenize = 'trigram case_sensitive 1');
`
