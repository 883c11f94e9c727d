package knowledge

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"apconnect/host/identity"
	rules "apconnect/host/proto/knowledge"
)

// maxSeq is the greatest seq: seq is a safe integer (Agent Knowledge 8.3).
const maxSeq = 1<<53 - 1

// querier is what the read helpers need: a read transaction or the write
// transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// highWater returns the sequence high-water mark: the greatest seq ever
// allocated (0 before the first acceptance). Read in a read transaction it
// is that snapshot's checkpoint.
func highWater(ctx context.Context, q querier) (int64, error) {
	var seq int64
	err := q.QueryRowContext(ctx, `SELECT seq FROM sqlite_sequence WHERE name = 'knowledge_events'`).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return seq, err
}

// recordByHash returns the stored acceptance record of an event, nil when
// the service does not hold it.
func recordByHash(ctx context.Context, q querier, hash string) ([]byte, error) {
	var rec []byte
	err := q.QueryRowContext(ctx, `SELECT record FROM knowledge_events WHERE hash = ?`, hash).Scan(&rec)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return rec, err
}

// lookup returns the dependency facts of a retained event for
// rules.CheckDependencies; a database failure is kept in *failed (the
// lookup then reports the event as absent, and the caller returns the
// failure instead of the rules' verdict).
func lookup(ctx context.Context, q querier, failed *error) rules.Lookup {
	return func(id string) (rules.Target, bool) {
		var t rules.Target
		err := q.QueryRowContext(ctx, `SELECT type, actor, nonce, kind FROM knowledge_events WHERE hash = ?`, id).
			Scan(&t.Type, &t.Actor, &t.Nonce, &t.Kind)
		if err != nil {
			if !errors.Is(err, sql.ErrNoRows) && *failed == nil {
				*failed = err
			}
			return rules.Target{}, false
		}
		return t, true
	}
}

// insertEvent stores an accepted envelope with the next seq and returns its
// acceptance record (JCS) and its index text. The caller has run every
// submission check.
func insertEvent(ctx context.Context, tx *sql.Tx, env *identity.Envelope, acceptedAt int64) ([]byte, string, error) {
	hw, err := highWater(ctx, tx)
	if err != nil {
		return nil, "", err
	}
	if hw >= maxSeq {
		return nil, "", identity.NewError(rules.CodePermissionDenied, "", "the service's sequence space is exhausted")
	}
	seq := hw + 1
	rec, err := rules.NewRecord(env, acceptedAt, seq).MarshalJSON()
	if err != nil {
		return nil, "", err
	}
	ev := &env.Event
	p, _ := ev.Payload.(map[string]any)
	var kind, verdict, language string
	switch ev.Type {
	case rules.TypePublish:
		kind, language = str(p["kind"]), asciiLower(str(p["language"]))
	case rules.TypeAssess:
		verdict = str(p["verdict"])
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO knowledge_events
		(seq, hash, type, actor, nonce, kind, verdict, language, created_at, accepted_at, record)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		seq, env.Hash, ev.Type, ev.Actor, ev.Nonce, kind, verdict, language, ev.CreatedAt, acceptedAt, rec); err != nil {
		return nil, "", err
	}
	if err := insertFacets(ctx, tx, seq, ev, p); err != nil {
		return nil, "", err
	}
	body := indexText(ev)
	if _, err := tx.ExecContext(ctx, `INSERT INTO knowledge_text (rowid, body) VALUES (?, ?)`, seq, body); err != nil {
		return nil, "", err
	}
	return rec, body, nil
}

// indexText is the text the lexical index holds for an event: its
// searchable fields (ASCII-lowercased) joined by line feeds, NUL written as
// a line feed too (SQLite's FTS5 reads text as C strings). A term holds no
// ASCII white space, so a term without NUL is a substring of this text
// exactly when it is a substring of one of the fields; a term with NUL is
// never looked up in the index.
func indexText(ev *identity.Event) string {
	return strings.ReplaceAll(strings.Join(rules.SearchableFields(ev), "\n"), "\x00", "\n")
}

// insertFacets stores what the filters read beside the event: its links,
// tags and profile digests.
func insertFacets(ctx context.Context, tx *sql.Tx, seq int64, ev *identity.Event, p map[string]any) error {
	exec := func(q string, args ...any) error {
		_, err := tx.ExecContext(ctx, q, args...)
		return err
	}
	if ev.Type == rules.TypePublish {
		for _, r := range arr(p["relations"]) {
			m, _ := r.(map[string]any)
			if err := exec(`INSERT OR IGNORE INTO knowledge_links (target, relation, seq) VALUES (?, ?, ?)`, str(m["target"]), str(m["relation"]), seq); err != nil {
				return err
			}
		}
		for _, t := range arr(p["tags"]) {
			if err := exec(`INSERT OR IGNORE INTO knowledge_tags (tag, seq) VALUES (?, ?)`, str(t), seq); err != nil {
				return err
			}
		}
	} else if err := exec(`INSERT OR IGNORE INTO knowledge_links (target, relation, seq) VALUES (?, ?, ?)`, str(p["target"]), ev.Type, seq); err != nil {
		return err
	}
	for _, b := range arr(p["profiles"]) {
		m, _ := b.(map[string]any)
		ref, _ := m["profile"].(map[string]any)
		if err := exec(`INSERT OR IGNORE INTO knowledge_profiles (digest, seq) VALUES (?, ?)`, str(ref["digest"]), seq); err != nil {
			return err
		}
	}
	return nil
}

// row is one stored record read back.
type row struct {
	seq    int64
	record []byte // the acceptance record, JCS
}

// event parses the stored record's event (the service stored it after
// validating it: its shape is not checked again).
func (r row) event() (*identity.Event, error) {
	v, err := identity.ParseStrict(r.record)
	if err != nil {
		return nil, fmt.Errorf("knowledge: stored record %d: %w", r.seq, err)
	}
	m, _ := v.(map[string]any)
	env, err := identity.EnvelopeFromValue(m["envelope"], "/envelope")
	if err != nil {
		return nil, fmt.Errorf("knowledge: stored record %d: %w", r.seq, err)
	}
	return &env.Event, nil
}

// scanRows reads (seq, record) rows.
func scanRows(rows *sql.Rows) ([]row, error) {
	defer rows.Close()
	var out []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.seq, &r.record); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func arr(v any) []any {
	a, _ := v.([]any)
	return a
}

// asciiLower lowercases ASCII letters only, as the protocol's portable
// folding does.
func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}
