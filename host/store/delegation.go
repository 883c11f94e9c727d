package store

import (
	"context"
	"encoding/json"
	"strconv"
)

// Agent Delegation's local record: the credentials the agent has seen that
// it signed an event of (a grant or revocation through its tools, or the
// latest event of one it read) or that name it as subject, as a Delegation
// tool last returned them, with the verdict of the last check. The
// services hold the credentials; this is what the agent knows of them, for
// the operator's view. Nothing reads it back into a tool: every check
// reads the service again.

var delegationMigrations = []Migration{
	{Version: 1, Name: "delegation credentials seen", SQL: delegationV1},
}

const delegationV1 = `
CREATE TABLE delegation_credentials (
	service     TEXT    NOT NULL, -- the principal's delegation service (origin)
	id          TEXT    NOT NULL, -- the credential id
	principal   TEXT    NOT NULL,
	subject     TEXT    NOT NULL,
	controller  TEXT    NOT NULL, -- the actor of its latest event
	event_id    TEXT    NOT NULL, -- its latest event
	status      TEXT    NOT NULL, -- as the service last reported it
	scopes      TEXT    NOT NULL, -- JSON array
	audiences   TEXT    NOT NULL, -- JSON array
	expires_at  INTEGER NOT NULL DEFAULT 0, -- 0: none
	accepted_at INTEGER NOT NULL DEFAULT 0,
	signed      INTEGER NOT NULL DEFAULT 0, -- 1 once this agent signed an event of it
	source      TEXT    NOT NULL, -- the tool that last returned it: grant, revoke, check, list
	seen_at     INTEGER NOT NULL,
	-- The last check's verdict, while it is about the latest event.
	audience    TEXT    NOT NULL DEFAULT '',
	verified    INTEGER NOT NULL DEFAULT 0,
	usable      INTEGER NOT NULL DEFAULT 0,
	reasons     TEXT    NOT NULL DEFAULT '[]', -- JSON array
	checked_at  INTEGER NOT NULL DEFAULT 0,    -- 0: not checked since its latest event
	PRIMARY KEY (service, id)
) STRICT, WITHOUT ROWID;
CREATE INDEX delegation_credentials_seen ON delegation_credentials (seen_at);
`

// Sources of a recorded credential (DelegationCredential.Source).
const (
	DelegationFromGrant  = "grant"
	DelegationFromRevoke = "revoke"
	DelegationFromCheck  = "check"
	DelegationFromList   = "list"
)

// DelegationCredential is a credential as the agent last saw it.
type DelegationCredential struct {
	Service, ID                 string
	Principal, Subject          string
	Controller, EventID, Status string
	Scopes, Audiences           []string
	ExpiresAt                   int64 // 0: none
	AcceptedAt                  int64
	// Signed: the agent signed an event of it (kept once set).
	Signed bool
	Source string
	SeenAt int64
	// Check is the verdict of the last check of its latest event (nil:
	// none). Recording a credential without one keeps the stored verdict
	// while the latest event is the same, and drops it otherwise.
	Check *DelegationVerdict
}

// DelegationVerdict is a check's verdict on a credential.
type DelegationVerdict struct {
	Audience         string
	Verified, Usable bool
	Reasons          []string
	At               int64
}

// RecordDelegationCredential records a credential the agent saw.
func (t *Tx) RecordDelegationCredential(ctx context.Context, c *DelegationCredential) error {
	scopes, _ := json.Marshal(nonNil(c.Scopes))
	audiences, _ := json.Marshal(nonNil(c.Audiences))
	var v DelegationVerdict
	checked := int64(0)
	if c.Check != nil {
		v, checked = *c.Check, 1
	}
	reasons, _ := json.Marshal(nonNil(v.Reasons))
	// ?17 is 1 when the record carries a verdict: it replaces the stored
	// one; otherwise the stored one stays only while the event is the same.
	_, err := t.exec(ctx, `INSERT INTO delegation_credentials (service, id, principal, subject, controller, event_id, status, scopes,
		audiences, expires_at, accepted_at, signed, source, seen_at, audience, verified, usable, reasons, checked_at)
		VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?18, ?19, ?20)
		ON CONFLICT (service, id) DO UPDATE SET
			audience   = CASE WHEN ?17 = 1 THEN excluded.audience WHEN event_id = excluded.event_id THEN audience ELSE '' END,
			verified   = CASE WHEN ?17 = 1 THEN excluded.verified WHEN event_id = excluded.event_id THEN verified ELSE 0 END,
			usable     = CASE WHEN ?17 = 1 THEN excluded.usable WHEN event_id = excluded.event_id THEN usable ELSE 0 END,
			reasons    = CASE WHEN ?17 = 1 THEN excluded.reasons WHEN event_id = excluded.event_id THEN reasons ELSE '[]' END,
			checked_at = CASE WHEN ?17 = 1 THEN excluded.checked_at WHEN event_id = excluded.event_id THEN checked_at ELSE 0 END,
			principal = excluded.principal, subject = excluded.subject, controller = excluded.controller,
			event_id = excluded.event_id, status = excluded.status, scopes = excluded.scopes, audiences = excluded.audiences,
			expires_at = excluded.expires_at, accepted_at = excluded.accepted_at, signed = MAX(signed, excluded.signed),
			source = excluded.source, seen_at = excluded.seen_at`,
		c.Service, c.ID, c.Principal, c.Subject, c.Controller, c.EventID, c.Status, string(scopes), string(audiences), c.ExpiresAt, c.AcceptedAt,
		boolInt(c.Signed), c.Source, c.SeenAt, v.Audience, boolInt(v.Verified), checked, boolInt(v.Usable), string(reasons), v.At)
	return err
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

const delegationColumns = `service, id, principal, subject, controller, event_id, status, scopes, audiences, expires_at,
	accepted_at, signed, source, seen_at, audience, verified, usable, reasons, checked_at`

// DelegationCredential returns the recorded credential of (service, id),
// or ErrNotFound.
func (q Q) DelegationCredential(ctx context.Context, service, id string) (*DelegationCredential, error) {
	rows, err := q.query(ctx, `SELECT `+delegationColumns+` FROM delegation_credentials WHERE service = ? AND id = ?`, service, id)
	if err != nil {
		return nil, err
	}
	out, err := scanDelegationCredentials(rows)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, ErrNotFound
	}
	return &out[0], nil
}

// DelegationCredentials lists the recorded credentials, the most recently
// seen first (at most limit, capped at 500; 100 when zero).
func (q Q) DelegationCredentials(ctx context.Context, limit int) ([]DelegationCredential, error) {
	switch {
	case limit <= 0:
		limit = 100
	case limit > 500:
		limit = 500
	}
	rows, err := q.query(ctx, `SELECT `+delegationColumns+` FROM delegation_credentials ORDER BY seen_at DESC, service, id LIMIT `+
		strconv.Itoa(limit))
	if err != nil {
		return nil, err
	}
	return scanDelegationCredentials(rows)
}

func scanDelegationCredentials(rows rowsScanner) ([]DelegationCredential, error) {
	defer rows.Close()
	var out []DelegationCredential
	for rows.Next() {
		var c DelegationCredential
		var v DelegationVerdict
		var scopes, audiences, reasons string
		if err := rows.Scan(&c.Service, &c.ID, &c.Principal, &c.Subject, &c.Controller, &c.EventID, &c.Status, &scopes, &audiences,
			&c.ExpiresAt, &c.AcceptedAt, &c.Signed, &c.Source, &c.SeenAt, &v.Audience, &v.Verified, &v.Usable, &reasons, &v.At); err != nil {
			return nil, err
		}
		for _, p := range []struct {
			raw string
			dst *[]string
		}{{scopes, &c.Scopes}, {audiences, &c.Audiences}, {reasons, &v.Reasons}} {
			if err := json.Unmarshal([]byte(p.raw), p.dst); err != nil {
				return nil, err
			}
		}
		if v.At > 0 {
			c.Check = &v
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
