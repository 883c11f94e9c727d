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
	"apconnect/host/text"
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

// lookup returns the pack of the document with the given id, or nil.
func (d *PackDocument) lookup(id string) *Pack {
	for i := range d.Packs {
		if d.Packs[i].ID == id {
			return &d.Packs[i]
		}
	}
	return nil
}

// ParsePackDocument strictly parses a pack document, validates it against
// the kernel schema's packDocument and applies the type schema profile to
// every schema in it. A malformed document is pack_unavailable; a schema
// outside the profile is invalid_type_schema, its pointer locating the schema
// in the document. cache may be nil (the default cache).
func ParsePackDocument(data []byte, limits Limits, cache *SchemaCache) (*PackDocument, error) {
	return parsePackDocument(current, data, limits, cache)
}

// parsePackDocument is ParsePackDocument under dialect d.
func parsePackDocument(d dialect, data []byte, limits Limits, cache *SchemaCache) (*PackDocument, error) {
	v, err := identity.ParseStrict(data)
	if err != nil {
		return nil, jsonError(err, "", CodePackUnavailable)
	}
	if err := validateKernelAs(d, "packDocument", v, CodePackUnavailable, ""); err != nil {
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

// The registered packs: packs/1.0.packs.json is the document of the
// reference SDK 0.12.6; packs/0f87fee.packs.json is the 0f87fee drafts'
// (types carried a version, content digests were "<alg>:<digest>", and
// steer.create had a target), kept so a reader accepts payloads written
// under it.
var (
	//go:embed packs/1.0.packs.json
	registeredPacksJSON []byte
	//go:embed packs/0f87fee.packs.json
	legacyRegisteredPacksJSON []byte
)

var legacyRegistered struct {
	once sync.Once
	doc  *PackDocument
	err  error
}

// legacyRegisteredType returns the 0f87fee definition of a registered
// pack's type.
func legacyRegisteredType(packID, typ string) (*TypeDef, bool) {
	legacyRegistered.once.Do(func() {
		legacyRegistered.doc, legacyRegistered.err = parsePackDocument(historical, legacyRegisteredPacksJSON, Limits{}, nil)
	})
	if legacyRegistered.err != nil {
		return nil, false
	}
	if p := legacyRegistered.doc.lookup(packID); p != nil {
		return p.Lookup(typ)
	}
	return nil, false
}

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
	Digest string `json:"digest"` // PackDigest of its raw bytes
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
		return nil, newError(CodePackUnavailable, "", "pack document %s is not available", text.Truncate(ref.URL, 200))
	}
	return b, nil
}

// PackDigest returns the digest of an external pack document (12.5): the
// SHA3-256 of its raw bytes in canonical base64url, 43 characters, like an
// event hash.
func PackDigest(data []byte) string {
	s := sha3.Sum256(data)
	return identity.EncodeBase64URL(s[:])
}

// VerifyPackDigest checks a pack document's raw bytes against a digest in
// the current form (PackDigest). A malformed digest — including the
// "<algorithm>:" forms of the 0f87fee drafts — or a mismatch is
// pack_unavailable.
func VerifyPackDigest(data []byte, digest string) error {
	if _, err := identity.DecodeBase64URLLen(digest, 32); err != nil {
		return newError(CodePackUnavailable, "", "a pack digest is the 43-character base64url SHA3-256 of the document")
	}
	if PackDigest(data) != digest {
		return newError(CodePackUnavailable, "", "pack document does not match its digest %s", text.Truncate(digest, 80))
	}
	return nil
}

// verifyPackDigestAs is VerifyPackDigest under dialect d: the historical
// dialect also reads the 0f87fee drafts' "sha256:" and "sha3-256:" digests.
func verifyPackDigestAs(d dialect, data []byte, digest string) error {
	alg, enc, prefixed := strings.Cut(digest, ":")
	if d != historical || !prefixed {
		return VerifyPackDigest(data, digest)
	}
	if _, err := identity.DecodeBase64URLLen(enc, 32); err != nil {
		return newError(CodePackUnavailable, "", "digest value must be 32 bytes in canonical base64url")
	}
	var sum [32]byte
	switch alg {
	case "sha256":
		sum = sha256.Sum256(data)
	case "sha3-256":
		sum = sha3.Sum256(data)
	default:
		return newError(CodePackUnavailable, "", "unsupported digest algorithm %q", text.Truncate(alg, 40))
	}
	if identity.EncodeBase64URL(sum[:]) != enc {
		return newError(CodePackUnavailable, "", "pack document does not match its digest %s", text.Truncate(digest, 80))
	}
	return nil
}
