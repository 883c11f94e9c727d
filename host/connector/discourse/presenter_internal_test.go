package discourse

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"sync"
	"testing"

	"apconnect/host/identity"
	"apconnect/host/store"
)

// The presenter answers from memory at once, stores every head it was
// given (the newest per session and room), survives a room the store does
// not know (that head alone is dropped and logged), and wait returns once
// everything is stored.
func TestPresenterWritesBehind(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	seed := make([]byte, ed25519.SeedSize)
	self := identity.AgentIDFromPublicKey(ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey))
	st, err := store.Open(ctx, store.Options{Dir: t.TempDir(), AgentID: self})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var keys []int64
	err = st.Write(ctx, func(tx *store.Tx) error {
		for i := range 3 {
			r, err := tx.EnsureRoom(ctx, "https://h", fmt.Sprintf("room%d", i), 1)
			if err != nil {
				return err
			}
			keys = append(keys, r.Key)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var logged []string
	p := newPresenter(st, func() int64 { return 1000 }, func(msg string, args ...any) {
		mu.Lock()
		logged = append(logged, fmt.Sprint(msg, args))
		mu.Unlock()
	})
	const missing = 987654 // no such room: its head cannot be stored
	var wg sync.WaitGroup
	for s := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sess := SessionID(fmt.Sprintf("s%d", s))
			for seq := int64(1); seq <= 20; seq++ {
				for _, k := range keys {
					p.put(sess, k, seq, fmt.Sprintf("h%d", seq))
					if h, ok := p.get(sess, k); ok && h.seq < seq {
						t.Errorf("%s room %d: memory has %d after %d was presented", sess, k, h.seq, seq)
					}
				}
			}
			p.put(sess, missing, 1, "h1")
		}()
	}
	wg.Wait()
	p.wait()
	for s := range 4 {
		sess := SessionID(fmt.Sprintf("s%d", s))
		for _, k := range keys {
			if _, ok := p.get(sess, k); ok {
				t.Errorf("%s room %d still waits after wait", sess, k)
			}
			seq, hash, ok, err := st.Read().Presented(ctx, string(sess), k)
			if err != nil || !ok || seq != 20 || hash != "h20" {
				t.Errorf("%s room %d stored %d %q %v %v, want 20", sess, k, seq, hash, ok, err)
			}
		}
		if _, _, ok, _ := st.Read().Presented(ctx, string(sess), missing); ok {
			t.Errorf("%s: a head of a room the store does not know was stored", sess)
		}
	}
	if n, err := st.Read().SessionCount(ctx); err != nil || n != 4 {
		t.Fatalf("%d sessions stored, want 4 (%v)", n, err)
	}
	if len(logged) == 0 {
		t.Fatal("the heads that could not be stored were not logged")
	}
}
