package store

import "context"

// The ops group: what the operator's view (host/opview) reads about the
// connector processes of the Agent ID. Every process that opens the
// connector — `apconnect serve`, each stdio `apconnect mcp`, each
// `apconnect call` — keeps a heartbeat row here while it runs: its pid,
// transport, MCP client, last tool call and live-stream states, rewritten
// at least every IntervalMS. A row whose BeatAt is older than a few
// intervals belongs to a process that stopped beating (killed, hung or on
// a suspended machine): the view shows it as stale, never as online. A
// clean exit writes StoppedAt.

var opsMigrations = []Migration{
	{Version: 1, Name: "process heartbeats", SQL: opsV1},
}

const opsV1 = `
CREATE TABLE heartbeats (
	id             TEXT    PRIMARY KEY, -- one per process: hostname, pid and start time
	pid            INTEGER NOT NULL,
	hostname       TEXT    NOT NULL,
	command        TEXT    NOT NULL,    -- serve, mcp, call
	transport      TEXT    NOT NULL,    -- http, stdio, cli
	identity       TEXT    NOT NULL,
	addr           TEXT    NOT NULL DEFAULT '', -- serve's loopback listener
	client_name    TEXT    NOT NULL DEFAULT '', -- the MCP client's clientInfo
	client_version TEXT    NOT NULL DEFAULT '',
	started_at     INTEGER NOT NULL,
	beat_at        INTEGER NOT NULL,
	interval_ms    INTEGER NOT NULL,
	last_call      TEXT    NOT NULL DEFAULT '', -- the last tool called
	last_call_at   INTEGER NOT NULL DEFAULT 0,
	calls          INTEGER NOT NULL DEFAULT 0,
	streams        BLOB,                        -- JSON array of live-stream states
	stopped_at     INTEGER NOT NULL DEFAULT 0   -- a clean exit; 0 while running
) STRICT;
CREATE INDEX heartbeats_beat ON heartbeats (beat_at);
`

// Heartbeat is the liveness record of one connector process.
type Heartbeat struct {
	ID            string
	PID           int64
	Hostname      string
	Command       string // serve, mcp, call
	Transport     string // http, stdio, cli
	Identity      string
	Addr          string
	ClientName    string
	ClientVersion string
	StartedAt     int64 // Unix ms
	BeatAt        int64 // the last write, Unix ms
	IntervalMS    int64 // the process rewrites the row at least this often
	LastCall      string
	LastCallAt    int64
	Calls         int64
	Streams       []byte // JSON array, nil when the process follows none
	StoppedAt     int64  // a clean exit, Unix ms; 0 while running
}

// Stale reports whether the process has missed its heartbeats at now: no
// write for more than three intervals, and no clean exit.
func (h *Heartbeat) Stale(now int64) bool {
	return h.StoppedAt == 0 && now-h.BeatAt > 3*max(h.IntervalMS, 1)
}

const heartbeatColumns = `id, pid, hostname, command, transport, identity, addr, client_name, client_version,
	started_at, beat_at, interval_ms, last_call, last_call_at, calls, streams, stopped_at`

// PutHeartbeat writes a process's heartbeat (inserting or replacing it).
func (t *Tx) PutHeartbeat(ctx context.Context, h *Heartbeat) error {
	_, err := t.exec(ctx, `INSERT OR REPLACE INTO heartbeats (`+heartbeatColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		h.ID, h.PID, h.Hostname, h.Command, h.Transport, h.Identity, h.Addr, h.ClientName, h.ClientVersion,
		h.StartedAt, h.BeatAt, h.IntervalMS, h.LastCall, h.LastCallAt, h.Calls, h.Streams, h.StoppedAt)
	return err
}

// PruneHeartbeats deletes the rows of processes that last beat before
// beatBefore (stale ones long gone) and of those that stopped cleanly before
// stoppedBefore, and returns how many it deleted.
func (t *Tx) PruneHeartbeats(ctx context.Context, beatBefore, stoppedBefore int64) (int64, error) {
	return t.execN(ctx, `DELETE FROM heartbeats WHERE beat_at < ? OR (stopped_at != 0 AND stopped_at < ?)`, beatBefore, stoppedBefore)
}

// Heartbeats lists the heartbeats of the processes that did not exit
// cleanly (running or stale; at most 200), then of those that did (at most
// stopped), each the most recently started first: a stream of short `call`
// processes never hides a long-running one.
func (q Q) Heartbeats(ctx context.Context, stopped int) ([]*Heartbeat, error) {
	stopped = min(max(stopped, 0), 200)
	rows, err := q.query(ctx, `SELECT * FROM (SELECT `+heartbeatColumns+` FROM heartbeats WHERE stopped_at = 0
		ORDER BY started_at DESC, id LIMIT 200)
		UNION ALL SELECT * FROM (SELECT `+heartbeatColumns+` FROM heartbeats WHERE stopped_at != 0
		ORDER BY started_at DESC, id LIMIT ?)`, stopped)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Heartbeat
	for rows.Next() {
		var h Heartbeat
		if err := rows.Scan(&h.ID, &h.PID, &h.Hostname, &h.Command, &h.Transport, &h.Identity, &h.Addr, &h.ClientName,
			&h.ClientVersion, &h.StartedAt, &h.BeatAt, &h.IntervalMS, &h.LastCall, &h.LastCallAt, &h.Calls, &h.Streams,
			&h.StoppedAt); err != nil {
			return nil, err
		}
		out = append(out, &h)
	}
	return out, rows.Err()
}
