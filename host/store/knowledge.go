package store

import (
	"context"
	"encoding/json"
	"strconv"
)

// Agent Knowledge's local record: what the agent submitted. A submission's
// signed envelope lives in the outbox only until it is resolved and pruned,
// so host/connector/knowledge also records each submission once a service
// accepted it — its id, type, what it is about and every service's answer
// — for the operator's view. Nothing reads it back into a tool.

var knowledgeMigrations = []Migration{
	{Version: 1, Name: "knowledge submitted", SQL: knowledgeV1},
}

const knowledgeV1 = `
CREATE TABLE knowledge_submitted (
	id           TEXT    PRIMARY KEY, -- the event hash
	type         TEXT    NOT NULL,    -- knowledge.publish, knowledge.assess, knowledge.retract
	kind         TEXT    NOT NULL DEFAULT '', -- publish: the payload's kind
	title        TEXT    NOT NULL DEFAULT '', -- publish: its title; assess: its summary; retract: its reason
	target       TEXT    NOT NULL DEFAULT '', -- assess, retract: the event it is about
	verdict      TEXT    NOT NULL DEFAULT '', -- assess: its verdict
	created_at   INTEGER NOT NULL,            -- the event's created_at
	submitted_at INTEGER NOT NULL,            -- first recorded (a service accepted it)
	updated_at   INTEGER NOT NULL,
	results      BLOB    NOT NULL             -- JSON array of KnowledgeResult, by service
) STRICT;
CREATE INDEX knowledge_submitted_at ON knowledge_submitted (submitted_at);
`

// KnowledgeSubmission is one submission the agent made that a service
// accepted, with what each service answered.
type KnowledgeSubmission struct {
	ID   string
	Type string
	// Kind and Title (the summary of an assessment, the reason of a
	// retraction), Target and Verdict are what it is about, from its
	// payload ("" when its type has none).
	Kind, Title, Target, Verdict string
	CreatedAt                    int64
	SubmittedAt                  int64
	UpdatedAt                    int64
	Results                      []KnowledgeResult
}

// KnowledgeResult is one service's answer to a submission: accepted (Seq
// and AcceptedAt) or refused or unknown (Code and Message).
type KnowledgeResult struct {
	Service    string `json:"service"`
	Seq        int64  `json:"seq,omitempty"`
	AcceptedAt int64  `json:"accepted_at,omitempty"`
	Code       string `json:"code,omitempty"`
	Message    string `json:"message,omitempty"`
}

// Accepted reports whether the service accepted the submission.
func (r KnowledgeResult) Accepted() bool { return r.Code == "" }

// RecordKnowledgeSubmission records a submission at s.UpdatedAt: a new one
// as it is, one recorded before with its results merged by service — a
// service's newer answer replaces its older one, except that an error never
// replaces an acceptance (a resubmission refused after a grant was
// withdrawn does not undo what the service accepted).
func (t *Tx) RecordKnowledgeSubmission(ctx context.Context, s *KnowledgeSubmission) error {
	results := s.Results
	submitted := s.UpdatedAt
	var raw []byte
	err := t.queryRow(ctx, `SELECT submitted_at, results FROM knowledge_submitted WHERE id = ?`, s.ID).Scan(&submitted, &raw)
	switch {
	case err == nil:
		var old []KnowledgeResult
		if json.Unmarshal(raw, &old) == nil {
			results = mergeKnowledgeResults(old, s.Results)
		}
	case notFound(err) != ErrNotFound:
		return err
	}
	if results == nil {
		results = []KnowledgeResult{}
	}
	b, err := json.Marshal(results)
	if err != nil {
		return err
	}
	_, err = t.exec(ctx, `INSERT INTO knowledge_submitted (id, type, kind, title, target, verdict, created_at, submitted_at, updated_at, results)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET updated_at = excluded.updated_at, results = excluded.results`,
		s.ID, s.Type, s.Kind, s.Title, s.Target, s.Verdict, s.CreatedAt, submitted, s.UpdatedAt, b)
	return err
}

// mergeKnowledgeResults merges newer answers into older ones by service,
// in the older order, keeping an acceptance over a later error.
func mergeKnowledgeResults(old, newer []KnowledgeResult) []KnowledgeResult {
	out := append([]KnowledgeResult(nil), old...)
	for _, n := range newer {
		i := -1
		for j := range out {
			if out[j].Service == n.Service {
				i = j
			}
		}
		switch {
		case i < 0:
			out = append(out, n)
		case n.Accepted() || !out[i].Accepted():
			out[i] = n
		}
	}
	return out
}

// KnowledgeSubmissions lists the recorded submissions, the most recently
// submitted first (at most limit, capped at 500; 100 when zero).
func (q Q) KnowledgeSubmissions(ctx context.Context, limit int) ([]KnowledgeSubmission, error) {
	switch {
	case limit <= 0:
		limit = 100
	case limit > 500:
		limit = 500
	}
	rows, err := q.query(ctx, `SELECT id, type, kind, title, target, verdict, created_at, submitted_at, updated_at, results
		FROM knowledge_submitted ORDER BY submitted_at DESC, id LIMIT `+strconv.Itoa(limit))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []KnowledgeSubmission
	for rows.Next() {
		var s KnowledgeSubmission
		var raw []byte
		if err := rows.Scan(&s.ID, &s.Type, &s.Kind, &s.Title, &s.Target, &s.Verdict, &s.CreatedAt, &s.SubmittedAt, &s.UpdatedAt, &raw); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(raw, &s.Results); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
