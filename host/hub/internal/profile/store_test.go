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
	if p, err := db.QueryPlan(ctx, historySQL, "did:agent:x", 10, 2); err != nil || !strings.Contains(p, "USING INDEX profile_history (actor=? AND nonce<?)") {
		t.Fatalf("history plan %q (%v)", p, err)
	}
	var shared int
	if err := db.Reader().QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE name = 'accepted_envelopes_actor'`).Scan(&shared); err != nil || shared != 0 {
		t.Fatalf("the shared actor index is still there (%d, %v)", shared, err)
	}
}
