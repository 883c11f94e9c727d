package adp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/sha3"
	_ "embed"
	"fmt"
	"strings"
	"sync"

	"apconnect/host/identity"
)

// Pack is a type pack (12.5): a versioned collection of type definitions.
type Pack struct {
	ID          string         `json:"id"`                    // pack id, such as "adp:reactions/1.0"
	Title       string         `json:"title"`                 // human-readable title
	Description string         `json:"description,omitempty"` // what the pack is for
	Types       []TypeDef      `json:"types"`                 // its type definitions, in order
	Extra       map[string]any `json:"extra,omitempty"`       // opaque extension data
}

// Lookup returns the pack's definition of a type.
func (p *Pack) Lookup(typ string) (*TypeDef, bool) {
	for i := range p.Types {
		if p.Types[i].Type == typ {
			return &p.Types[i], true
		}
	}
	return nil, false
}

func (p Pack) clone() Pack {
	c := p
	c.Types = make([]TypeDef, len(p.Types))
	for i := range p.Types {
		c.Types[i] = p.Types[i].clone()
	}
	c.Extra = cloneObject(p.Extra)
	return c
}

// PackDocument is a pack document: the registered packs file, or an external
// pack's document (the kernel schema's packDocument).
type PackDocument struct {
	Protocol string `json:"protocol"` // "agent-discourse/1.0"
	Packs    []Pack `json:"packs"`    // at least one pack
}

// ParsePackDocument strictly parses a pack document, validates it against
// the kernel schema's packDocument and applies the type schema profile to
// every schema in it. A malformed document is pack_unavailable; a schema
// outside the profile is invalid_type_schema, its pointer locating the schema
// in the document. cache may be nil (the default cache).
func ParsePackDocument(data []byte, limits Limits, cache *SchemaCache) (*PackDocument, error) {
	v, err := identity.ParseStrict(data)
	if err != nil {
		return nil, jsonError(err, "", CodePackUnavailable)
	}
	if err := validateKernel("packDocument", v, CodePackUnavailable, ""); err != nil {
		return nil, err
	}
	m := v.(map[string]any)
	doc := &PackDocument{Protocol: str(m, "protocol")}
	for i, pv := range m["packs"].([]any) {
		pm := pv.(map[string]any)
		p := Pack{ID: str(pm, "id"), Title: str(pm, "title"), Description: str(pm, "description")}
		if x, ok := pm["extra"].(map[string]any); ok {
			p.Extra = cloneObject(x)
		}
		for j, tv := range pm["types"].([]any) {
			def := typeDefFromValue(tv.(map[string]any))
			if err := CheckTypeSchema(def.Schema, limits, cache); err != nil {
				return nil, withPointerPrefix(err, fmt.Sprintf("/packs/%d/types/%d/schema", i, j))
			}
			p.Types = append(p.Types, def)
		}
		doc.Packs = append(doc.Packs, p)
	}
	return doc, nil
}

//go:embed packs/1.0.packs.json
var registeredPacksJSON []byte

var registered struct {
	once sync.Once
	doc  *PackDocument
	err  error
}

// registeredDoc parses the bundled registered packs once.
func registeredDoc() (*PackDocument, error) {
	registered.once.Do(func() {
		registered.doc, registered.err = ParsePackDocument(registeredPacksJSON, Limits{}, nil)
		if registered.err != nil {
			registered.err = fmt.Errorf("adp: bundled registered packs: %w", registered.err)
		}
	})
	return registered.doc, registered.err
}

// RegisteredPacksJSON returns a copy of the bundled 1.0.packs.json, the
// normative registered packs (Appendix A).
func RegisteredPacksJSON() []byte { return bytes.Clone(registeredPacksJSON) }

// RegisteredPackIDs returns the ids of the bundled registered packs, in
// document order, for the discovery document's registered_packs.
func RegisteredPackIDs() []string {
	doc, err := registeredDoc()
	if err != nil {
		return nil
	}
	ids := make([]string, len(doc.Packs))
	for i, p := range doc.Packs {
		ids[i] = p.ID
	}
	return ids
}

// RegisteredPack returns a copy of a bundled registered pack by id, such as
// "adp:deliberation/1.0".
func RegisteredPack(id string) (*Pack, bool) {
	doc, err := registeredDoc()
	if err != nil {
		return nil, false
	}
	for _, p := range doc.Packs {
		if p.ID == id {
			c := p.clone()
			return &c, true
		}
	}
	return nil, false
}

// PackRef names an external pack: its HTTPS URL and the digest of its
// document's raw bytes (12.5).
type PackRef struct {
	URL    string `json:"pack"`   // https URL of the pack document
	Digest string `json:"digest"` // "<sha256|sha3-256>:<base64url digest>" of its raw bytes
}

// PackResolver obtains external pack documents. It returns the document's
// raw bytes; this package verifies the digest itself, so a resolver may use
// ref.Digest as a cache key but cannot skip the check.
type PackResolver interface {
	ResolvePack(ctx context.Context, ref PackRef) ([]byte, error)
}

// StaticPacks resolves external packs from documents held in memory, keyed
// by URL: the pack documents of an archive, or fixtures.
type StaticPacks map[string][]byte

// ResolvePack returns the document stored for ref.URL.
func (s StaticPacks) ResolvePack(_ context.Context, ref PackRef) ([]byte, error) {
	b, ok := s[ref.URL]
	if !ok {
		return nil, newError(CodePackUnavailable, "", "pack document %s is not available", truncate(ref.URL, 200))
	}
	return b, nil
}

// Digest algorithms of 12.5.
const (
	DigestSHA256  = "sha256"
	DigestSHA3256 = "sha3-256"
)

// PackDigest returns "<alg>:<base64url digest>" of data for alg sha256 or
// sha3-256.
func PackDigest(alg string, data []byte) (string, error) {
	switch alg {
	case DigestSHA256:
		s := sha256.Sum256(data)
		return alg + ":" + identity.EncodeBase64URL(s[:]), nil
	case DigestSHA3256:
		s := sha3.Sum256(data)
		return alg + ":" + identity.EncodeBase64URL(s[:]), nil
	}
	return "", newError(CodePackUnavailable, "", "unsupported digest algorithm %q (sha256 or sha3-256)", truncate(alg, 40))
}

// VerifyPackDigest checks data against a "<alg>:<base64url digest>" digest.
// A malformed digest, an unknown algorithm or a mismatch is pack_unavailable.
func VerifyPackDigest(data []byte, digest string) error {
	alg, enc, ok := strings.Cut(digest, ":")
	if !ok {
		return newError(CodePackUnavailable, "", "digest must be <algorithm>:<base64url-digest>")
	}
	if _, err := identity.DecodeBase64URLLen(enc, 32); err != nil {
		return newError(CodePackUnavailable, "", "digest value must be 32 bytes in canonical base64url")
	}
	want, err := PackDigest(alg, data)
	if err != nil {
		return err
	}
	if want != digest {
		return newError(CodePackUnavailable, "", "pack document does not match its digest %s", truncate(digest, 80))
	}
	return nil
}
