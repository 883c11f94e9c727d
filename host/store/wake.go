package store

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
)

// Waking the agent (host/wake): the leases that let one process of the
// identity run a background job at a time, the per-item wake claims and the
// wake log. A wake is one delivery of one inbox item to one target — a
// configured command, a Claude Code channel session, a Codex session — and
// its row is the claim: a target is woken for an item at most once
// (UNIQUE (target, inbox_id)), across restarts and processes. The row
// records what became of it (the command's exit, its bounded output) and,
// kept by a trigger on the inbox, whether the agent later claimed or
// acknowledged the item.

// wakeMigrations is the wake group's history.
var wakeMigrations = []Migration{
	{Version: 1, Name: "wake leases and log", SQL: wakeV1},
}

// wakeV1 creates the leases, the wake log and the trigger that records the
// agent's reaction to a woken item. A core migration that rebuilds the
// inbox table drops the trigger with it and must create it again
// (TestWakeOutcomeTrigger fails until it does).
const wakeV1 = `
CREATE TABLE wake_leases (
	job    TEXT PRIMARY KEY,        -- command:<key>, sync:<module>
	holder TEXT    NOT NULL,        -- the process holding it
	since  INTEGER NOT NULL,        -- when the holder took it (Unix ms)
	until  INTEGER NOT NULL         -- when it lapses unless renewed
) STRICT;

CREATE TABLE wake_log (
	id           INTEGER PRIMARY KEY,
	inbox_id     TEXT    NOT NULL,
	kind         TEXT    NOT NULL,
	room_id      TEXT    NOT NULL DEFAULT '',
	host         TEXT    NOT NULL DEFAULT '',
	seq          INTEGER NOT NULL DEFAULT 0,
	via          TEXT    NOT NULL,            -- command, claude_channel, codex_stop
	target       TEXT    NOT NULL,            -- the command's key, the session
	label        TEXT    NOT NULL,            -- what the operator recognizes it by
	holder       TEXT    NOT NULL,            -- the process that delivered it
	state        TEXT    NOT NULL,            -- claimed, running, exited, failed, timeout, interrupted, sent
	created_at   INTEGER NOT NULL,            -- the claim
	started_at   INTEGER NOT NULL DEFAULT 0,
	ended_at     INTEGER NOT NULL DEFAULT 0,
	exit_code    INTEGER,                     -- NULL until a command exits
	error        TEXT    NOT NULL DEFAULT '',
	output       BLOB    NOT NULL DEFAULT x'', -- the command's output, bounded
	output_bytes INTEGER NOT NULL DEFAULT 0,  -- how much it wrote in all
	claimed_at   INTEGER NOT NULL DEFAULT 0,  -- the agent claimed the item
	acked_at     INTEGER NOT NULL DEFAULT 0,  -- the agent acknowledged it
	ack_state    TEXT    NOT NULL DEFAULT '', -- handled, dismissed, deferred
	UNIQUE (target, inbox_id)
) STRICT;
CREATE INDEX wake_log_item ON wake_log (inbox_id);
CREATE INDEX wake_log_created ON wake_log (created_at);
CREATE INDEX wake_log_open ON wake_log (target, state) WHERE state IN ('claimed', 'running');

CREATE TRIGGER wake_log_outcome AFTER UPDATE OF state ON inbox
WHEN NEW.state != OLD.state AND NEW.state IN ('claimed', 'handled', 'dismissed', 'deferred')
BEGIN
	UPDATE wake_log SET
		claimed_at = CASE WHEN NEW.state = 'claimed' AND claimed_at = 0
			THEN CAST(unixepoch('subsec') * 1000 AS INTEGER) ELSE claimed_at END,
		acked_at = CASE WHEN NEW.state != 'claimed' AND acked_at = 0
			THEN CAST(unixepoch('subsec') * 1000 AS INTEGER) ELSE acked_at END,
		ack_state = CASE WHEN NEW.state != 'claimed' THEN NEW.state ELSE ack_state END
	WHERE inbox_id = NEW.id;
END;
`

// Ways a wake is delivered (WakeRecord.Via).
const (
	WakeViaCommand = "command"
	WakeViaChannel = "claude_channel"
	WakeViaCodex   = "codex_stop"
)

// States of a wake (WakeRecord.State).
const (
	// WakeClaimed: the claim is written, the command not started yet.
	WakeClaimed = "claimed"
	// WakeRunning: the command started and has not ended.
	WakeRunning = "running"
	// WakeExited: the command exited (ExitCode says how).
	WakeExited = "exited"
	// WakeFailed: the command could not be started.
	WakeFailed = "failed"
	// WakeTimeout: the command ran past its timeout and was killed.
	WakeTimeout = "timeout"
	// WakeInterrupted: the process running the command stopped first.
	WakeInterrupted = "interrupted"
	// WakeSent: a notification (channel, Codex hook answer) was delivered.
	WakeSent = "sent"
)

// Lease is one background job's lease.
type Lease struct {
	Job    string
	Holder string
	Since  int64
	Until  int64
}

// AcquireLease takes or renews the lease of job for holder until until: it
// succeeds when no one holds it, holder already does, or the holder's lease
// lapsed (before now). It reports whether holder holds it now and, when it
// took it from no one or from a lapsed holder, fresh is true.
func (t *Tx) AcquireLease(ctx context.Context, job, holder string, now, until int64) (held, fresh bool, err error) {
	var cur string
	var curUntil int64
	err = t.queryRow(ctx, `SELECT holder, until FROM wake_leases WHERE job = ?`, job).Scan(&cur, &curUntil)
	switch {
	case notFound(err) == ErrNotFound:
		_, err = t.exec(ctx, `INSERT INTO wake_leases (job, holder, since, until) VALUES (?, ?, ?, ?)`, job, holder, now, until)
		return err == nil, true, err
	case err != nil:
		return false, false, err
	case cur == holder:
		_, err = t.exec(ctx, `UPDATE wake_leases SET until = ? WHERE job = ?`, until, job)
		return err == nil, false, err
	case curUntil <= now:
		_, err = t.exec(ctx, `UPDATE wake_leases SET holder = ?, since = ?, until = ? WHERE job = ?`, holder, now, until, job)
		return err == nil, true, err
	}
	return false, false, nil
}

// ReleaseLease gives up holder's lease of job (nothing when another process
// holds it).
func (t *Tx) ReleaseLease(ctx context.Context, job, holder string) error {
	_, err := t.exec(ctx, `DELETE FROM wake_leases WHERE job = ? AND holder = ?`, job, holder)
	return err
}

// Lease returns the lease of job; ok is false when no one holds it (a
// lapsed lease is returned as it is: compare Until with the time).
func (q Q) Lease(ctx context.Context, job string) (l Lease, ok bool, err error) {
	err = q.queryRow(ctx, `SELECT job, holder, since, until FROM wake_leases WHERE job = ?`, job).Scan(&l.Job, &l.Holder, &l.Since, &l.Until)
	if notFound(err) == ErrNotFound {
		return Lease{}, false, nil
	}
	return l, err == nil, err
}

// Leases lists the leases, lapsed ones included, by job.
func (q Q) Leases(ctx context.Context) ([]Lease, error) {
	rows, err := q.query(ctx, `SELECT job, holder, since, until FROM wake_leases ORDER BY job`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Lease
	for rows.Next() {
		var l Lease
		if err := rows.Scan(&l.Job, &l.Holder, &l.Since, &l.Until); err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// WakeItem is a pending inbox item that may wake a target.
type WakeItem struct {
	ID        string
	Kind      string
	Priority  int // 0 high, 1 normal, 2 low
	RoomID    string
	Host      string
	Seq       int64
	CreatedAt int64
	Item      []byte // the item's JSON (inbox.Item)
}

// WakeQuery selects the pending items a target has not been woken for.
type WakeQuery struct {
	// Target is the command's key or the session.
	Target string
	// Kinds are the kinds that wake it (none: no item).
	Kinds []string
	// MaxPriority keeps items of this rank or higher (0: high only; 2 or
	// more: every priority).
	MaxPriority int
	// Limit bounds the items returned (capped at 200).
	Limit int
}

// WakeCandidates returns the pending items of q.Kinds that q.Target has no
// wake for, oldest first.
func (q Q) WakeCandidates(ctx context.Context, wq WakeQuery) ([]WakeItem, error) {
	if len(wq.Kinds) == 0 {
		return nil, nil
	}
	limit := wq.Limit
	if limit <= 0 || limit > 200 {
		limit = 200
	}
	args := []any{wq.MaxPriority}
	for _, k := range wq.Kinds {
		args = append(args, k)
	}
	args = append(args, wq.Target)
	rows, err := q.query(ctx, `SELECT i.id, i.kind, i.prio, COALESCE(r.room_id, ''), COALESCE(r.host, ''), i.seq, i.created_at, i.item
		FROM inbox i LEFT JOIN rooms r ON r.id = i.room
		WHERE i.state = 'pending' AND i.prio <= ? AND i.kind IN (`+placeholders(len(wq.Kinds))+`)
		AND NOT EXISTS (SELECT 1 FROM wake_log w WHERE w.target = ? AND w.inbox_id = i.id)
		ORDER BY i.rid LIMIT `+strconv.Itoa(limit), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []WakeItem
	for rows.Next() {
		var w WakeItem
		if err := rows.Scan(&w.ID, &w.Kind, &w.Priority, &w.RoomID, &w.Host, &w.Seq, &w.CreatedAt, &w.Item); err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, rows.Err()
}

// WakeClaim is a wake about to be delivered.
type WakeClaim struct {
	// Item is the item; its RoomID, Host and Seq are what the log keeps
	// (the item's own, for an item of no room that names one).
	Item   WakeItem
	Via    string
	Target string
	Label  string
	Holder string
	// State is the state it is written in: WakeClaimed for a command about
	// to start, WakeSent for a notification delivered.
	State string
	At    int64
}

// ClaimWake writes the claim of a wake: only while the item is still
// pending and the target was never woken for it. It returns the wake's id,
// and ok false (no error) when the item is no longer pending or the claim
// exists already — the caller must then not deliver it.
func (t *Tx) ClaimWake(ctx context.Context, c WakeClaim) (id int64, ok bool, err error) {
	err = t.queryRow(ctx, `INSERT INTO wake_log (inbox_id, kind, room_id, host, seq, via, target, label, holder, state, created_at)
		SELECT id, kind, ?, ?, ?, ?, ?, ?, ?, ?, ? FROM inbox WHERE id = ? AND state = 'pending'
		ON CONFLICT (target, inbox_id) DO NOTHING RETURNING id`,
		c.Item.RoomID, c.Item.Host, c.Item.Seq, c.Via, c.Target, c.Label, c.Holder, c.State, c.At, c.Item.ID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	return id, err == nil, err
}

// StartWake marks a claimed command as running since at.
func (t *Tx) StartWake(ctx context.Context, id, at int64) error {
	_, err := t.exec(ctx, `UPDATE wake_log SET state = 'running', started_at = ? WHERE id = ?`, at, id)
	return err
}

// WakeEnd is how a command ended.
type WakeEnd struct {
	State       string // WakeExited, WakeFailed, WakeTimeout, WakeInterrupted
	ExitCode    *int
	Error       string
	Output      []byte
	OutputBytes int64
	At          int64
}

// FinishWake records how a command ended.
func (t *Tx) FinishWake(ctx context.Context, id int64, e WakeEnd) error {
	out := e.Output
	if out == nil {
		out = []byte{}
	}
	var code any
	if e.ExitCode != nil {
		code = int64(*e.ExitCode)
	}
	_, err := t.exec(ctx, `UPDATE wake_log SET state = ?, exit_code = ?, error = ?, output = ?, output_bytes = ?, ended_at = ? WHERE id = ?`,
		e.State, code, e.Error, out, e.OutputBytes, e.At, id)
	return err
}

// InterruptWakes marks the claimed or running wakes of target that holder
// did not deliver as interrupted at at: their process stopped before they
// ended (the caller holds the target's lease now). It returns how many.
func (t *Tx) InterruptWakes(ctx context.Context, target, holder string, at int64) (int64, error) {
	return t.execN(ctx, `UPDATE wake_log SET state = 'interrupted', ended_at = ?,
		error = 'the process running it stopped before it ended'
		WHERE target = ? AND state IN ('claimed', 'running') AND holder != ?`, at, target, holder)
}

// LastWake returns when target was last woken (0: never).
func (q Q) LastWake(ctx context.Context, target string) (int64, error) {
	var at int64
	err := q.queryRow(ctx, `SELECT COALESCE(MAX(created_at), 0) FROM wake_log WHERE target = ?`, target).Scan(&at)
	return at, err
}

// PruneWakes forgets the wakes created before before.
func (t *Tx) PruneWakes(ctx context.Context, before int64) error {
	_, err := t.exec(ctx, `DELETE FROM wake_log WHERE created_at < ?`, before)
	return err
}

// WakeRecord is one wake as the log keeps it: the item, how and to what it
// was delivered, what became of it and what the agent did with the item.
type WakeRecord struct {
	ID      int64
	InboxID string
	Kind    string
	RoomID  string
	Host    string
	Seq     int64
	// Via is WakeViaCommand, WakeViaChannel or WakeViaCodex; Target is the
	// command's key or the session; Label what the operator recognizes it
	// by (the command's argv, the session); Holder the process that
	// delivered it ("serve pid 4242").
	Via, Target, Label, Holder string
	// State is one of the Wake* states.
	State     string
	CreatedAt int64
	StartedAt int64
	EndedAt   int64
	// ExitCode is the command's exit status, nil until it exited.
	ExitCode *int
	Error    string
	// Output is the command's stdout and stderr, bounded; OutputBytes is
	// how many bytes it wrote in all.
	Output      []byte
	OutputBytes int64
	// ClaimedAt and AckedAt are when the agent claimed and acknowledged
	// the item (0: not yet); AckState is how (handled, dismissed,
	// deferred).
	ClaimedAt int64
	AckedAt   int64
	AckState  string
}

const wakeColumns = `id, inbox_id, kind, room_id, host, seq, via, target, label, holder, state, created_at, started_at, ended_at,
	exit_code, error, output, output_bytes, claimed_at, acked_at, ack_state`

// WakeFilter selects wakes, newest first.
type WakeFilter struct {
	// Limit bounds the rows (capped at 500; 50 when zero).
	Limit int
	// Before returns only wakes with an id below it (paging; 0: from the
	// newest).
	Before int64
	// Via keeps one way of delivery ("" for all).
	Via string
	// InboxID keeps the wakes of one item ("" for all).
	InboxID string
}

// RecentWakes lists wakes newest first: the read API of the wake log for
// `apconnect doctor` and the operator's view.
func (q Q) RecentWakes(ctx context.Context, f WakeFilter) ([]WakeRecord, error) {
	limit := f.Limit
	switch {
	case limit <= 0:
		limit = 50
	case limit > 500:
		limit = 500
	}
	where := []string{"1 = 1"}
	var args []any
	if f.Before > 0 {
		where, args = append(where, "id < ?"), append(args, f.Before)
	}
	if f.Via != "" {
		where, args = append(where, "via = ?"), append(args, f.Via)
	}
	if f.InboxID != "" {
		where, args = append(where, "inbox_id = ?"), append(args, f.InboxID)
	}
	rows, err := q.query(ctx, `SELECT `+wakeColumns+` FROM wake_log WHERE `+strings.Join(where, " AND ")+
		` ORDER BY id DESC LIMIT `+strconv.Itoa(limit), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []WakeRecord
	for rows.Next() {
		var w WakeRecord
		var code sql.NullInt64
		if err := rows.Scan(&w.ID, &w.InboxID, &w.Kind, &w.RoomID, &w.Host, &w.Seq, &w.Via, &w.Target, &w.Label, &w.Holder,
			&w.State, &w.CreatedAt, &w.StartedAt, &w.EndedAt, &code, &w.Error, &w.Output, &w.OutputBytes,
			&w.ClaimedAt, &w.AckedAt, &w.AckState); err != nil {
			return nil, err
		}
		if code.Valid {
			c := int(code.Int64)
			w.ExitCode = &c
		}
		out = append(out, w)
	}
	return out, rows.Err()
}
