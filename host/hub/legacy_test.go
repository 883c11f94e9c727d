package hub_test

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	"apconnect/host/hub/internal/discourse"
	"apconnect/host/hub/internal/hubdb"
	"apconnect/host/hub/internal/profile"
	"apconnect/host/internal/sqlitedb"
	"apconnect/host/proto/adp"
)

// legacyNames are the names of hub.db's single history before migration
// groups; testdata/legacy-hubdb/N.sql is version N's SQL, verbatim.
var legacyNames = []string{"live writes and agent profiles", "agent discourse rooms", "replay rooms under the 0.12.6 head rule"}

func legacyMigrations(t *testing.T, n int) []sqlitedb.Migration {
	t.Helper()
	var out []sqlitedb.Migration
	for v := 1; v <= n; v++ {
		out = append(out, sqlitedb.Migration{Version: v, Name: legacyNames[v-1], SQL: readFile(t, fmt.Sprintf("testdata/legacy-hubdb/%d.sql", v))})
	}
	return out
}

// legacyGroups are the migration groups of the services the legacy history
// held (with the shared one, which hubdb.Open adds): a service added since
// has no legacy history. With atLegacy they stop at the versions the
// legacy history amounts to (profile 1, discourse 2).
func legacyGroups(atLegacy bool) []hubdb.Group {
	gs := []hubdb.Group{profile.Spec(profile.Limits{}).Group(), discourse.Spec(discourse.Limits{}, nil).Group()}
	if atLegacy {
		gs[0].Migrations, gs[1].Migrations = gs[0].Migrations[:1], gs[1].Migrations[:2]
	}
	return gs
}

// openLegacy creates dir/hub.db with the first n steps of the legacy
// history, as a hub of that time did (sqlitedb.Migrate: one history in
// schema_migrations).
func openLegacy(t *testing.T, dir string, n int) *sqlitedb.Pools {
	t.Helper()
	ctx := context.Background()
	p, err := sqlitedb.Open(ctx, filepath.Join(dir, "hub.db"), 1, func(w *sql.DB) error {
		tx, err := w.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if err := sqlitedb.Migrate(ctx, tx, legacyMigrations(t, n)); err != nil {
			tx.Rollback()
			return err
		}
		return tx.Commit()
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// schemaOf returns every table and index definition of dir/hub.db but the
// migration bookkeeping, by name.
func schemaOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "hub.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name, COALESCE(sql, '') FROM sqlite_schema
		WHERE name NOT IN ('schema_migrations', 'schema_group_migrations') AND name NOT LIKE 'sqlite_autoindex_schema%'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, def string
		if err := rows.Scan(&name, &def); err != nil {
			t.Fatal(err)
		}
		out[name] = def
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLegacySchemaEqualsGroups: the migration groups, at the versions the
// legacy history amounts to, build exactly the schema the legacy history
// built — every table and index, text for text; and a legacy database
// upgraded by hubdb.Open (mapped, then the later steps) has exactly the
// schema of a fresh one.
func TestLegacySchemaEqualsGroups(t *testing.T) {
	t.Run("at legacy", func(t *testing.T) { compareLegacySchema(t, true) })
	t.Run("upgraded", func(t *testing.T) { compareLegacySchema(t, false) })
}

func compareLegacySchema(t *testing.T, atLegacy bool) {
	legacyDir, freshDir := t.TempDir(), t.TempDir()
	openLegacy(t, legacyDir, len(legacyNames)).Writer.Close()
	if !atLegacy {
		up, err := hubdb.Open(context.Background(), legacyDir, legacyGroups(false)...)
		if err != nil {
			t.Fatal(err)
		}
		up.Close()
	}
	fresh, err := hubdb.Open(context.Background(), freshDir, legacyGroups(atLegacy)...)
	if err != nil {
		t.Fatal(err)
	}
	fresh.Close()
	legacy, grouped := schemaOf(t, legacyDir), schemaOf(t, freshDir)
	if len(legacy) < 10 {
		t.Fatalf("the legacy schema has %d objects", len(legacy))
	}
	if atLegacy {
		// hubdb.Open applies the shared group whole, and shared 2 drops
		// the one index legacy 1 made that no group keeps.
		if _, ok := legacy["accepted_envelopes_actor"]; !ok {
			t.Fatal("legacy 1 made no accepted_envelopes_actor")
		}
		delete(legacy, "accepted_envelopes_actor")
	}
	if !maps.Equal(legacy, grouped) {
		for name, def := range grouped {
			if legacy[name] != def {
				t.Errorf("%s\n groups: %s\n legacy: %s", name, def, legacy[name])
			}
		}
		for name := range legacy {
			if _, ok := grouped[name]; !ok {
				t.Errorf("%s is missing from the grouped schema", name)
			}
		}
	}
}

// legacyFixture is what a hub of the legacy schema held: a profile (and,
// from legacy version 2, a room with a member and a message), and what it
// served for them.
type legacyFixture struct {
	alice, bob *hubtest.Agent
	roomID     string
	served     map[string][]byte // path → body, read as alice
}

// paths are the reads compared before and after the upgrade.
func (f *legacyFixture) paths() []string {
	p := []string{"/v1/profiles/" + f.alice.ID, "/v1/profiles/" + f.alice.ID + "/events?limit=10"}
	if f.roomID != "" {
		p = append(p, "/v1/rooms/"+f.roomID, "/v1/rooms/"+f.roomID+"/events", "/v1/rooms", "/v1/me/rooms")
	}
	return p
}

// legacyTables are the tables of each legacy version, in foreign key order.
var legacyTables = [][]string{
	{"accepted_envelopes", "nonce_cache", "profiles"},
	{"adp_rooms", "adp_records", "adp_join_requests", "adp_packs", "adp_room_agents"},
	{},
}

// TestLegacyDatabaseOpens: a hub.db at each version of the legacy history,
// holding the rows a hub wrote, opens with the current hub: its groups
// are mapped (legacy 1 = shared 1 + profile 1, 2 = discourse 1, 3 =
// discourse 2), the steps it lacks run once, it serves its profiles and
// rooms exactly as before, and takes new writes.
// Serial: every hub of a subtest listens on the port freePort picked, so
// rooms keep their host.
func TestLegacyDatabaseOpens(t *testing.T) {
	for v := 1; v <= len(legacyNames); v++ {
		t.Run(fmt.Sprintf("legacy v%d", v), func(t *testing.T) {
			port := freePort(t)
			clock := hubtest.NewClock(time.UnixMilli(1_800_000_000_000))
			listen := hubtest.WithOptions(func(o *hub.Options) { o.Listen = "127.0.0.1:" + strconv.Itoa(port) })

			// A hub writes the rows into a database of its own ...
			srcDir := t.TempDir()
			src := hubtest.Start(t, hubtest.WithDir(srcDir), hubtest.WithClock(clock), listen)
			f := writeFixture(t, src, clock, v >= 2)
			snapshotSeq := scalar(t, src, `SELECT COALESCE(MAX(snapshot_seq), -1) FROM adp_rooms`)
			src.Close()

			// ... which are copied, as they are, into a database with the
			// legacy schema at version v.
			dir := t.TempDir()
			p := openLegacy(t, dir, v)
			copyRows(t, p.Writer, filepath.Join(srcDir, "hub.db"), v)
			p.Writer.Close()
			p.Reader.Close()

			h := hubtest.Start(t, hubtest.WithDir(dir), hubtest.WithClock(clock), listen)
			got, err := h.DB().SchemaVersions(context.Background())
			if want := map[string]int{"shared": 2, "profile": 2, "discourse": 3, "delegation": 1, "mail": 1, "knowledge": 1}; err != nil || !maps.Equal(got, want) {
				t.Fatalf("group versions %v (%v), want %v", got, err, want)
			}
			if n := scalar(t, h, `SELECT COUNT(*) FROM schema_migrations WHERE version <= 3`); n != int64(v) {
				t.Fatalf("%d legacy rows kept, want %d", n, v)
			}
			// discourse 2 (legacy 3) resets the snapshots of a database
			// that lacked it, and only of one.
			if v >= 2 {
				want := snapshotSeq
				if v == 2 {
					want = 0
				}
				if got := scalar(t, h, `SELECT MAX(snapshot_seq) FROM adp_rooms`); got != want || snapshotSeq < 1 {
					t.Fatalf("snapshot_seq %d after the upgrade, want %d (it was %d)", got, want, snapshotSeq)
				}
			}
			for _, path := range f.paths() {
				r := h.Get(t, path, f.alice)
				wantOK(t, r)
				jsonEqual(t, r.Body, f.served[path])
			}
			// New writes: a profile update (its nonce above the stored
			// ones), and a message in the old room or a first room.
			clock.Advance(time.Second)
			wantOK(t, h.Post("/v1/profiles", f.alice.ProfileUpdate(t, clock.Now(), f.alice.NextNonce(clock.Now()), payloadFor(f.alice, "Alice again"))))
			if f.roomID != "" {
				head, _ := h.RoomHead(t, f.roomID, f.bob)
				wantOK(t, h.Post("/v1/rooms/"+f.roomID, f.bob.ADPEvent(t, clock.Now(), adp.TypeMessageCreate, f.roomID, &head,
					map[string]any{"content_type": "text/plain", "content": "after the upgrade"})))
			} else if r := h.Post("/v1/rooms", f.alice.ADPEvent(t, clock.Now(), adp.TypeRoomCreate, "", nil, roomPayload(h, clock))); r.Status != http.StatusCreated {
				t.Fatalf("room.create after the upgrade: %d %s", r.Status, r.Body)
			}
			h.Close()
		})
	}
}

// writeFixture writes alice's profile and, with rooms, a room alice created
// that bob joined and spoke in; it records what the hub served for them.
func writeFixture(t *testing.T, h *hubtest.Hub, clock *hubtest.Clock, rooms bool) *legacyFixture {
	t.Helper()
	f := &legacyFixture{alice: hubtest.NewAgent(0x41), bob: hubtest.NewAgent(0x42), served: map[string][]byte{}}
	for i, name := range []string{"Alice v1", "Alice v2"} {
		clock.Advance(time.Duration(i+1) * time.Second)
		wantOK(t, h.Post("/v1/profiles", f.alice.ProfileUpdate(t, clock.Now(), f.alice.NextNonce(clock.Now()), payloadFor(f.alice, name))))
	}
	if rooms {
		r := h.Post("/v1/rooms", f.alice.ADPEvent(t, clock.Now(), adp.TypeRoomCreate, "", nil, roomPayload(h, clock)))
		if r.Status != http.StatusCreated {
			t.Fatalf("room.create: %d %s", r.Status, r.Body)
		}
		var created struct{ ID string }
		r.Decode(t, &created)
		f.roomID = created.ID
		for _, ev := range []struct {
			typ     string
			payload map[string]any
		}{
			{adp.TypeRoomJoin, map[string]any{"role": "speaker"}},
			{adp.TypeMessageCreate, map[string]any{"content_type": "text/plain", "content": "before the upgrade"}},
		} {
			clock.Advance(time.Second)
			head, _ := h.RoomHead(t, f.roomID, f.alice)
			wantOK(t, h.Post("/v1/rooms/"+f.roomID, f.bob.ADPEvent(t, clock.Now(), ev.typ, f.roomID, &head, ev.payload)))
		}
	}
	for _, path := range f.paths() {
		r := h.Get(t, path, f.alice)
		wantOK(t, r)
		f.served[path] = r.Body
	}
	return f
}

// roomPayload is a public room.create payload open to speakers, active for
// two hours.
func roomPayload(h *hubtest.Hub, clock *hubtest.Clock) map[string]any {
	now := clock.Now().UnixMilli()
	return map[string]any{
		"host": h.Origin(), "topic": "Legacy room", "visibility": "public",
		"start_time": now - 1000, "end_time": now + 2*3600_000,
		"policy": map[string]any{"open_roles": []any{"speaker", "observer"}},
	}
}

// copyRows copies the tables of legacy versions 1..v from the database at
// srcPath into w's database, row for row.
func copyRows(t *testing.T, w *sql.DB, srcPath string, v int) {
	t.Helper()
	if _, err := os.Stat(srcPath); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec(`ATTACH DATABASE ? AS src`, srcPath); err != nil {
		t.Fatal(err)
	}
	for _, tables := range legacyTables[:v] {
		for _, table := range tables {
			if _, err := w.Exec(`INSERT INTO main.` + table + ` SELECT * FROM src.` + table); err != nil {
				t.Fatalf("copy %s: %v", table, err)
			}
		}
	}
	if _, err := w.Exec(`DETACH DATABASE src`); err != nil {
		t.Fatal(err)
	}
}

// scalar reads one integer from the hub's database.
func scalar(t *testing.T, h *hubtest.Hub, query string) int64 {
	t.Helper()
	var n int64
	if err := h.DB().Reader().QueryRow(query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// freePort returns a loopback port that is free now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
