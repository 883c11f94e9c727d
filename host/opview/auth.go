package opview

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"sync"
	"time"
)

// Logging in. The view has no password: `apconnect serve` (and `apconnect
// view`, which asks the running serve for one with the home's bearer
// token) prints a URL whose query carries a one-time login token. Opening
// it exchanges the token for a session cookie (HttpOnly, SameSite=Strict,
// named after the listener's port so that two serve processes on one
// machine keep theirs apart) and redirects to the same page without the
// token. A token works once, and only for TokenTTL; sessions last
// SessionTTL after their last use and only as long as the process.
//
// Only digests of tokens and session ids are kept, and lookups are by
// digest, so timing reveals nothing useful about a stored secret.

// Defaults of Options.
const (
	DefaultTokenTTL   = time.Hour
	DefaultSessionTTL = 12 * time.Hour
)

// Bounds on what is kept: the oldest is dropped past them.
const (
	maxTokens   = 16
	maxSessions = 64
)

type secretSum [32]byte

func sum(s string) secretSum { return sha256.Sum256([]byte(s)) }

// newSecret returns 256 random bits, base64url.
func newSecret() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// secrets is a set of digests with their expiry, oldest dropped first.
type secrets struct {
	mu    sync.Mutex
	m     map[secretSum]time.Time
	order []secretSum
	max   int
}

func newSecrets(max int) *secrets { return &secrets{m: map[secretSum]time.Time{}, max: max} }

// add stores a fresh secret valid until exp and returns it.
func (s *secrets) add(exp time.Time) string {
	v := newSecret()
	k := sum(v)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[k] = exp
	live := s.order[:0]
	for _, o := range s.order {
		if _, ok := s.m[o]; ok {
			live = append(live, o)
		}
	}
	s.order = append(live, k)
	for len(s.order) > s.max {
		delete(s.m, s.order[0])
		s.order = s.order[1:]
	}
	return v
}

// take removes v and reports whether it was valid at now (a one-time
// token).
func (s *secrets) take(v string, now time.Time) bool {
	k := sum(v)
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.m[k]
	if ok {
		delete(s.m, k)
	}
	return ok && now.Before(exp)
}

// touch reports whether v is valid at now and extends it to exp (a
// session).
func (s *secrets) touch(v string, now, exp time.Time) bool {
	k := sum(v)
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.m[k]
	if !ok {
		return false
	}
	if !now.Before(cur) {
		delete(s.m, k)
		return false
	}
	s.m[k] = exp
	return true
}
