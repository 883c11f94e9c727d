package hubdb

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"
)

// The checkpointer copies the log in the background once enough commits
// came, sets the next count from the pages per commit, and stops with Close.
func TestCheckpointer(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	write := func(i int) {
		t.Helper()
		if err := db.WriteGroup(func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO nonce_cache VALUES (?, 1, 1)`, fmt.Sprint("actor-", i))
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	start := db.commits.Load()
	for i := range ckptFirst {
		write(i)
	}
	deadline := time.Now().Add(10 * time.Second)
	for db.ckpt.runs.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint after %d commits", db.commits.Load()-start)
		}
		time.Sleep(time.Millisecond)
	}
	// The next checkpoint waits for about ckptFrames pages: each commit
	// here writes a couple, so more commits than the first time, within
	// the bounds.
	for db.ckpt.next.Load() >= db.commits.Load()+ckptMaxCommits-ckptFirst && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	every := db.ckpt.next.Load() - db.ckpt.lastCommits
	if every < ckptMinCommits || every > ckptMaxCommits || db.ckpt.lastLog <= 0 {
		t.Fatalf("next checkpoint %d commits after the last (log %d pages)", every, db.ckpt.lastLog)
	}
	t.Logf("first checkpoint after %d commits, log %d pages; next after %d commits", db.ckpt.lastCommits, db.ckpt.lastLog, every)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db.ckpt.committed(db.ckpt.next.Load()) // after stop: no goroutine to nudge, no panic
}
