package discourse

import (
	"context"
	"sync"

	"apconnect/host/store"
)

// presenter writes the heads presented to MCP sessions behind the reads
// that present them. A local read that presents a head (a timeline page, a
// room opened, a write sent) records it here and returns; a background
// flush writes every head recorded so far in one transaction, at once, and
// the module's reads of presented heads look here before the store, so the
// process never sees an older head than it presented. Close writes what is
// left. A crash between a read and its flush loses that presentation only:
// the next read presents the head again (a session reads its presented
// heads to choose the base of its writes; none is lost that a later read
// in the same process could see).
type presenter struct {
	st  *store.Store
	now func() int64
	log func(msg string, args ...any)

	mu       sync.Mutex
	pending  map[presKey]presentedHead // recorded, not yet written
	flushing bool                      // a flush goroutine runs
	idle     *sync.Cond                // signalled when flushing ends
}

// presKey is a session's presentation of a room.
type presKey struct {
	sess SessionID
	key  int64
}

func newPresenter(st *store.Store, now func() int64, log func(string, ...any)) *presenter {
	p := &presenter{st: st, now: now, log: log, pending: map[presKey]presentedHead{}}
	p.idle = sync.NewCond(&p.mu)
	return p
}

// get returns a head presented to a session and not written yet.
func (p *presenter) get(sess SessionID, key int64) (presentedHead, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h, ok := p.pending[presKey{sess, key}]
	return h, ok
}

// put records that a head was presented to a session, and starts a flush
// unless one runs.
func (p *presenter) put(sess SessionID, key, seq int64, hash string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pending[presKey{sess, key}] = presentedHead{seq: seq, hash: hash, ok: true}
	if !p.flushing {
		p.flushing = true
		go p.flushAll()
	}
}

// flushAll writes the recorded heads until none is left.
func (p *presenter) flushAll() {
	for {
		p.mu.Lock()
		if len(p.pending) == 0 {
			p.flushing = false
			p.idle.Broadcast()
			p.mu.Unlock()
			return
		}
		batch := make(map[presKey]presentedHead, len(p.pending))
		for k, h := range p.pending {
			batch[k] = h
		}
		p.mu.Unlock()
		p.write(batch)
		p.mu.Lock()
		for k, h := range batch {
			if p.pending[k] == h {
				delete(p.pending, k)
			}
		}
		p.mu.Unlock()
	}
}

// write writes a batch of heads in one transaction; when that fails (a
// room forgotten meanwhile, say), each in its own, and a head that cannot
// be written is logged and dropped.
func (p *presenter) write(batch map[presKey]presentedHead) {
	ctx := context.Background()
	now := p.now()
	put := func(tx *store.Tx, ks []presKey) error {
		touched := map[SessionID]bool{}
		for _, k := range ks {
			if !touched[k.sess] {
				touched[k.sess] = true
				if err := tx.TouchSession(ctx, string(k.sess), now); err != nil {
					return err
				}
			}
			h := batch[k]
			if err := tx.SetPresented(ctx, string(k.sess), k.key, h.seq, h.hash); err != nil {
				return err
			}
		}
		return nil
	}
	keys := make([]presKey, 0, len(batch))
	for k := range batch {
		keys = append(keys, k)
	}
	if err := p.st.Write(ctx, func(tx *store.Tx) error { return put(tx, keys) }); err == nil || len(keys) == 1 {
		if err != nil {
			p.log("a presented head could not be stored", "session", keys[0].sess, "room", keys[0].key, "err", err)
		}
		return
	}
	for _, k := range keys {
		if err := p.st.Write(ctx, func(tx *store.Tx) error { return put(tx, []presKey{k}) }); err != nil {
			p.log("a presented head could not be stored", "session", k.sess, "room", k.key, "err", err)
		}
	}
}

// wait returns once every head recorded before it was written (or
// dropped).
func (p *presenter) wait() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.flushing {
		p.idle.Wait()
	}
}
