package plugin

import (
	"fmt"
	"time"
)

// Limits bound one plugin. Zero fields take the defaults (DefaultLimits);
// the operator may override them per plugin in the config.
type Limits struct {
	// MemoryBytes caps the linear memory of each instance (rounded down to
	// 64 KiB pages). A Go guest needs at least about 3 MiB. The plugin's
	// total is at most MemoryBytes × MaxInstances.
	MemoryBytes uint64
	// MaxInstances bounds the instance pool: concurrent calls beyond it wait.
	MaxInstances int
	// StackBytes bounds the call stack of each call (and of each new
	// instance's initialisation): the sum of the frame weights of the
	// guest functions active at once, an upper bound of the bytes wazero's
	// stack holds for them. Deeper recursion traps ("call stack
	// exhausted"). Host memory for the stack stays below about three times
	// this per call (wazero doubles the stack as it grows and copies it).
	StackBytes uint64

	// Per-call deadlines; the module is closed when one passes.
	ValidateTimeout time.Duration
	WatchTimeout    time.Duration
	ToolTimeout     time.Duration
	// LoadTimeout bounds instantiation (the guest's initialisation) and the
	// describe and pack calls.
	LoadTimeout time.Duration

	// MaxInputBytes caps an input envelope; a larger watch batch is split.
	MaxInputBytes int
	// MaxOutputBytes caps the output of validate, watch and tool calls.
	MaxOutputBytes int
	// MaxDescribeBytes caps the output of describe and pack calls.
	MaxDescribeBytes int
	// MaxOutputDepth caps the nesting of arrays and objects in any output.
	MaxOutputDepth int
	// MaxWatchBatch caps the records of one watch call.
	MaxWatchBatch int
	// LogLines is the size of the plugin's ring log.
	LogLines int
}

// DefaultLimits returns the limits of a plugin whose config overrides
// nothing.
func DefaultLimits() Limits { return defaultLimits }

var defaultLimits = Limits{
	MemoryBytes:      64 << 20,
	MaxInstances:     2,
	StackBytes:       8 << 20,
	ValidateTimeout:  50 * time.Millisecond,
	WatchTimeout:     50 * time.Millisecond,
	ToolTimeout:      2 * time.Second,
	LoadTimeout:      5 * time.Second,
	MaxInputBytes:    2 << 20,
	MaxOutputBytes:   256 << 10,
	MaxDescribeBytes: 1 << 20,
	MaxOutputDepth:   32,
	MaxWatchBatch:    256,
	LogLines:         200,
}

const (
	pageSize      = 64 << 10
	maxPages      = 65536
	minInputBytes = 64 << 10
	minStackBytes = 64 << 10
	maxStackBytes = 256 << 20
)

// WithDefaults returns l with every zero field set from DefaultLimits.
func (l Limits) WithDefaults() Limits {
	d := defaultLimits
	if l.MemoryBytes == 0 {
		l.MemoryBytes = d.MemoryBytes
	}
	if l.MaxInstances == 0 {
		l.MaxInstances = d.MaxInstances
	}
	if l.StackBytes == 0 {
		l.StackBytes = d.StackBytes
	}
	if l.ValidateTimeout == 0 {
		l.ValidateTimeout = d.ValidateTimeout
	}
	if l.WatchTimeout == 0 {
		l.WatchTimeout = d.WatchTimeout
	}
	if l.ToolTimeout == 0 {
		l.ToolTimeout = d.ToolTimeout
	}
	if l.LoadTimeout == 0 {
		l.LoadTimeout = d.LoadTimeout
	}
	if l.MaxInputBytes == 0 {
		l.MaxInputBytes = d.MaxInputBytes
	}
	if l.MaxOutputBytes == 0 {
		l.MaxOutputBytes = d.MaxOutputBytes
	}
	if l.MaxDescribeBytes == 0 {
		l.MaxDescribeBytes = d.MaxDescribeBytes
	}
	if l.MaxOutputDepth == 0 {
		l.MaxOutputDepth = d.MaxOutputDepth
	}
	if l.MaxWatchBatch == 0 {
		l.MaxWatchBatch = d.MaxWatchBatch
	}
	if l.LogLines == 0 {
		l.LogLines = d.LogLines
	}
	return l
}

// check reports limits that cannot work.
func (l Limits) check() error {
	switch {
	case l.MemoryBytes < pageSize || l.MemoryBytes/pageSize > maxPages:
		return fmt.Errorf("memory limit %d bytes is outside 64 KiB … 4 GiB", l.MemoryBytes)
	case l.MaxInstances < 1 || l.MaxInstances > 64:
		return fmt.Errorf("max instances %d is outside 1 … 64", l.MaxInstances)
	case l.StackBytes < minStackBytes || l.StackBytes > maxStackBytes:
		return fmt.Errorf("stack limit %d bytes is outside 64 KiB … 256 MiB", l.StackBytes)
	case l.ValidateTimeout < 0 || l.WatchTimeout < 0 || l.ToolTimeout < 0 || l.LoadTimeout < 0:
		return fmt.Errorf("timeouts must be positive")
	case l.MaxInputBytes < minInputBytes:
		return fmt.Errorf("max input %d bytes is below %d", l.MaxInputBytes, minInputBytes)
	case l.MaxOutputBytes < 1024 || l.MaxDescribeBytes < 1024:
		return fmt.Errorf("output caps must be at least 1 KiB")
	case l.MaxOutputDepth < 4 || l.MaxOutputDepth > 128:
		return fmt.Errorf("max output depth %d is outside 4 … 128", l.MaxOutputDepth)
	case l.MaxWatchBatch < 1 || l.MaxWatchBatch > 1024:
		return fmt.Errorf("max watch batch %d is outside 1 … 1024", l.MaxWatchBatch)
	case l.LogLines < 1 || l.LogLines > 10000:
		return fmt.Errorf("log lines %d is outside 1 … 10000", l.LogLines)
	}
	return nil
}

func (l Limits) memoryPages() uint32 { return uint32(l.MemoryBytes / pageSize) }

func (l Limits) timeout(op Op) time.Duration {
	switch op {
	case OpValidate:
		return l.ValidateTimeout
	case OpWatch:
		return l.WatchTimeout
	case OpTool:
		return l.ToolTimeout
	}
	return l.LoadTimeout
}

func (l Limits) maxOutput(op Op) int {
	if op == OpDescribe || op == OpPack {
		return l.MaxDescribeBytes
	}
	return l.MaxOutputBytes
}
