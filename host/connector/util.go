package connector

import (
	"encoding/json"
	"sync"

	"apconnect/host/identity"
)

// keyedLocks are mutexes by key, created on demand and never removed (the
// number of keys is the number of rooms touched).
type keyedLocks struct {
	mu sync.Mutex
	m  map[any]*sync.Mutex
}

func (k *keyedLocks) get(key any) *sync.Mutex {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil {
		k.m = map[any]*sync.Mutex{}
	}
	m, ok := k.m[key]
	if !ok {
		m = &sync.Mutex{}
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
