package sqlitedb

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"slices"
	"time"
)

// Group is one named, independent, forward-only migration history inside a
// database: the tables of one module (the hub's shared tables, one
// service's). Its migrations are numbered 1, 2, 3, … within the group and
// are never edited once released.
type Group struct {
	// Name identifies the group in the database: lower-case letters,
	// digits and underscores, starting with a letter ("shared",
	// "discourse"). A released name never changes.
	Name       string
	Migrations []Migration
}

// GroupVersion names one migration of a group.
type GroupVersion struct {
	Group   string
	Version int
}

// Legacy maps the single migration history a database kept before groups
// (schema_migrations, versions 1..N, written by Migrate) onto groups:
// Steps[i] lists the group migrations that legacy version i+1 amounts to.
// A database found with a legacy history is mapped once and then continues
// per group. Within one group the versions Steps names must be 1, 2, 3, …
// in step order. The zero Legacy maps nothing: a database with a legacy
// history is refused.
type Legacy struct {
	Steps [][]GroupVersion
}

// GroupsTable records the applied migrations of every group: one row per
// (group_name, version).
const GroupsTable = "schema_group_migrations"

// LegacyMarker is the version MigrateGroups records in the legacy
// schema_migrations table once a database keeps migration groups. A binary
// from before groups (which reads only that table) then refuses the file as
// newer than it knows, instead of migrating it again from version 1; and
// MigrateGroups maps a legacy history only while the marker is absent.
const LegacyMarker = 1_000_000

var groupName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// MigrateGroups applies, inside tx, every pending migration of each group,
// groups in the order given (a group whose tables reference another's comes
// after it), recording each in GroupsTable.
//
// A database that still has only the legacy single history is first
// mapped onto groups with legacy (its rows are kept; LegacyMarker is added).
// MigrateGroups refuses a database written by a newer apconnect: a group
// at a version beyond its migrations, a group it is not given, or a legacy
// version beyond legacy's steps. It refuses a group whose migrations are not
// numbered 1, 2, 3, …, two groups of one name, and a legacy mapping that
// skips or repeats a group version.
func MigrateGroups(ctx context.Context, tx *sql.Tx, groups []Group, legacy Legacy) error {
	if err := checkGroups(groups, legacy); err != nil {
		return err
	}
	for _, q := range []string{legacyTable, `CREATE TABLE IF NOT EXISTS ` + GroupsTable + ` (
		group_name TEXT    NOT NULL,
		version    INTEGER NOT NULL,
		name       TEXT    NOT NULL,
		applied_at INTEGER NOT NULL,
		PRIMARY KEY (group_name, version)
	) STRICT, WITHOUT ROWID`} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	if err := mapLegacy(ctx, tx, groups, legacy); err != nil {
		return err
	}
	current, err := GroupVersions(ctx, tx)
	if err != nil {
		return err
	}
	for name, v := range current {
		if !slices.ContainsFunc(groups, func(g Group) bool { return g.Name == name }) {
			return fmt.Errorf("database has migration group %q (version %d), which this apconnect does not know; use a newer apconnect", name, v)
		}
	}
	for _, g := range groups {
		if err := migrateGroup(ctx, tx, g, current[g.Name]); err != nil {
			return err
		}
	}
	return nil
}

// legacyTable is the single history of Migrate.
const legacyTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT    NOT NULL,
		applied_at INTEGER NOT NULL
	) STRICT`

// checkGroups refuses misnamed, repeated or misnumbered groups and a legacy
// mapping whose versions of one group do not run 1, 2, 3, ….
func checkGroups(groups []Group, legacy Legacy) error {
	seen := map[string]bool{}
	for _, g := range groups {
		if !groupName.MatchString(g.Name) {
			return fmt.Errorf("migration group name %q is not lower-case letters, digits and underscores", g.Name)
		}
		if seen[g.Name] {
			return fmt.Errorf("migration group %q is given twice", g.Name)
		}
		seen[g.Name] = true
		for i, m := range g.Migrations {
			if m.Version != i+1 {
				return fmt.Errorf("migration %q of group %q has version %d, want %d", m.Name, g.Name, m.Version, i+1)
			}
		}
	}
	next := map[string]int{}
	for i, step := range legacy.Steps {
		for _, gv := range step {
			if gv.Version != next[gv.Group]+1 {
				return fmt.Errorf("legacy version %d maps to %s %d, want %s %d", i+1, gv.Group, gv.Version, gv.Group, next[gv.Group]+1)
			}
			next[gv.Group] = gv.Version
		}
	}
	return nil
}

// mapLegacy records, once, the group versions a legacy single history
// amounts to, and marks the database as keeping groups.
func mapLegacy(ctx context.Context, tx *sql.Tx, groups []Group, legacy Legacy) error {
	var marked bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = ?)`, LegacyMarker).Scan(&marked); err != nil {
		return err
	}
	if marked {
		return nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT version, applied_at FROM schema_migrations ORDER BY version`)
	if err != nil {
		return err
	}
	var applied []int64 // applied_at of legacy versions 1..N
	for rows.Next() {
		var v int
		var at int64
		if err := rows.Scan(&v, &at); err != nil {
			rows.Close()
			return err
		}
		if v != len(applied)+1 {
			rows.Close()
			return fmt.Errorf("legacy schema history has version %d where %d belongs", v, len(applied)+1)
		}
		applied = append(applied, at)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(applied) > 0 {
		if err := recordLegacy(ctx, tx, groups, legacy, applied); err != nil {
			return err
		}
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
		LegacyMarker, "migration groups: see "+GroupsTable, time.Now().UnixMilli())
	return err
}

// recordLegacy writes the group rows of legacy versions 1..len(applied).
func recordLegacy(ctx context.Context, tx *sql.Tx, groups []Group, legacy Legacy, applied []int64) error {
	n := len(applied)
	if n > len(legacy.Steps) {
		return fmt.Errorf("database schema version %d is newer than this apconnect knows (%d); use a newer apconnect", n, len(legacy.Steps))
	}
	var existing int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+GroupsTable).Scan(&existing); err != nil {
		return err
	}
	if existing > 0 {
		return fmt.Errorf("database has both a legacy schema history (version %d) and migration groups, and no marker saying which holds", n)
	}
	for i, step := range legacy.Steps[:n] {
		for _, gv := range step {
			gi := slices.IndexFunc(groups, func(g Group) bool { return g.Name == gv.Group })
			if gi < 0 {
				return fmt.Errorf("legacy version %d maps to migration group %q, which is not given", i+1, gv.Group)
			}
			ms := groups[gi].Migrations
			if gv.Version > len(ms) {
				return fmt.Errorf("legacy version %d maps to %s %d, newer than this apconnect knows (%d)", i+1, gv.Group, gv.Version, len(ms))
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO `+GroupsTable+` (group_name, version, name, applied_at) VALUES (?, ?, ?, ?)`,
				gv.Group, gv.Version, ms[gv.Version-1].Name, applied[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// migrateGroup applies the migrations of g after version current.
func migrateGroup(ctx context.Context, tx *sql.Tx, g Group, current int) error {
	if current > len(g.Migrations) {
		return fmt.Errorf("migration group %q is at version %d, newer than this apconnect knows (%d); use a newer apconnect", g.Name, current, len(g.Migrations))
	}
	for _, m := range g.Migrations[current:] {
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return fmt.Errorf("migration %s %d (%s): %w", g.Name, m.Version, m.Name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO `+GroupsTable+` (group_name, version, name, applied_at) VALUES (?, ?, ?, ?)`,
			g.Name, m.Version, m.Name, time.Now().UnixMilli()); err != nil {
			return err
		}
	}
	return nil
}

// GroupVersions returns the highest recorded version of each migration
// group (a group without a row is absent; a database without GroupsTable
// has none).
func GroupVersions(ctx context.Context, q Querier) (map[string]int, error) {
	var exists bool
	if err := q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?)`, GroupsTable).Scan(&exists); err != nil {
		return nil, err
	}
	out := map[string]int{}
	if !exists {
		return out, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT group_name, MAX(version) FROM `+GroupsTable+` GROUP BY group_name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var v int
		if err := rows.Scan(&name, &v); err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, rows.Err()
}

// Querier is what GroupVersions reads through: a *sql.DB, *sql.Tx or
// *sql.Conn.
type Querier interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	QueryRowContext(context.Context, string, ...any) *sql.Row
}
