package wake

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"time"

	"apconnect/host/store"
)

// waitDelay is how long a run's output may stay open after the command
// ended or was killed (a child it left behind holding the pipe).
const waitDelay = 2 * time.Second

// exec runs the command for one claimed item and records how it ended.
func (r *runner) exec(ctx context.Context, id int64, w store.WakeItem) {
	end := r.start(ctx, id, w)
	end.At = r.s.e.NowMS()
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := r.s.st.Write(wctx, func(tx *store.Tx) error { return tx.FinishWake(wctx, id, end) }); err != nil {
		r.s.log.Warn("wake: recording a run", "command", r.label, "inbox_id", w.ID, "err", err)
	}
	attrs := []any{"command", r.label, "inbox_id", w.ID, "kind", w.Kind, "state", end.State}
	if end.ExitCode != nil {
		attrs = append(attrs, "exit", *end.ExitCode)
	}
	if end.Error != "" {
		attrs = append(attrs, "err", end.Error)
	}
	if end.State == store.WakeExited && *end.ExitCode == 0 {
		r.s.log.Info("wake: command ran", attrs...)
	} else {
		r.s.log.Warn("wake: command did not succeed (not retried)", attrs...)
	}
}

// start runs the command: the item on stdin, the item's environment, the
// home as working directory, the timeout; it returns how the run ended
// (without its time).
func (r *runner) start(ctx context.Context, id int64, w store.WakeItem) store.WakeEnd {
	it, err := item(w)
	if err != nil {
		return store.WakeEnd{State: store.WakeFailed, Error: err.Error()}
	}
	stdin, err := json.Marshal(it)
	if err != nil {
		return store.WakeEnd{State: store.WakeFailed, Error: err.Error()}
	}
	rctx, cancel := context.WithTimeout(ctx, r.wc.Timeout)
	defer cancel()
	cmd := exec.CommandContext(rctx, r.wc.Argv[0], r.wc.Argv[1:]...)
	cmd.Dir = r.s.home
	cmd.Env = commandEnv(r.s.opts.Environ, it)
	cmd.Stdin = bytes.NewReader(stdin)
	out := &boundedBuffer{limit: r.s.opts.OutputLimit}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = waitDelay
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		return store.WakeEnd{State: store.WakeFailed, Error: err.Error()}
	}
	if err := r.s.st.Write(ctx, func(tx *store.Tx) error { return tx.StartWake(ctx, id, r.s.e.NowMS()) }); err != nil && ctx.Err() == nil {
		r.s.log.Warn("wake: recording a start", "command", r.label, "err", err)
	}
	r.s.log.Info("wake: command started", "command", r.label, "inbox_id", it.ID, "kind", it.Kind, "pid", cmd.Process.Pid)
	keep, stopKeep := context.WithCancel(ctx)
	go r.lease.keep(keep)
	err = cmd.Wait()
	stopKeep()
	end := store.WakeEnd{Output: out.bytes(), OutputBytes: out.total()}
	var ee *exec.ExitError
	switch {
	case errors.Is(rctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		end.State, end.Error = store.WakeTimeout, fmt.Sprintf("killed after the timeout of %s", r.wc.Timeout)
	case ctx.Err() != nil:
		end.State, end.Error = store.WakeInterrupted, "killed: the connector process stopped"
	case err == nil:
		end.State, end.ExitCode = store.WakeExited, new(0)
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		code := ee.ExitCode()
		end.State, end.ExitCode = store.WakeExited, &code
	default:
		end.State, end.Error = store.WakeFailed, err.Error()
	}
	return end
}

// boundedBuffer keeps the first limit bytes written to it and counts all.
type boundedBuffer struct {
	limit int
	mu    sync.Mutex
	buf   []byte
	n     int64
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n += int64(len(p))
	if room := b.limit - len(b.buf); room > 0 {
		b.buf = append(b.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (b *boundedBuffer) bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf)
}

func (b *boundedBuffer) total() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n
}
