package delegation

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"

	"apconnect/host/hub/internal/hubdb"
	"apconnect/host/hub/internal/hubhttp"
	"apconnect/host/identity"
	rules "apconnect/host/proto/delegation"
	"apconnect/host/text"
)

// PathPrincipals is the path under which the hub serves the principals it
// hosts: GET {origin}/principals/{name}.
const PathPrincipals = "/principals/"

// placeholderOrigin stands for the hub's origin where it is not known yet
// (a document checked while no hub has recorded its origin).
const placeholderOrigin = "https://hub.invalid"

// hubMembers are the members the hub sets in a document it serves; a
// written document's own values are replaced.
var hubMembers = []string{"id", "protocol", "delegation_service", "updated_at"}

// ValidName reports whether name may name a hosted principal: the
// delegation id grammar, [A-Za-z0-9._~-]{1,128} without dot segments, so
// the URL needs no escaping.
func ValidName(name string) bool { return rules.ValidID(name) }

// PrincipalURL is the URL a principal is served at, its id.
func PrincipalURL(origin, name string) string { return origin + PathPrincipals + name }

// compose builds the document served at origin for a stored row: the
// written members with the hub's own, validated by the rules package.
func compose(origin, name string, written []byte, updatedAt int64) (*rules.PrincipalDocument, error) {
	v, err := identity.ParseStrict(written)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("stored principal document is not an object")
	}
	m["id"] = PrincipalURL(origin, name)
	m["protocol"] = rules.Protocol
	m["delegation_service"] = origin
	m["updated_at"] = updatedAt
	return rules.PrincipalDocumentFromValue(m)
}

// writtenMembers is what the hub stores of a document: every member but
// the hub's, in canonical JSON.
func writtenMembers(doc *rules.PrincipalDocument) ([]byte, error) {
	m := doc.Value()
	for _, k := range hubMembers {
		delete(m, k)
	}
	return identity.Canonicalize(m)
}

// storedPrincipal is a row of principals.
type storedPrincipal struct {
	name      string
	document  []byte
	updatedAt int64
}

// lookupPrincipal returns the principal served at path name: the one of
// that name, else the one listing origin/principals/name as an alias
// (canonical false), or nil.
func lookupPrincipal(ctx context.Context, q hubhttp.Querier, origin, name string) (p *storedPrincipal, canonical bool, err error) {
	p = &storedPrincipal{}
	err = q.QueryRowContext(ctx, principalSQL, name).Scan(&p.name, &p.document, &p.updatedAt)
	if err == nil {
		return p, true, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, false, err
	}
	err = q.QueryRowContext(ctx, aliasSQL, PrincipalURL(origin, name)).Scan(&p.name, &p.document, &p.updatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return p, false, nil
}

// principalDocument returns the canonical JSON of the document served at
// origin/principals/name, or nil when none is.
func principalDocument(ctx context.Context, q hubhttp.Querier, origin, name string) ([]byte, error) {
	if !ValidName(name) {
		return nil, nil
	}
	p, _, err := lookupPrincipal(ctx, q, origin, name)
	if err != nil || p == nil {
		return nil, err
	}
	return composedJSON(origin, p)
}

// composed caches the JSON of the documents served, by origin and name,
// with the row they were composed from (a changed row is composed again).
var composed = struct {
	sync.Mutex
	m map[string]composedDoc
}{m: map[string]composedDoc{}}

type composedDoc struct {
	written   string
	updatedAt int64
	body      []byte
}

// composedJSON is the canonical JSON of the document a stored row serves
// at origin.
func composedJSON(origin string, p *storedPrincipal) ([]byte, error) {
	key := origin + PathPrincipals + p.name
	composed.Lock()
	c, ok := composed.m[key]
	composed.Unlock()
	if ok && c.updatedAt == p.updatedAt && c.written == string(p.document) {
		return c.body, nil
	}
	doc, err := compose(origin, p.name, p.document, p.updatedAt)
	if err != nil {
		return nil, fmt.Errorf("hosted principal %s: %w", p.name, err)
	}
	body, err := doc.MarshalJSON()
	if err != nil {
		return nil, err
	}
	composed.Lock()
	if len(composed.m) >= 1024 {
		clear(composed.m)
	}
	composed.m[key] = composedDoc{written: string(p.document), updatedAt: p.updatedAt, body: body}
	composed.Unlock()
	return body, nil
}

// reader is the hub's delegation.PrincipalReader: it serves the URLs of the
// principals the hub hosts from the database (the hub is their authority,
// so it needs no HTTP), as GET {url} would, and refuses every other URL.
func reader(ctx context.Context, q hubhttp.Querier, origin string) rules.PrincipalReader {
	return func(u string) ([]byte, string, error) {
		name, ok := strings.CutPrefix(u, origin+PathPrincipals)
		if !ok || !ValidName(name) {
			return nil, "", fmt.Errorf("this hub is the delegation service of the principals it hosts at %s%s{name} only", origin, PathPrincipals)
		}
		body, err := principalDocument(ctx, q, origin, name)
		if err != nil {
			return nil, "", err
		}
		if body == nil {
			return nil, "", fmt.Errorf("the hub hosts no principal at %s", text.Truncate(u, 200))
		}
		return body, u, nil
	}
}

// resolve resolves a principal the hub hosts with the rules of Agent
// Delegation 3 (rules.ResolvePrincipal over reader): the document and the
// URL it was read at.
func resolve(ctx context.Context, q hubhttp.Querier, origin, principalID string) (*rules.PrincipalDocument, string, error) {
	return rules.ResolvePrincipal(principalID, reader(ctx, q, origin))
}

// --- management (apconnect hub principal …) ---

// Principal is a hosted principal as the management functions report it.
type Principal struct {
	Name string
	// URL is where the hub serves it ("" when no hub has recorded its
	// origin in this database yet).
	URL string
	// Document is the document as served (its id and delegation_service
	// use a placeholder origin when URL is "").
	Document *rules.PrincipalDocument
}

// Origin returns the origin the hub last started with on db ("" for none).
func Origin(ctx context.Context, q hubhttp.Querier) (string, error) {
	var o string
	err := q.QueryRowContext(ctx, `SELECT origin FROM principal_origin WHERE k = 1`).Scan(&o)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return o, err
}

// PutDocument stores the document of principal name as written (a JSON
// object): its controllers, retired controllers, aliases and descriptive
// members; id, protocol, delegation_service and updated_at are the hub's
// (updated_at becomes now, or the previous one when the clock went back).
// The document must pass the rules (delegation.ValidatePrincipalDocument),
// and its aliases must not be another principal's.
func PutDocument(ctx context.Context, db *hubdb.DB, name string, written map[string]any, now int64) (*Principal, error) {
	if !ValidName(name) {
		return nil, fmt.Errorf("principal name %q must match [A-Za-z0-9._~-]{1,128} and not be a dot segment", text.Truncate(name, 140))
	}
	var out *Principal
	err := db.Write(ctx, func(tx *sql.Tx) error {
		prev, err := storedUpdatedAt(ctx, tx, name)
		if err != nil {
			return err
		}
		m := make(map[string]any, len(written)+4)
		for k, v := range written {
			m[k] = v
		}
		out, err = storePrincipal(ctx, tx, name, m, max(now, prev))
		return err
	})
	return out, err
}

// AddControllers adds each Agent ID in ids as an unrestricted delegating
// controller of principal name, valid from now, creating the principal
// when it does not exist. A key that is a current controller already is
// left as it is (not in added); a retired key is refused.
func AddControllers(ctx context.Context, db *hubdb.DB, name string, ids []string, now int64) (p *Principal, added []string, err error) {
	if !ValidName(name) {
		return nil, nil, fmt.Errorf("principal name %q must match [A-Za-z0-9._~-]{1,128} and not be a dot segment", text.Truncate(name, 140))
	}
	err = db.Write(ctx, func(tx *sql.Tx) error {
		added = nil
		m, updatedAt, err := current(ctx, tx, name)
		if err != nil {
			return err
		}
		at := max(now, updatedAt)
		doc := m.doc
		for _, id := range ids {
			if !identity.ValidAgentID(id) {
				return fmt.Errorf("controller %q is not a canonical Agent ID", text.Truncate(id, 80))
			}
			if c := doc.FindController(id, true); c != nil {
				if c.RetiredAt != nil {
					return fmt.Errorf("controller %s was retired from %s; a retired key cannot be a controller again", id, name)
				}
				continue
			}
			doc.Controllers = append(doc.Controllers, rules.Controller{ID: id, Source: "local", ValidFrom: at,
				Delegation: &rules.Authority{Unrestricted: true}})
			added = append(added, id)
		}
		p, err = storePrincipal(ctx, tx, name, doc.Value(), at)
		return err
	})
	return p, added, err
}

// RetireController moves controller id of principal name to its retired
// controllers, retired at now (no compromise interval).
func RetireController(ctx context.Context, db *hubdb.DB, name, id string, now int64) (*Principal, error) {
	var p *Principal
	err := db.Write(ctx, func(tx *sql.Tx) error {
		m, updatedAt, err := current(ctx, tx, name)
		if err != nil {
			return err
		}
		if !m.exists {
			return fmt.Errorf("the hub hosts no principal %q", text.Truncate(name, 140))
		}
		at := max(now, updatedAt)
		doc := m.doc
		i := -1
		for j := range doc.Controllers {
			if doc.Controllers[j].ID == id {
				i = j
			}
		}
		if i < 0 {
			return fmt.Errorf("%s is not a current controller of %s", text.Truncate(id, 80), name)
		}
		c := doc.Controllers[i]
		c.RetiredAt = &at
		doc.Controllers = append(doc.Controllers[:i], doc.Controllers[i+1:]...)
		doc.RetiredControllers = append(doc.RetiredControllers, c)
		p, err = storePrincipal(ctx, tx, name, doc.Value(), at)
		return err
	})
	return p, err
}

// ListPrincipals lists the hosted principals by name.
func ListPrincipals(ctx context.Context, q hubhttp.Querier) ([]*Principal, error) {
	origin, err := Origin(ctx, q)
	if err != nil {
		return nil, err
	}
	rows, err := q.QueryContext(ctx, `SELECT name, document, updated_at FROM principals ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Principal
	for rows.Next() {
		var p storedPrincipal
		if err := rows.Scan(&p.name, &p.document, &p.updatedAt); err != nil {
			return nil, err
		}
		res, err := described(origin, p.name, p.document, p.updatedAt)
		if err != nil {
			return nil, err
		}
		out = append(out, res)
	}
	return out, rows.Err()
}

// existing is a principal's current document (or an empty one).
type existing struct {
	doc    *rules.PrincipalDocument
	exists bool
}

// current reads principal name as a document (with the placeholder
// origin), or an empty document when there is none.
func current(ctx context.Context, tx *sql.Tx, name string) (existing, int64, error) {
	var p storedPrincipal
	err := tx.QueryRowContext(ctx, `SELECT name, document, updated_at FROM principals WHERE name = ?`, name).
		Scan(&p.name, &p.document, &p.updatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return existing{doc: &rules.PrincipalDocument{}}, 0, nil
	}
	if err != nil {
		return existing{}, 0, err
	}
	doc, err := compose(placeholderOrigin, name, p.document, p.updatedAt)
	if err != nil {
		return existing{}, 0, fmt.Errorf("stored principal %s: %w", name, err)
	}
	return existing{doc: doc, exists: true}, p.updatedAt, nil
}

func storedUpdatedAt(ctx context.Context, tx *sql.Tx, name string) (int64, error) {
	var at int64
	err := tx.QueryRowContext(ctx, `SELECT updated_at FROM principals WHERE name = ?`, name).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return at, err
}

// storePrincipal checks a document (the hub's members set with a placeholder
// origin) and writes it and its aliases.
func storePrincipal(ctx context.Context, tx *sql.Tx, name string, m map[string]any, updatedAt int64) (*Principal, error) {
	m["id"] = PrincipalURL(placeholderOrigin, name)
	m["protocol"] = rules.Protocol
	m["delegation_service"] = placeholderOrigin
	m["updated_at"] = updatedAt
	doc, err := rules.PrincipalDocumentFromValue(m)
	if err != nil {
		return nil, fmt.Errorf("principal %s: %w", name, err)
	}
	written, err := writtenMembers(doc)
	if err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO principals (name, document, updated_at, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET document = excluded.document, updated_at = excluded.updated_at`,
		name, written, updatedAt, updatedAt); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM principal_aliases WHERE name = ?`, name); err != nil {
		return nil, err
	}
	for _, a := range doc.Aliases {
		var other string
		err := tx.QueryRowContext(ctx, `SELECT name FROM principal_aliases WHERE url = ?`, a).Scan(&other)
		if err == nil {
			return nil, fmt.Errorf("alias %s is already an alias of principal %s", text.Truncate(a, 200), other)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO principal_aliases (url, name) VALUES (?, ?)`, a, name); err != nil {
			return nil, err
		}
	}
	origin, err := Origin(ctx, tx)
	if err != nil {
		return nil, err
	}
	return described(origin, name, written, updatedAt)
}

// described is a stored principal as reported to the operator.
func described(origin, name string, written []byte, updatedAt int64) (*Principal, error) {
	o := origin
	if o == "" {
		o = placeholderOrigin
	}
	doc, err := compose(o, name, written, updatedAt)
	if err != nil {
		return nil, fmt.Errorf("stored principal %s: %w", name, err)
	}
	p := &Principal{Name: name, Document: doc}
	if origin != "" {
		p.URL = PrincipalURL(origin, name)
	}
	return p, nil
}
