package plugin

import (
	"context"
	"sync"

	"github.com/tetratelabs/wazero/api"
)

// instance is one instantiated copy of a plugin module. It is used by one
// call at a time.
type instance struct {
	mod    api.Module
	call   api.Function
	budget api.MutableGlobal // wasmguard's stack budget
	stop   api.MutableGlobal // wasmguard's stop flag (stop.go)
	fuel   api.MutableGlobal // wasmguard's checkpoints before a return to Go
}

// stackExhausted reports whether the instance's last trap was its stack
// budget, which wasmguard's code sets to -1 before it traps for that.
func (i *instance) stackExhausted() bool { return int64(i.budget.Get()) < 0 }

// pool holds a plugin's idle instances and bounds how many exist at once.
// Instances are created lazily; a failed one is closed, never returned.
type pool struct {
	slots chan struct{} // one token per instance that may exist
	mu    sync.Mutex
	idle  []*instance
	live  int
}

func newPool(max int) *pool {
	return &pool{slots: make(chan struct{}, max)}
}

// acquire returns an idle instance or creates one with spawn, waiting for a
// free slot when the pool is at its bound.
func (p *pool) acquire(ctx context.Context, spawn func() (*instance, error)) (*instance, error) {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		inst := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return inst, nil
	}
	p.mu.Unlock()
	inst, err := spawn()
	if err != nil {
		<-p.slots
		return nil, err
	}
	p.mu.Lock()
	p.live++
	p.mu.Unlock()
	return inst, nil
}

// adopt adds an instance created outside acquire (the first one, at load)
// to the idle list.
func (p *pool) adopt(inst *instance) {
	p.mu.Lock()
	p.live++
	p.idle = append(p.idle, inst)
	p.mu.Unlock()
}

// adoptIfRoom adopts inst while fewer than n instances exist.
func (p *pool) adoptIfRoom(inst *instance, n int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live >= n || p.live >= cap(p.slots) {
		return false
	}
	p.live++
	p.idle = append(p.idle, inst)
	return true
}

// release returns a healthy instance to the pool.
func (p *pool) release(inst *instance) {
	p.mu.Lock()
	p.idle = append(p.idle, inst)
	p.mu.Unlock()
	<-p.slots
}

// discard closes an instance after a failure and frees its slot.
func (p *pool) discard(ctx context.Context, inst *instance) {
	_ = inst.mod.Close(ctx)
	p.mu.Lock()
	p.live--
	p.mu.Unlock()
	<-p.slots
}

// size returns the number of live instances.
func (p *pool) size() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.live
}

// drain closes the idle instances (those of a plugin that failed to
// start: no call ever takes them).
func (p *pool) drain(ctx context.Context) {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.live -= len(idle)
	p.mu.Unlock()
	for _, inst := range idle {
		_ = inst.mod.Close(ctx)
	}
}
