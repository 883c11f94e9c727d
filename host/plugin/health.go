package plugin

import (
	"errors"
	"time"
)

// stats are a plugin's call counters, guarded by Plugin.mu.
type stats struct {
	calls       uint64
	failures    uint64
	consecutive uint64
	discarded   uint64
	byCode      map[Code]uint64
	lastErr     *Error
	lastErrAt   time.Time
	lastCallAt  time.Time
	slowest     map[Op]time.Duration
}

// Health is a plugin's state for "apconnect doctor" and identity_current.
type Health struct {
	Name    string   `json:"name"`
	Version string   `json:"version,omitempty"`
	Source  string   `json:"source"`
	Digest  string   `json:"sha256,omitempty"`
	Grants  []string `json:"grants"`
	// Loaded is false for a plugin that failed to load (see LoadFailure) or
	// was closed.
	Loaded   bool      `json:"loaded"`
	LoadedAt time.Time `json:"loaded_at,omitzero"`

	Calls uint64 `json:"calls"`
	// Failures counts failed calls (timeouts, traps, refused output, guest
	// errors); ConsecutiveFailures restarts at every success.
	Failures            uint64            `json:"failures"`
	ConsecutiveFailures uint64            `json:"consecutive_failures"`
	FailuresByCode      map[string]uint64 `json:"failures_by_code,omitempty"`
	DiscardedInstances  uint64            `json:"discarded_instances"`
	Instances           int               `json:"instances"`

	LastError     string    `json:"last_error,omitempty"`
	LastErrorCode Code      `json:"last_error_code,omitempty"`
	LastErrorAt   time.Time `json:"last_error_at,omitzero"`
	LastCallAt    time.Time `json:"last_call_at,omitzero"`
	// SlowestCallMicros is the slowest call per operation, in microseconds.
	SlowestCallMicros map[string]int64 `json:"slowest_call_us,omitempty"`

	// Log is the tail of the plugin's ring log (stdout, stderr, log import).
	Log        []LogLine `json:"log,omitempty"`
	LogDropped uint64    `json:"log_dropped,omitempty"`
}

// record counts one call. Caller mistakes (unknown tool, bad arguments)
// and cancellations by the caller are not plugin failures.
func (p *Plugin) record(op Op, err error, elapsed time.Duration) {
	now := p.rt.opts.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	s := &p.stats
	s.calls++
	s.lastCallAt = now
	if s.slowest == nil {
		s.slowest = map[Op]time.Duration{}
	}
	if elapsed > s.slowest[op] {
		s.slowest[op] = elapsed
	}
	if err == nil {
		s.consecutive = 0
		return
	}
	var e *Error
	if !errors.As(err, &e) {
		e = &Error{Code: CodeTrap, Plugin: p.label(), Op: op.String(), Message: err.Error()}
	}
	switch e.Code {
	case CodeInvalidArguments, CodeUnknown, CodeCanceled, CodeClosed:
		return
	}
	s.failures++
	s.consecutive++
	if s.byCode == nil {
		s.byCode = map[Code]uint64{}
	}
	s.byCode[e.Code]++
	s.lastErr = e
	s.lastErrAt = now
	p.rt.opts.Logger.Warn("plugin call failed", "plugin", p.label(), "op", op.String(), "code", string(e.Code), "error", e.Message)
}

func (p *Plugin) noteDiscard() {
	p.mu.Lock()
	p.stats.discarded++
	p.mu.Unlock()
}

// Health reports the plugin's state with up to logLines lines of its log
// (none when logLines is 0, all kept lines when negative).
func (p *Plugin) Health(logLines int) Health {
	p.mu.Lock()
	s := p.stats
	h := Health{
		Name:                p.desc.Name,
		Version:             p.desc.Version,
		Source:              p.source,
		Digest:              p.digest,
		Grants:              p.grants.Strings(),
		Loaded:              !p.closed && p.startErr() == nil,
		LoadedAt:            p.loadedAt,
		Calls:               s.calls,
		Failures:            s.failures,
		ConsecutiveFailures: s.consecutive,
		DiscardedInstances:  s.discarded,
		LastErrorAt:         s.lastErrAt,
		LastCallAt:          s.lastCallAt,
	}
	if len(s.byCode) > 0 {
		h.FailuresByCode = map[string]uint64{}
		for c, n := range s.byCode {
			h.FailuresByCode[string(c)] = n
		}
	}
	if len(s.slowest) > 0 {
		h.SlowestCallMicros = map[string]int64{}
		for op, d := range s.slowest {
			h.SlowestCallMicros[op.String()] = d.Microseconds()
		}
	}
	if s.lastErr != nil {
		h.LastError = s.lastErr.Error()
		h.LastErrorCode = s.lastErr.Code
	}
	p.mu.Unlock()
	h.Instances = p.pool.size()
	if logLines != 0 {
		h.Log, h.LogDropped = p.log.tail(max(logLines, 0))
	} else {
		_, h.LogDropped = p.log.tail(1)
	}
	return h
}

// startErr is the error that makes a plugin described from the cache
// fail closed, once Ready found one.
func (p *Plugin) startErr() error {
	_, err := p.ready.state()
	return err
}

// LoadFailure is the Health of a configured plugin that could not be
// loaded, so that doctor lists it with the reason.
func LoadFailure(source string, grants Grants, err error) Health {
	h := Health{Source: source, Grants: grants.Strings(), Loaded: false, Failures: 1, ConsecutiveFailures: 1}
	var e *Error
	if errors.As(err, &e) {
		h.LastErrorCode = e.Code
		h.FailuresByCode = map[string]uint64{string(e.Code): 1}
	}
	if err != nil {
		h.LastError = err.Error()
	}
	return h
}
