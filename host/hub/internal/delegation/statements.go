package delegation

import (
	"context"
	"database/sql"
	"errors"
)

// The service's reads, prepared once on the read pool (preparing a
// statement was most of the cost of a read).
const (
	credentialSQL = `SELECT credential FROM delegation_credentials WHERE id = ?`
	principalSQL  = `SELECT name, document, updated_at FROM principals WHERE name = ?`
	aliasSQL      = `SELECT p.name, p.document, p.updated_at FROM principal_aliases a
		JOIN principals p ON p.name = a.name WHERE a.url = ?`
	eventsSQL = `SELECT r.seq, r.accepted_at, e.envelope FROM delegation_records r
		JOIN accepted_envelopes e ON e.hash = r.event_hash WHERE r.id = ? AND r.seq > ? ORDER BY r.seq LIMIT ?`
	// A query's scan, by its most selective filter: SQLite plans a
	// statement once, and "?1 = '' OR subject = ?1" would scan every
	// credential whatever the query named.
	matchingByIDSQL = `SELECT id, credential FROM delegation_credentials
		WHERE id = ?3 AND (?1 = '' OR subject = ?1) AND (?2 = '' OR principal_id = ?2) AND id > ?4 ORDER BY id`
	matchingBySubjectSQL = `SELECT id, credential FROM delegation_credentials
		WHERE subject = ?1 AND (?2 = '' OR principal_id = ?2) AND (?3 = '' OR id = ?3) AND id > ?4 ORDER BY id`
	matchingByPrincipalSQL = `SELECT id, credential FROM delegation_credentials
		WHERE principal_id = ?2 AND (?1 = '' OR subject = ?1) AND (?3 = '' OR id = ?3) AND id > ?4 ORDER BY id`
	matchingAllSQL = `SELECT id, credential FROM delegation_credentials
		WHERE (?1 = '' OR subject = ?1) AND (?2 = '' OR principal_id = ?2) AND (?3 = '' OR id = ?3) AND id > ?4 ORDER BY id`
)

var readStatements = []string{credentialSQL, principalSQL, aliasSQL, eventsSQL,
	matchingByIDSQL, matchingBySubjectSQL, matchingByPrincipalSQL, matchingAllSQL}

// matchingSQL is the scan of a query with these filters.
func matchingSQL(subject, principal, id string) string {
	switch {
	case id != "":
		return matchingByIDSQL
	case subject != "":
		return matchingBySubjectSQL
	case principal != "":
		return matchingByPrincipalSQL
	}
	return matchingAllSQL
}

// preparedReader is a hubhttp.Querier over the read pool that runs the
// statements it prepared as prepared statements, and any other query as
// it is.
type preparedReader struct {
	db    *sql.DB
	stmts map[string]*sql.Stmt
}

func prepare(db *sql.DB, queries ...string) (*preparedReader, error) {
	p := &preparedReader{db: db, stmts: map[string]*sql.Stmt{}}
	for _, q := range queries {
		st, err := db.PrepareContext(context.Background(), q)
		if err != nil {
			return nil, errors.Join(err, p.Close())
		}
		p.stmts[q] = st
	}
	return p, nil
}

// QueryRowContext runs one query.
func (p *preparedReader) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	if st := p.stmts[q]; st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return p.db.QueryRowContext(ctx, q, args...)
}

// QueryContext runs one query.
func (p *preparedReader) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if st := p.stmts[q]; st != nil {
		return st.QueryContext(ctx, args...)
	}
	return p.db.QueryContext(ctx, q, args...)
}

// Close releases the prepared statements.
func (p *preparedReader) Close() error {
	var errs []error
	for _, st := range p.stmts {
		errs = append(errs, st.Close())
	}
	return errors.Join(errs...)
}
