package wake

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	"apconnect/host/config"
	"apconnect/host/store"
	"apconnect/host/text"
)

// allPriorities keeps items of every priority in a WakeQuery.
const allPriorities = 2

// runner runs one [[wake.command]] for each pending item of its kinds:
// one run at a time, each item once (the claim is the wake log row, written
// with the lease in one transaction before the command starts), at least
// MinGap apart, in whichever process of the identity holds its lease.
type runner struct {
	s     *Service
	wc    config.WakeCommand
	key   string // the lease job and the wake log target
	label string
	lease *lease
}

// CommandKey is the wake log target (and lease job) of a command: a hash of
// its argv, so the same command keeps its claims across restarts and
// processes, and a changed command starts afresh.
func CommandKey(argv []string) string {
	b, _ := json.Marshal(argv)
	sum := sha256.Sum256(b)
	return commandJob + hex.EncodeToString(sum[:8])
}

func (s *Service) newRunner(wc config.WakeCommand) *runner {
	key := CommandKey(wc.Argv)
	return &runner{s: s, wc: wc, key: key, label: text.Truncate(strings.Join(wc.Argv, " "), 200), lease: s.lease(key, s.opts.LeaseTTL)}
}

// run looks for items at once after every local change and every Poll
// (items other processes stored), until ctx ends.
func (r *runner) run(ctx context.Context) {
	defer r.lease.release()
	poll := time.NewTicker(r.s.opts.Poll)
	defer poll.Stop()
	for {
		changed := r.s.e.Changed()
		r.round(ctx)
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-poll.C:
		}
	}
}

// round runs the command for every item waiting for it, oldest first, while
// this process holds the command's lease.
func (r *runner) round(ctx context.Context) {
	for ctx.Err() == nil {
		items, err := r.s.st.Read().WakeCandidates(ctx, store.WakeQuery{Target: r.key, Kinds: r.wc.Kinds, MaxPriority: allPriorities, Limit: 1})
		if err != nil {
			if ctx.Err() == nil {
				r.s.log.Warn("wake: reading the inbox", "command", r.label, "err", err)
			}
			return
		}
		if len(items) == 0 || r.lease.otherHolds(ctx) {
			return
		}
		last, err := r.s.st.Read().LastWake(ctx, r.key)
		if err != nil {
			return
		}
		if wait := time.Duration(last+r.s.opts.MinGap.Milliseconds()-r.s.e.NowMS()) * time.Millisecond; wait > 0 {
			if !sleep(ctx, wait) {
				return
			}
			continue // the item may be gone by now
		}
		id, held, ok := r.claim(ctx, items[0])
		if !held {
			return // another process runs this command
		}
		if ok {
			r.exec(ctx, id, items[0])
		}
	}
}

// claim takes or renews the lease and writes the item's claim in one
// transaction: held is false when another process holds the lease, ok
// false when the item is no longer pending or was claimed already. A lease
// taken over from a process that stopped marks that process's unfinished
// runs interrupted.
func (r *runner) claim(ctx context.Context, w store.WakeItem) (id int64, held, ok bool) {
	lw := w
	if it, err := item(w); err == nil {
		lw = logged(w, it)
	}
	err := r.s.st.Write(ctx, func(tx *store.Tx) error {
		var fresh bool
		var err error
		if held, fresh, err = r.lease.holdTx(ctx, tx); err != nil || !held {
			return err
		}
		now := r.s.e.NowMS()
		if fresh {
			if _, err := tx.InterruptWakes(ctx, r.key, r.s.holder, now); err != nil {
				return err
			}
		}
		id, ok, err = tx.ClaimWake(ctx, store.WakeClaim{Item: lw, Via: store.WakeViaCommand, Target: r.key, Label: r.label,
			Holder: r.s.holder, State: store.WakeClaimed, At: now})
		return err
	})
	if err != nil {
		if ctx.Err() == nil {
			r.s.log.Warn("wake: claiming an item", "command", r.label, "inbox_id", w.ID, "err", err)
		}
		return 0, false, false
	}
	return id, held, ok
}
