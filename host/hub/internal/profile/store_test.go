package profile

import (
	"context"
	"strings"
	"testing"

	"apconnect/host/hub/internal/hubdb"
)

// The history query reads through the partial profile_history index,
// whose predicate it must repeat exactly (migration 2): were the two to
// drift apart, SQLite would scan every accepted envelope of every
// protocol instead.
func TestHistoryUsesItsIndex(t *testing.T) {
	ctx := context.Background()
	db, err := hubdb.Open(ctx, t.TempDir(), hubdb.Group{Name: Name, Migrations: migrations()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Reader().QueryContext(ctx, "EXPLAIN QUERY PLAN "+historySQL, "did:agent:x", 10, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if p := strings.Join(plan, "; "); !strings.Contains(p, "USING INDEX profile_history (actor=? AND nonce<?)") {
		t.Fatalf("history plan %q", p)
	}
	var shared int
	if err := db.Reader().QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE name = 'accepted_envelopes_actor'`).Scan(&shared); err != nil || shared != 0 {
		t.Fatalf("the shared actor index is still there (%d, %v)", shared, err)
	}
}
