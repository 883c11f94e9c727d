package delegation

import (
	"context"
	"strings"
	"testing"

	"apconnect/host/hub/internal/hubdb"
)

// A query naming an id, a subject or a principal reads the credentials
// through an index, not a scan of every credential the hub holds.
func TestQueriesUseAnIndex(t *testing.T) {
	ctx := context.Background()
	db, err := hubdb.Open(ctx, t.TempDir(), hubdb.Group{Name: Name, Migrations: migrations()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, c := range []struct{ subject, principal, id, want string }{
		{"", "", "d1", "USING INDEX sqlite_autoindex_delegation_credentials_1"},
		{"agent", "", "", "USING INDEX delegation_credentials_by_subject"},
		{"agent", "https://p.example/acme", "", "USING INDEX delegation_credentials_by_subject"},
		{"", "https://p.example/acme", "", "USING INDEX delegation_credentials_by_principal"},
	} {
		p, err := db.QueryPlan(ctx, matchingSQL(c.subject, c.principal, c.id), c.subject, c.principal, c.id, "")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(p, c.want) {
			t.Errorf("query %+v: plan %q, want %s", c, p, c.want)
		}
	}
}
