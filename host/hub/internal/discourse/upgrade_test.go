package discourse_test

import (
	"database/sql"
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"

	"apconnect/host/hub/hubtest"
	"apconnect/host/proto/adp"
)

// TestUpgradeReplaysOldSnapshots opens a hub.db written before discourse
// migration 2 (legacy hub.db migration 3):
// its room snapshot holds the head of the 0f87fee rule (a message). After
// the upgrade the room is replayed from its records, so the head is the
// genesis record again and a message based on it (the 0.12.6 rule) is
// accepted; with the old snapshot it would be room_head_mismatch.
func TestUpgradeReplaysOldSnapshots(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := newFx(t, hubtest.WithDir(dir))
	as := agents(2, 0x70)
	creator, sp := as[0], as[1]
	id := f.create(creator, nil)
	genesis := f.head(id)
	f.join(sp, id, adp.RoleSpeaker)
	msg := f.must(sp, id, adp.TypeMessageCreate, obj{"content_type": "text/plain", "content": "one"})
	f.h.Close()

	db, err := sql.Open("sqlite", filepath.Join(dir, "hub.db"))
	if err != nil {
		t.Fatal(err)
	}
	var snap []byte
	if err := db.QueryRow(`SELECT snapshot FROM adp_rooms WHERE id = ?`, id).Scan(&snap); err != nil {
		t.Fatal(err)
	}
	var room map[string]any
	if err := json.Unmarshal(snap, &room); err != nil {
		t.Fatal(err)
	}
	// What the old rule made of it: the message is the head and the last
	// record, snapshotted at its seq.
	room["head"] = map[string]any{"seq": msg.Seq, "hash": msg.Hash}
	room["last"] = map[string]any{"seq": msg.Seq, "pre_hash": msg.PreHash, "hash": msg.Hash, "accepted_at": msg.AcceptedAt}
	old, _ := json.Marshal(room)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`UPDATE adp_rooms SET snapshot = ?, snapshot_seq = ? WHERE id = ?`, []any{old, msg.Seq, id}},
		{`DELETE FROM schema_group_migrations WHERE group_name = 'discourse' AND version >= 2`, nil},
	} {
		if _, err := db.Exec(q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	f.h = hubtest.Start(t, hubtest.WithClock(f.clock), hubtest.WithDir(dir))
	if h := f.head(id); h != genesis {
		t.Fatalf("head after the upgrade %+v, want the genesis record %+v", h, genesis)
	}
	r := f.sendAt(sp, id, adp.TypeMessageCreate, obj{"content_type": "text/plain", "content": "two"}, genesis)
	if r.Status != http.StatusOK {
		t.Fatalf("a message on the genesis head after the upgrade: %d %s", r.Status, r.Body)
	}
}
