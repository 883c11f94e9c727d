package connector

import (
	"context"
	"encoding/json"
	"sync"

	"apconnect/host/identity"
)

// ctxMutex is a mutex whose Lock gives up when its context ends, so a tool
// call that is cancelled, or whose deadline passes, stops waiting for a
// room or a service that another call holds.
type ctxMutex struct{ ch chan struct{} }

func newCtxMutex() *ctxMutex { return &ctxMutex{ch: make(chan struct{}, 1)} }

// Lock takes the mutex, or returns ctx's error when ctx ends first.
func (m *ctxMutex) Lock(ctx context.Context) error {
	select {
	case m.ch <- struct{}{}:
		return nil
	default:
	}
	select {
	case m.ch <- struct{}{}:
		return nil
	case <-ctx.Done():
		return wrap(ctx.Err())
	}
}

// Unlock releases the mutex.
func (m *ctxMutex) Unlock() { <-m.ch }

// keyedLocks are context-aware mutexes by key, created on demand and never
// removed (the keys are the rooms touched and the services written to).
type keyedLocks struct {
	mu sync.Mutex
	m  map[any]*ctxMutex
}

func (k *keyedLocks) get(key any) *ctxMutex {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil {
		k.m = map[any]*ctxMutex{}
	}
	m, ok := k.m[key]
	if !ok {
		m = newCtxMutex()
		k.m[key] = m
	}
	return m
}

// notifier wakes every waiter at once: wait returns a channel closed by the
// next notify.
type notifier struct {
	mu sync.Mutex
	ch chan struct{}
}

func newNotifier() *notifier { return &notifier{ch: make(chan struct{})} }

func (n *notifier) wait() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.ch
}

func (n *notifier) notify() {
	n.mu.Lock()
	close(n.ch)
	n.ch = make(chan struct{})
	n.mu.Unlock()
}

// jsonValue converts a Go value into the strictly parsed JSON value form
// (map[string]any, []any, json.Number, …) that identity.Event payloads hold.
func jsonValue(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return identity.ParseStrict(b)
}

// objectValue converts a Go map into a strictly parsed JSON object.
func objectValue(v any) (map[string]any, error) {
	out, err := jsonValue(v)
	if err != nil {
		return nil, err
	}
	m, ok := out.(map[string]any)
	if !ok {
		return nil, invalid("value is not a JSON object")
	}
	return m, nil
}

func ptr[T any](v T) *T { return &v }

// cloneMap returns a shallow copy of m (nil stays nil).
func cloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
