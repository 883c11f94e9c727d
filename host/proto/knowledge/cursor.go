package knowledge

import (
	"crypto/sha3"
	"strconv"
	"strings"

	"apconnect/host/identity"
)

// Binding returns the query a cursor is bound to: the query without its
// cursor, with limit and after_seq defaulted (DefaultQueryLimit, 0).
func (q *Query) Binding() map[string]any {
	m := q.Value()
	delete(m, "cursor")
	m["limit"] = int64(q.EffectiveLimit())
	m["after_seq"] = q.EffectiveAfterSeq()
	return m
}

// Digest returns the digest a cursor carries: the unpadded base64url
// SHA3-256 of JCS(Binding()).
func (q *Query) Digest() string {
	b, err := identity.Canonicalize(q.Binding())
	if err != nil {
		// Binding holds strings and int64 only, which always canonicalize.
		panic("knowledge: query binding does not canonicalize: " + err.Error())
	}
	sum := sha3.Sum256(b)
	return identity.EncodeBase64URL(sum[:])
}

// Cursor is a stateless query cursor, written
// "checkpoint.as_of.last_seq.digest": the checkpoint and clock of the
// traversal's first page, the last seq returned so far, and the digest of
// the query it belongs to (Query.Digest).
type Cursor struct {
	Checkpoint int64
	AsOf       int64
	LastSeq    int64
	Digest     string
}

// String writes the cursor.
func (c Cursor) String() string {
	return strconv.FormatInt(c.Checkpoint, 10) + "." + strconv.FormatInt(c.AsOf, 10) + "." +
		strconv.FormatInt(c.LastSeq, 10) + "." + c.Digest
}

// ParseCursor reads a cursor's syntax: four dot-separated parts, the first
// three 1..MaxIntegerDigits decimal digits. It does not check the digest or
// the numbers against a query or a service (DecodeCursor does). A failure
// is invalid_cursor.
func ParseCursor(s string) (Cursor, error) {
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return Cursor{}, errorf(CodeInvalidCursor, "/cursor", "malformed cursor")
	}
	var nums [3]int64
	for i, p := range parts[:3] {
		if p == "" || len(p) > MaxIntegerDigits || strings.Trim(p, "0123456789") != "" {
			return Cursor{}, errorf(CodeInvalidCursor, "/cursor", "malformed cursor")
		}
		nums[i], _ = strconv.ParseInt(p, 10, 64)
	}
	return Cursor{Checkpoint: nums[0], AsOf: nums[1], LastSeq: nums[2], Digest: parts[3]}, nil
}

// DecodeCursor reads q's cursor for a service whose current sequence is
// currentSeq, as the SDK store does: it must parse, carry q's digest, and
// satisfy after_seq ≤ last_seq ≤ checkpoint ≤ currentSeq with as_of ≤
// 2^53-1. Every failure is invalid_cursor.
func (q *Query) DecodeCursor(currentSeq int64) (Cursor, error) {
	c, err := ParseCursor(q.Cursor)
	if err != nil {
		return Cursor{}, err
	}
	if c.Digest != q.Digest() {
		return Cursor{}, errorf(CodeInvalidCursor, "/cursor", "the cursor belongs to another query")
	}
	if !(q.EffectiveAfterSeq() <= c.LastSeq && c.LastSeq <= c.Checkpoint && c.Checkpoint <= currentSeq) || c.AsOf > maxSafe {
		return Cursor{}, errorf(CodeInvalidCursor, "/cursor", "the cursor does not belong to this service's sequence")
	}
	return c, nil
}

// Window is the part of a service's sequence one query page reads: the
// records with After < seq ≤ Checkpoint, in seq order, that match the
// filters, at most Limit of them. Checkpoint and AsOf are fixed by the
// traversal's first page and answer as the page's scope.
type Window struct {
	Checkpoint int64
	AsOf       int64
	After      int64
	Limit      int
	Digest     string
}

// Window returns the window of q at a service whose current sequence is
// currentSeq and clock now: from q's cursor when it has one (DecodeCursor),
// else from after_seq up to currentSeq as of now, where after_seq beyond
// currentSeq is invalid_request. A negative or unsafe clock is
// invalid_request.
func (q *Query) Window(currentSeq, now int64) (Window, error) {
	w := Window{Limit: q.EffectiveLimit(), Digest: q.Digest()}
	if q.Cursor != "" {
		c, err := q.DecodeCursor(currentSeq)
		if err != nil {
			return Window{}, err
		}
		w.Checkpoint, w.AsOf, w.After = c.Checkpoint, c.AsOf, c.LastSeq
		return w, nil
	}
	if now < 0 || now > maxSafe {
		return Window{}, errorf(CodeInvalidRequest, "", "invalid service clock")
	}
	after := q.EffectiveAfterSeq()
	if after > currentSeq {
		return Window{}, errorf(CodeInvalidRequest, "/after_seq", "after_seq %d is beyond the current checkpoint %d", after, currentSeq)
	}
	w.Checkpoint, w.AsOf, w.After = currentSeq, now, after
	return w, nil
}

// Contains reports whether seq lies in the window.
func (w Window) Contains(seq int64) bool { return w.After < seq && seq <= w.Checkpoint }

// NextCursor returns the cursor of the page after one that ended at
// lastSeq. A service returns it only when a further matching record exists
// in the window (read Limit+1).
func (w Window) NextCursor(lastSeq int64) string {
	return Cursor{Checkpoint: w.Checkpoint, AsOf: w.AsOf, LastSeq: lastSeq, Digest: w.Digest}.String()
}

// Page selects one page from candidates, which must be the visible records
// in ascending seq order: those in the window that match f, at most Limit,
// and the next cursor when another would follow ("" otherwise).
func (w Window) Page(candidates []*Record, f *Filters) (page []*Record, next string) {
	for _, r := range candidates {
		if !w.Contains(r.Seq) || !f.Matches(&r.Envelope.Event) {
			continue
		}
		if len(page) == w.Limit {
			return page, w.NextCursor(page[len(page)-1].Seq)
		}
		page = append(page, r)
	}
	return page, ""
}

// Scope returns the page scope of the window at service.
func (w Window) Scope(service string) Scope {
	return Scope{Service: service, Checkpoint: w.Checkpoint, AsOf: w.AsOf}
}
