package sqlitedb

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// legacyList is a single history as databases kept it before groups: v1
// holds the tables of two modules (a and b), v2 a change of a, v3 a third
// module (c).
var legacyList = []Migration{
	{Version: 1, Name: "a and b", SQL: `CREATE TABLE a_items (k INTEGER PRIMARY KEY, v INTEGER NOT NULL) STRICT;
		CREATE TABLE b_items (k TEXT PRIMARY KEY) STRICT;`},
	{Version: 2, Name: "a grows", SQL: `ALTER TABLE a_items ADD COLUMN note TEXT NOT NULL DEFAULT ''`},
	{Version: 3, Name: "c", SQL: `CREATE TABLE c_items (k INTEGER PRIMARY KEY) STRICT`},
}

// The same schema as groups, each with one step the legacy history never
// had (a 3, c 2).
var (
	groupA = Group{Name: "a", Migrations: []Migration{
		{Version: 1, Name: "a items", SQL: `CREATE TABLE a_items (k INTEGER PRIMARY KEY, v INTEGER NOT NULL) STRICT`},
		{Version: 2, Name: "a grows", SQL: `ALTER TABLE a_items ADD COLUMN note TEXT NOT NULL DEFAULT ''`},
		{Version: 3, Name: "a bumps", SQL: `UPDATE a_items SET v = v + 100`},
	}}
	groupB = Group{Name: "b", Migrations: []Migration{
		{Version: 1, Name: "b items", SQL: `CREATE TABLE b_items (k TEXT PRIMARY KEY) STRICT`},
	}}
	groupC = Group{Name: "c", Migrations: []Migration{
		{Version: 1, Name: "c items", SQL: `CREATE TABLE c_items (k INTEGER PRIMARY KEY) STRICT`},
		{Version: 2, Name: "c index", SQL: `CREATE TABLE c_more (k INTEGER PRIMARY KEY REFERENCES c_items (k)) STRICT`},
	}}
	abc       = []Group{groupA, groupB, groupC}
	legacyABC = Legacy{Steps: [][]GroupVersion{
		{{"a", 1}, {"b", 1}},
		{{"a", 2}},
		{{"c", 1}},
	}}
)

func migrateGroupsWith(groups []Group, legacy Legacy) func(*sql.DB) error {
	return func(w *sql.DB) error {
		tx, err := w.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if err := MigrateGroups(ctx, tx, groups, legacy); err != nil {
			tx.Rollback()
			return err
		}
		return tx.Commit()
	}
}

func openT(t *testing.T, path string, migrate func(*sql.DB) error) *Pools {
	t.Helper()
	p, err := Open(ctx, path, 1, migrate)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Writer.Close(); p.Reader.Close() })
	return p
}

func closeP(p *Pools) { p.Writer.Close(); p.Reader.Close() }

func versions(t *testing.T, q Querier) map[string]int {
	t.Helper()
	v, err := GroupVersions(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func count(t *testing.T, q Querier, query string, args ...any) int {
	t.Helper()
	var n int
	if err := q.QueryRowContext(ctx, query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func TestGroupsFreshDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db.sqlite")
	p := openT(t, path, migrateGroupsWith(abc, legacyABC))
	if got, want := versions(t, p.Reader), map[string]int{"a": 3, "b": 1, "c": 2}; !reflect.DeepEqual(got, want) {
		t.Fatalf("versions %v, want %v", got, want)
	}
	for _, table := range []string{"a_items", "b_items", "c_items", "c_more", GroupsTable} {
		if count(t, p.Reader, `SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name = ?`, table) != 1 {
			t.Fatalf("table %s missing", table)
		}
	}
	// The legacy table holds the marker only: a binary from before groups
	// refuses the file.
	if n := count(t, p.Reader, `SELECT COUNT(*) FROM schema_migrations WHERE version = ?`, LegacyMarker); n != 1 {
		t.Fatalf("%d markers", n)
	}
	if _, err := p.Writer.ExecContext(ctx, `INSERT INTO a_items (k, v) VALUES (1, 1)`); err != nil {
		t.Fatal(err)
	}
	closeP(p)
	if _, err := Open(ctx, path, 1, migrateWith(legacyList)); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("a binary from before groups opened a grouped database: %v", err)
	}
	// Reopening applies nothing twice (a 3 would add 100 again).
	p = openT(t, path, migrateGroupsWith(abc, legacyABC))
	if n := count(t, p.Reader, `SELECT v FROM a_items WHERE k = 1`); n != 1 {
		t.Fatalf("v = %d after reopening, want 1", n)
	}
	if n := count(t, p.Reader, `SELECT COUNT(*) FROM `+GroupsTable); n != 6 {
		t.Fatalf("%d group rows, want 6", n)
	}
}

// A database at each legacy version (built by Migrate with the old list,
// holding data) is mapped onto the groups once, keeps its data and gets
// exactly the steps it lacks.
func TestGroupsUpgradeLegacy(t *testing.T) {
	for n := 0; n <= len(legacyList); n++ {
		t.Run(fmt.Sprintf("legacy v%d", n), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "db.sqlite")
			p := openT(t, path, migrateWith(legacyList[:n]))
			legacyAt := map[int]int64{}
			if n >= 1 {
				if _, err := p.Writer.ExecContext(ctx, `INSERT INTO a_items (k, v) VALUES (7, 1); INSERT INTO b_items VALUES ('x')`); err != nil {
					t.Fatal(err)
				}
				// Distinct applied_at per legacy step, to see they are carried over.
				if _, err := p.Writer.ExecContext(ctx, `UPDATE schema_migrations SET applied_at = version * 1000`); err != nil {
					t.Fatal(err)
				}
				for v := 1; v <= n; v++ {
					legacyAt[v] = int64(v) * 1000
				}
			}
			closeP(p)

			p = openT(t, path, migrateGroupsWith(abc, legacyABC))
			if got, want := versions(t, p.Reader), map[string]int{"a": 3, "b": 1, "c": 2}; !reflect.DeepEqual(got, want) {
				t.Fatalf("versions %v, want %v", got, want)
			}
			if n >= 1 {
				// a 3 ran once over the old rows; b's row is intact.
				if v := count(t, p.Reader, `SELECT v FROM a_items WHERE k = 7`); v != 101 {
					t.Fatalf("a_items.v = %d, want 101", v)
				}
				if c := count(t, p.Reader, `SELECT COUNT(*) FROM b_items WHERE k = 'x'`); c != 1 {
					t.Fatal("b_items lost its row")
				}
			}
			// The mapped group rows carry the legacy step's applied_at.
			for v, step := range legacyABC.Steps[:n] {
				for _, gv := range step {
					var at int64
					if err := p.Reader.QueryRowContext(ctx, `SELECT applied_at FROM `+GroupsTable+` WHERE group_name = ? AND version = ?`, gv.Group, gv.Version).Scan(&at); err != nil || at != legacyAt[v+1] {
						t.Fatalf("%s %d applied_at %d (%v), want %d", gv.Group, gv.Version, at, err, legacyAt[v+1])
					}
				}
			}
			// The legacy rows stay, with the marker beside them.
			if c := count(t, p.Reader, `SELECT COUNT(*) FROM schema_migrations`); c != n+1 {
				t.Fatalf("schema_migrations has %d rows, want %d", c, n+1)
			}
			closeP(p)
			// The mapping happens once: a second open changes nothing.
			p = openT(t, path, migrateGroupsWith(abc, legacyABC))
			if c := count(t, p.Reader, `SELECT COUNT(*) FROM `+GroupsTable); c != 6 {
				t.Fatalf("%d group rows after reopening, want 6", c)
			}
		})
	}
}

func TestGroupsRefuse(t *testing.T) {
	newer := append(append([]Migration(nil), legacyList...), Migration{Version: 4, Name: "d", SQL: `CREATE TABLE d (k INTEGER) STRICT`})
	for _, c := range []struct {
		name   string
		setup  func(*sql.DB) error // run first, on an empty file (nil: none)
		edit   string              // SQL run between setup and the open
		groups []Group
		legacy Legacy
		want   string
	}{
		{name: "legacy version beyond the mapping", setup: migrateWith(newer), groups: abc, legacy: legacyABC, want: "schema version 4 is newer"},
		{name: "legacy history and no mapping", setup: migrateWith(legacyList[:1]), groups: abc, want: "newer than this apconnect knows (0)"},
		{name: "legacy mapping to a group not given", setup: migrateWith(legacyList), groups: []Group{groupA, groupB}, legacy: legacyABC, want: `group "c", which is not given`},
		{name: "group newer than its migrations", setup: migrateGroupsWith(abc, legacyABC),
			edit: `INSERT INTO ` + GroupsTable + ` VALUES ('b', 2, 'future', 0)`, groups: abc, legacy: legacyABC, want: `group "b" is at version 2`},
		{name: "group unknown to this binary", setup: migrateGroupsWith(abc, legacyABC),
			edit: `INSERT INTO ` + GroupsTable + ` VALUES ('mail', 1, 'future', 0)`, groups: abc, legacy: legacyABC, want: `group "mail"`},
		{name: "group left out", setup: migrateGroupsWith(abc, legacyABC), groups: []Group{groupA, groupB}, legacy: legacyABC, want: `group "c"`},
		{name: "misnumbered group", groups: []Group{{Name: "a", Migrations: []Migration{{Version: 2, Name: "gap"}}}}, want: "has version 2, want 1"},
		{name: "group given twice", groups: []Group{groupB, groupB}, want: "given twice"},
		{name: "bad group name", groups: []Group{{Name: "Mail"}}, want: "lower-case"},
		{name: "legacy mapping skips a version", groups: abc, legacy: Legacy{Steps: [][]GroupVersion{{{"a", 2}}}}, want: "maps to a 2, want a 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "db.sqlite")
			if c.setup != nil {
				p := openT(t, path, c.setup)
				if c.edit != "" {
					if _, err := p.Writer.ExecContext(ctx, c.edit); err != nil {
						t.Fatal(err)
					}
				}
				closeP(p)
			}
			_, err := Open(ctx, path, 1, migrateGroupsWith(c.groups, c.legacy))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one containing %q", err, c.want)
			}
		})
	}
}

// A failing step rolls back the whole open: no table of any group and no
// group row is left behind.
func TestGroupsAtomic(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db.sqlite")
	broken := Group{Name: "z", Migrations: []Migration{{Version: 1, Name: "bad", SQL: `CREATE TABLE oops (`}}}
	if _, err := Open(ctx, path, 1, migrateGroupsWith([]Group{groupA, broken}, Legacy{})); err == nil || !strings.Contains(err.Error(), "migration z 1 (bad)") {
		t.Fatalf("err = %v", err)
	}
	p := openT(t, path, nil)
	if n := count(t, p.Reader, `SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table'`); n != 0 {
		t.Fatalf("%d tables left after a failed migration", n)
	}
}
