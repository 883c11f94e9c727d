package wake

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"apconnect/host/config"
	"apconnect/host/connector"
	"apconnect/host/engine"
	"apconnect/host/store"
)

// Defaults of Options.
const (
	// DefaultMinGap is the least time between two runs of one command.
	DefaultMinGap = 5 * time.Second
	// DefaultLeaseTTL is how long a lease holds without renewal; its holder
	// renews it every third of that.
	DefaultLeaseTTL = 15 * time.Second
	// DefaultPoll is how often the store is read for items another process
	// added (this process's own wake the jobs at once).
	DefaultPoll = 500 * time.Millisecond
	// DefaultOutputLimit bounds the output of one run kept in the log.
	DefaultOutputLimit = 16 << 10
	// LogRetention is how long the wake log keeps a wake.
	LogRetention = 30 * 24 * time.Hour
)

// Options configure a Service.
type Options struct {
	// Process names this process in leases and the wake log ("serve",
	// "mcp"); with the pid it tells the operator who delivered a wake.
	Process string
	// Logger receives the logs (the engine's when nil).
	Logger *slog.Logger
	// Environ is the environment commands start from (os.Environ() when
	// nil); every APCONNECT_ variable is removed from it.
	Environ []string
	// MinGap is the least time between two runs of one command
	// (DefaultMinGap when zero).
	MinGap time.Duration
	// LeaseTTL is how long a lease holds without renewal (DefaultLeaseTTL
	// when zero).
	LeaseTTL time.Duration
	// Poll paces the reads for other processes' items (DefaultPoll when
	// zero).
	Poll time.Duration
	// OutputLimit bounds the output kept per run (DefaultOutputLimit when
	// zero).
	OutputLimit int
	// Syncs are background syncs run besides the connector's own
	// (syncJobs).
	Syncs []SyncJob
}

// Service is the background waking of one connector process: the command
// runners, the modules' periodic syncs and, for the MCP layer, the channel
// notifications of each session (Announce). Several processes of one
// identity may each run a Service; leases in the store let one of them run
// a given job at a time.
type Service struct {
	conn   *connector.Connector
	e      *engine.Engine
	st     *store.Store
	cfg    config.Wake
	home   string
	opts   Options
	holder string
	log    *slog.Logger
	syncs  []SyncJob

	mu     sync.Mutex
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New prepares the Service of a connector; Start begins its work.
func New(conn *connector.Connector, opts Options) *Service {
	e := conn.Engine()
	if opts.Process == "" {
		opts.Process = "apconnect"
	}
	if opts.Logger == nil {
		opts.Logger = e.Log
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ()
	}
	if opts.MinGap <= 0 {
		opts.MinGap = DefaultMinGap
	}
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = DefaultLeaseTTL
	}
	if opts.Poll <= 0 {
		opts.Poll = DefaultPoll
	}
	if opts.OutputLimit <= 0 {
		opts.OutputLimit = DefaultOutputLimit
	}
	var b [3]byte
	_, _ = rand.Read(b[:])
	s := &Service{conn: conn, e: e, st: e.Store, cfg: e.Config.Wake, home: e.Config.Home(), opts: opts,
		holder: fmt.Sprintf("%s pid %d #%s", opts.Process, os.Getpid(), hex.EncodeToString(b[:])), log: opts.Logger}
	s.syncs = append(syncJobs(conn), opts.Syncs...)
	return s
}

// Holder names this process in leases and the wake log.
func (s *Service) Holder() string { return s.holder }

// Channel reports whether Claude Code channel mode is on ([wake]
// claude_channel).
func (s *Service) Channel() bool { return s.cfg.ClaudeChannel }

// Start begins the background work: a runner per [[wake.command]], each
// module's periodic sync and the pruning of the wake log. It returns at
// once; Close stops it. The connector's own background work (live rooms,
// resubmission) is started by the connector.
func (s *Service) Start(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		return
	}
	ctx, s.cancel = context.WithCancel(ctx)
	for _, wc := range commands(s.cfg.Commands) {
		r := s.newRunner(wc)
		s.wg.Go(func() { r.run(ctx) })
	}
	for _, j := range s.syncs {
		s.wg.Go(func() { s.runSync(ctx, j) })
	}
	s.wg.Go(func() { s.prune(ctx) })
}

// Close stops the background work, waits for it (a command still running
// is killed and recorded as interrupted) and releases the leases.
func (s *Service) Close() error {
	s.mu.Lock()
	cancel := s.cancel
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	s.wg.Wait()
	return nil
}

// commands merges the [[wake.command]]s of one argv (one command: its
// claims and lease are its argv's) into the first, with the kinds of all.
func commands(cmds []config.WakeCommand) []config.WakeCommand {
	var out []config.WakeCommand
	at := map[string]int{}
	for _, wc := range cmds {
		key := CommandKey(wc.Argv)
		i, dup := at[key]
		if !dup {
			at[key] = len(out)
			wc.Kinds = slices.Clone(wc.Kinds)
			out = append(out, wc)
			continue
		}
		for _, k := range wc.Kinds {
			if !slices.Contains(out[i].Kinds, k) {
				out[i].Kinds = append(out[i].Kinds, k)
			}
		}
	}
	return out
}

// prune forgets wakes older than LogRetention, hourly.
func (s *Service) prune(ctx context.Context) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		before := s.e.Now().Add(-LogRetention).UnixMilli()
		if err := s.st.Write(ctx, func(tx *store.Tx) error { return tx.PruneWakes(ctx, before) }); err != nil && ctx.Err() == nil {
			s.log.Warn("pruning the wake log", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sleep waits d, or less when ctx ends; it reports whether ctx is still
// live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
