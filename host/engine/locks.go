package engine

import (
	"context"
	"sync"
)

// CtxMutex is a mutex whose Lock gives up when its context ends, so a tool
// call that is cancelled, or whose deadline passes, stops waiting for a
// room or a service that another call holds.
type CtxMutex struct{ ch chan struct{} }

// NewCtxMutex returns an unlocked mutex.
func NewCtxMutex() *CtxMutex { return &CtxMutex{ch: make(chan struct{}, 1)} }

// Lock takes the mutex, or returns ctx's error (as unavailable) when ctx
// ends first.
func (m *CtxMutex) Lock(ctx context.Context) error {
	select {
	case m.ch <- struct{}{}:
		return nil
	default:
	}
	select {
	case m.ch <- struct{}{}:
		return nil
	case <-ctx.Done():
		return Wrap(ctx.Err())
	}
}

// Unlock releases the mutex.
func (m *CtxMutex) Unlock() { <-m.ch }

// KeyedLocks are context-aware mutexes by key, created on demand and never
// removed (the keys are the rooms touched and the services written to).
// The zero value is ready to use.
type KeyedLocks struct {
	mu sync.Mutex
	m  map[any]*CtxMutex
}

// Get returns the mutex of key.
func (k *KeyedLocks) Get(key any) *CtxMutex {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil {
		k.m = map[any]*CtxMutex{}
	}
	m, ok := k.m[key]
	if !ok {
		m = NewCtxMutex()
		k.m[key] = m
	}
	return m
}

// Notifier wakes every waiter at once: Wait returns a channel closed by the
// next Notify.
type Notifier struct {
	mu sync.Mutex
	ch chan struct{}
}

// NewNotifier returns a Notifier.
func NewNotifier() *Notifier { return &Notifier{ch: make(chan struct{})} }

// Wait returns a channel that the next Notify closes.
func (n *Notifier) Wait() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.ch
}

// Notify wakes every current waiter.
func (n *Notifier) Notify() {
	n.mu.Lock()
	close(n.ch)
	n.ch = make(chan struct{})
	n.mu.Unlock()
}
