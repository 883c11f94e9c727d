package discourse

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"time"

	"apconnect/host/hub/internal/hubdb"
	"apconnect/host/hub/internal/hubhttp"
	"apconnect/host/identity"
	"apconnect/host/proto/adp"
	"apconnect/host/text"
)

// Bounds of the prefetched pack documents held in memory.
const (
	maxPrefetched   = 64
	prefetchedTTL   = 10 * time.Minute
	failedFetchTTL  = 30 * time.Second
	prefetchTimeout = 15 * time.Second
)

// packStore is the adp.PackResolver of the hub's Rules. It never touches the
// network: it answers from the pack documents the hub stored when it
// accepted an import (so rooms replay and archives ship offline) and from
// documents prefetched for the envelope being written. Fetching happens in
// prefetch, before the write transaction, so no write lock is ever held
// across network I/O. Digests are verified by adp.Rules, never here.
type packStore struct {
	db      *hubdb.DB
	fetcher adp.PackResolver

	mu      sync.Mutex
	fetched map[string]*fetchedPack
}

type fetchedPack struct {
	raw []byte
	err error
	at  time.Time
}

func newPackStore(db *hubdb.DB, fetcher adp.PackResolver) *packStore {
	return &packStore{db: db, fetcher: fetcher, fetched: map[string]*fetchedPack{}}
}

func packKey(ref adp.PackRef) string { return ref.URL + "\x00" + ref.Digest }

// ResolvePack implements adp.PackResolver from stored and prefetched
// documents only.
func (p *packStore) ResolvePack(ctx context.Context, ref adp.PackRef) ([]byte, error) {
	p.mu.Lock()
	f, ok := p.fetched[packKey(ref)]
	p.mu.Unlock()
	if ok && f.raw != nil {
		return f.raw, nil
	}
	raw, err := storedPack(ctx, p.db.Reader(), ref)
	if err != nil {
		return nil, err
	}
	if raw != nil {
		return raw, nil
	}
	if ok && f.err != nil {
		return nil, f.err
	}
	if p.fetcher == nil {
		return nil, &adp.Error{Code: adp.CodePackUnavailable, Message: "this hub does not fetch external packs"}
	}
	return nil, &adp.Error{Code: adp.CodePackUnavailable, Message: "pack " + text.Truncate(ref.URL, 200) + " could not be obtained"}
}

// storedPack returns a stored pack document, or nil.
func storedPack(ctx context.Context, q hubhttp.Querier, ref adp.PackRef) ([]byte, error) {
	var raw []byte
	err := q.QueryRowContext(ctx, `SELECT document FROM adp_packs WHERE url = ? AND digest = ?`, ref.URL, ref.Digest).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return raw, err
}

// externalRefs returns the external pack imports a room.create or
// type.define envelope declares.
func externalRefs(env *identity.Envelope) []adp.PackRef {
	payload, _ := env.Event.Payload.(map[string]any)
	var decls []any
	switch env.Event.Type {
	case adp.TypeRoomCreate:
		decls, _ = payload["types"].([]any)
	case adp.TypeTypeDefine:
		decls = []any{payload}
	}
	var refs []adp.PackRef
	for _, d := range decls {
		m, _ := d.(map[string]any)
		u, ok1 := m["pack"].(string)
		dg, ok2 := m["digest"].(string)
		if ok1 && ok2 {
			refs = append(refs, adp.PackRef{URL: u, Digest: dg})
		}
	}
	return refs
}

// prefetch fetches the external packs env imports that the hub does not
// hold yet, outside any transaction. Failures are remembered briefly and
// reported by the Check that follows (pack_unavailable); they never stop an
// exact resubmission from being answered.
func (p *packStore) prefetch(ctx context.Context, env *identity.Envelope) {
	if p.fetcher == nil {
		return
	}
	for _, ref := range externalRefs(env) {
		if raw, err := storedPack(ctx, p.db.Reader(), ref); err != nil || raw != nil {
			continue
		}
		p.mu.Lock()
		f, ok := p.fetched[packKey(ref)]
		fresh := ok && (f.raw != nil && time.Since(f.at) < prefetchedTTL || f.err != nil && time.Since(f.at) < failedFetchTTL)
		p.mu.Unlock()
		if fresh {
			continue
		}
		fctx, cancel := context.WithTimeout(ctx, prefetchTimeout)
		raw, err := p.fetcher.ResolvePack(fctx, ref)
		cancel()
		if err != nil {
			err = adp.AsError(err)
		}
		p.remember(ref, &fetchedPack{raw: raw, err: err, at: time.Now()})
	}
}

// remember keeps a fetched document (or the failure), dropping stale and
// then oldest entries beyond the bound.
func (p *packStore) remember(ref adp.PackRef, f *fetchedPack) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, old := range p.fetched {
		if time.Since(old.at) > prefetchedTTL {
			delete(p.fetched, k)
		}
	}
	for len(p.fetched) >= maxPrefetched {
		var oldest string
		var at time.Time
		for k, old := range p.fetched {
			if oldest == "" || old.at.Before(at) {
				oldest, at = k, old.at
			}
		}
		delete(p.fetched, oldest)
	}
	p.fetched[packKey(ref)] = f
}

// persistPacks stores the external pack documents a record imported (the room's
// imports at seq), byte for byte as their digests were verified.
func (s *Service) persistPacks(ctx context.Context, tx *sql.Tx, room *adp.Room, seq, now int64) error {
	for _, imp := range room.Imports {
		if imp.Seq != seq || imp.Pack == "" {
			continue
		}
		raw, _, err := s.rules.ResolveExternalPack(ctx, adp.PackRef{URL: imp.Pack, Digest: imp.Digest})
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO adp_packs (url, digest, document, added_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (url, digest) DO NOTHING`, imp.Pack, imp.Digest, raw, now); err != nil {
			return err
		}
	}
	return nil
}

// packDocuments returns the external pack documents a room imported by
// record through (inclusive), each (URL, digest) once, in import order, for
// its archive. Imports only ever append, so a document's Index — its
// position among all the room's distinct imports, the n of
// {room}/archive/packs/{n} — never changes.
func packDocuments(ctx context.Context, q hubhttp.Querier, room *adp.Room, through int64) ([]packDoc, error) {
	var out []packDoc
	seen := map[string]bool{}
	for _, imp := range room.Imports {
		if imp.Pack == "" || seen[packKey(adp.PackRef{URL: imp.Pack, Digest: imp.Digest})] {
			continue
		}
		ref := adp.PackRef{URL: imp.Pack, Digest: imp.Digest}
		seen[packKey(ref)] = true
		if imp.Seq > through {
			break
		}
		raw, err := storedPack(ctx, q, ref)
		if err != nil {
			return nil, err
		}
		if raw == nil {
			return nil, errors.New("discourse: imported pack " + imp.Pack + " is not stored")
		}
		out = append(out, packDoc{URL: imp.Pack, Digest: imp.Digest, Document: raw, Index: len(out)})
	}
	return out, nil
}

// packDoc is one external pack document of an archive.
type packDoc struct {
	URL      string
	Digest   string
	Document []byte
	Index    int // its n in {room}/archive/packs/{n}
}
