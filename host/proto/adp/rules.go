package adp

import (
	"context"
	"sync"

	"apconnect/host/identity"
)

// Rules is the environment the ADP rules run in: the host's limits, its API
// origin (for host_mismatch), how external packs are obtained, and where
// compiled schemas are cached. One Rules serves every room of a hub or
// connector and is safe for concurrent use; do not copy it after first use.
//
// A nil *Rules stands for verifier rules: VerifierLimits, no host origin
// check, registered packs only, the default schema cache.
type Rules struct {
	// Limits are the host's published limits (DefaultLimits for a hub).
	Limits Limits
	// HostOrigin is the host API origin room.create must name (8.3). A hub
	// sets its own origin; a connector sets the origin of the host it read
	// the room from. "" skips the check.
	HostOrigin string
	// Packs obtains external pack documents; nil refuses external packs
	// with pack_unavailable. Registered packs never need it.
	Packs PackResolver
	// Schemas caches compiled type schemas; nil uses a package-wide cache.
	Schemas *SchemaCache

	mu    sync.Mutex
	packs map[string]*resolvedPack // verified external packs by digest
}

type resolvedPack struct {
	raw     []byte
	doc     *PackDocument
	current bool // the document passes the current rules, not only the historical ones
}

// maxCachedPacks bounds the verified external packs a Rules keeps.
const maxCachedPacks = 128

// verifierRules serves nil *Rules.
var verifierRules = &Rules{Limits: VerifierLimits()}

// orDefault returns r, or the verifier rules for nil.
func (r *Rules) orDefault() *Rules {
	if r == nil {
		return verifierRules
	}
	return r
}

// schemas returns the schema cache to use.
func (r *Rules) schemas() *SchemaCache {
	if r == nil || r.Schemas == nil {
		return defaultSchemaCache
	}
	return r.Schemas
}

// ResolveExternalPack obtains an external pack document through the
// resolver, bounds its size, verifies its digest and parses it (type schema
// profile included). Verified documents are cached by digest, so a Check and
// the Apply after it fetch once. It returns the raw bytes (for the archive,
// 18) and the parsed document. Failures are pack_unavailable, or
// invalid_type_schema for a schema outside the profile.
func (r *Rules) ResolveExternalPack(ctx context.Context, ref PackRef) ([]byte, *PackDocument, error) {
	return r.resolveExternalPack(ctx, current, ref)
}

// resolveExternalPack is ResolveExternalPack under dialect d: the historical
// dialect also reads pack documents the 0f87fee kernel schema accepts.
func (r *Rules) resolveExternalPack(ctx context.Context, d dialect, ref PackRef) ([]byte, *PackDocument, error) {
	r = r.orDefault()
	r.mu.Lock()
	p, ok := r.packs[ref.Digest]
	r.mu.Unlock()
	var raw []byte
	if ok {
		if p.current || d == historical {
			return p.raw, p.doc, nil
		}
		// Cached for a reader only: judge the same bytes by the current rules.
		raw = p.raw
	} else {
		if r.Packs == nil {
			return nil, nil, newError(CodePackUnavailable, "", "external packs are not supported here (no pack resolver)")
		}
		var err error
		raw, err = r.Packs.ResolvePack(ctx, ref)
		if err != nil {
			e := AsError(err)
			if e.Code != CodePackUnavailable {
				e = &Error{Code: CodePackUnavailable, Message: e.Message, Err: err}
			}
			return nil, nil, e
		}
		if r.Limits.MaxPackSize > 0 && len(raw) > r.Limits.MaxPackSize {
			return nil, nil, newError(CodePackUnavailable, "", "pack document is %d bytes; at most %d are allowed", len(raw), r.Limits.MaxPackSize)
		}
		// The kernel schema decides which digest forms an event may carry (a
		// host admits only the current one); whatever passed it is checked here.
		if err := verifyPackDigestAs(historical, raw, ref.Digest); err != nil {
			return nil, nil, err
		}
	}
	doc, err := parsePackDocument(current, raw, r.Limits, r.Schemas)
	isCurrent := err == nil
	if err != nil && d == historical {
		doc, err = parsePackDocument(historical, raw, r.Limits, r.Schemas)
	}
	if err != nil {
		return nil, nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.packs == nil {
		r.packs = map[string]*resolvedPack{}
	}
	if len(r.packs) >= maxCachedPacks {
		for k := range r.packs {
			delete(r.packs, k)
			break
		}
	}
	r.packs[ref.Digest] = &resolvedPack{raw: raw, doc: doc, current: isCurrent}
	return raw, doc, nil
}

// PrefetchPacks resolves the external packs a room.create or type.define
// envelope imports, so a later Check (which a hub runs under its room lock)
// finds them cached and does no network I/O. Other events are a no-op.
func (r *Rules) PrefetchPacks(ctx context.Context, env *identity.Envelope) error {
	payload, _ := env.Event.Payload.(map[string]any)
	var decls []any
	switch env.Event.Type {
	case TypeRoomCreate:
		decls, _ = payload["types"].([]any)
	case TypeTypeDefine:
		decls = []any{payload}
	}
	for _, d := range decls {
		m, _ := d.(map[string]any)
		u, ok1 := m["pack"].(string)
		dg, ok2 := m["digest"].(string)
		if ok1 && ok2 {
			if _, _, err := r.ResolveExternalPack(ctx, PackRef{URL: u, Digest: dg}); err != nil {
				return err
			}
		}
	}
	return nil
}
