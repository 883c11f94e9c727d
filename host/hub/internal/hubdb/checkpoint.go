package hubdb

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
)

// checkpointer copies the write-ahead log into the database file on a
// goroutine of its own, so that the writes do not wait for it.
//
// SQLite checkpoints inside the commit that makes the log long enough, on
// the writer's connection: with the write lock held, every write of the hub
// waited for the copy and its two fsyncs (about 18 ms every 4,000 pages;
// commits over 3 ms took 9-14 % of the wall time of
// BenchmarkDiscourseWrites/rooms=8, 5-9 % with this). A PASSIVE
// checkpoint on a read connection (query_only does not forbid it) copies
// the same pages while writes go on; SQLite keeps that safe (it copies no
// page a reader still needs from the log, and syncs the log before it
// writes the database). The log starts over from its beginning only when
// a write finds it wholly copied, which a steady stream of writes rarely
// allows, so the writer still checkpoints at 16,000 pages (writerPragmas):
// by then most of the log has been copied, and that checkpoint is short.
//
// It runs every ckptFrames pages or so. The log's length is known only
// from a checkpoint's answer, so it counts commits: each checkpoint sets
// how many commits the next waits for from the pages the last ones wrote.
type checkpointer struct {
	reader *sql.DB
	nudge  chan int64 // the commit count that reached next
	quit   chan struct{}
	done   chan struct{}
	once   sync.Once
	next   atomic.Int64 // the commit count that nudges the next checkpoint
	runs   atomic.Int64 // checkpoints run (for the tests)

	// The last checkpoint's commit count and answer (owned by the
	// goroutine).
	lastCommits, lastLog int64
	copiedAll            bool
}

// ckptFrames is roughly how many pages the log gains between two
// background checkpoints (a variable for the tests): 4,000 pages still fit
// one block of the WAL index, and a page written again and again is
// copied once per checkpoint.
var ckptFrames int64 = 4000

// The first checkpoint waits for ckptFirst commits; the later ones for
// what the pages per commit give, within [ckptMinCommits, ckptMaxCommits].
const (
	ckptFirst      = 256
	ckptMinCommits = 16
	ckptMaxCommits = 4096
)

// start runs the checkpointer on reader.
func (c *checkpointer) start(reader *sql.DB) {
	c.reader = reader
	c.nudge = make(chan int64, 1)
	c.quit = make(chan struct{})
	c.done = make(chan struct{})
	c.next.Store(ckptFirst)
	go c.run()
}

// committed tells the checkpointer that commit number n (counted from 1)
// has committed, and nudges the goroutine when n reaches the next
// checkpoint's count. The caller holds the write lock.
func (c *checkpointer) committed(n int64) {
	if c.nudge == nil || n < c.next.Load() {
		return
	}
	c.next.Store(n + ckptMaxCommits) // until the checkpoint sets it
	select {
	case c.nudge <- n:
	default:
	}
}

func (c *checkpointer) run() {
	defer close(c.done)
	for {
		select {
		case n := <-c.nudge:
			c.next.Store(n + c.checkpoint(n))
		case <-c.quit:
			return
		}
	}
}

// checkpoint runs a PASSIVE checkpoint at commit count n and returns how
// many commits the next one waits for. An error (SQLITE_BUSY while the
// writer checkpoints, say) just waits for the next: the writer's own
// checkpoints bound the log.
func (c *checkpointer) checkpoint(n int64) int64 {
	var busy, log, copied int64
	err := c.reader.QueryRowContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &log, &copied)
	c.runs.Add(1)
	if err != nil || log <= 0 {
		return ckptFirst
	}
	// The pages the log gained since the last checkpoint: all of it when
	// that one copied everything (the next write started the log over) or
	// the log is shorter now (the writer's checkpoint did).
	gained := log - c.lastLog
	if c.copiedAll || gained <= 0 {
		gained = log
	}
	commits := n - c.lastCommits
	c.lastCommits, c.lastLog, c.copiedAll = n, log, copied == log
	if commits <= 0 {
		return ckptFirst
	}
	return min(max(ckptFrames*commits/gained, ckptMinCommits), ckptMaxCommits)
}

// stop ends the goroutine, waiting for a checkpoint that is running. A
// commit after it nudges nobody.
func (c *checkpointer) stop() {
	c.once.Do(func() {
		if c.quit == nil {
			return
		}
		close(c.quit)
		<-c.done
	})
}
