package plugin

import "unsafe"

// Fast paths for the record layout the host writes: members in a fixed order
// ({"seq":…,"event_id":"…","type":"…","actor":"…","created_at":…,
// "accepted_at":…,"mentions":[…],"payload":{…}}, each optional member
// either present in that order or absent), event IDs of 43 characters and
// Agent IDs of 53. Each check is a few word comparisons and one branch;
// anything else drops back to the general decoder at the same member, so
// the fast path changes speed, never results.

// lit is a literal of up to 16 bytes packed for comparison at any offset.
type lit struct {
	a, b   uint64
	ma, mb uint64 // masks of the bytes that count
	n      int
}

func mkLit(s string) lit {
	l := lit{n: len(s)}
	for i := 0; i < len(s); i++ {
		v := uint64(s[i]) << (8 * (i % 8))
		m := uint64(0xFF) << (8 * (i % 8))
		if i < 8 {
			l.a |= v
			l.ma |= m
		} else {
			l.b |= v
			l.mb |= m
		}
	}
	return l
}

// litAt reports whether b[i:] starts with l; it needs 16 readable bytes.
func litAt(b []byte, i int, l lit) bool {
	if i+16 > len(b) {
		return false
	}
	return word(b, i)&l.ma == l.a && word(b, i+8)&l.mb == l.b
}

var (
	litSeq        = mkLit(`"seq":`)
	litEventID    = mkLit(`,"event_id":"`)
	litType       = mkLit(`,"type":"`)
	litActor      = mkLit(`,"actor":"`)
	litCreatedAt  = mkLit(`,"created_at":`)
	litAcceptedAt = mkLit(`,"accepted_at":`)
	litMentions   = mkLit(`,"mentions":[`)
	litPayload    = mkLit(`,"payload":`)
)

// plainMask flags quotes and backslashes in x.
func plainMask(x uint64) uint64 { return zeroBytes(x^bQuote) | zeroBytes(x^bSlash) }

// id43 reads a 43-character string body at b[i:] followed by a quote,
// without a loop; ok is false when the layout differs.
func id43(b []byte, i int) (string, bool) {
	if i+48 > len(b) {
		return "", false
	}
	m := plainMask(word(b, i)) | plainMask(word(b, i+8)) | plainMask(word(b, i+16)) |
		plainMask(word(b, i+24)) | plainMask(word(b, i+32)) | plainMask(word(b, i+35))
	if m != 0 || at(b, i+43) != '"' {
		return "", false
	}
	return unsafe.String((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), i)), 43), true
}

// id53 is id43 for Agent IDs ("did:agent:" and 43 characters).
func id53(b []byte, i int) (string, bool) {
	if i+56 > len(b) {
		return "", false
	}
	m := plainMask(word(b, i)) | plainMask(word(b, i+8)) | plainMask(word(b, i+16)) |
		plainMask(word(b, i+24)) | plainMask(word(b, i+32)) | plainMask(word(b, i+40)) |
		plainMask(word(b, i+45))
	if m != 0 || at(b, i+53) != '"' {
		return "", false
	}
	return unsafe.String((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), i)), 53), true
}

// fastRecord decodes the leading members of a record that follow the host
// layout, starting just after '{'. It returns true when it consumed the
// whole record (through '}'); otherwise d.i is at a member boundary (a ','
// or the first name) and the general loop continues from there.
func (d *decoder) fastRecord(r *Record) bool {
	b, i := d.b, d.i
	if !litAt(b, i, litSeq) {
		return false
	}
	n, end := integer(b, i+litSeq.n)
	if end < 0 {
		return false
	}
	r.Seq, i = n, end
	d.i = i
	if litAt(b, i, litEventID) {
		s, ok := id43(b, i+litEventID.n)
		if !ok {
			return false
		}
		r.EventID, i = s, i+litEventID.n+44
		d.i = i
	}
	if litAt(b, i, litType) {
		end, escaped := stringEnd(b, i+litType.n-1)
		if end < 0 || escaped {
			return false
		}
		r.Type = unsafe.String((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), i+litType.n)), end-1-(i+litType.n))
		i = end
		d.i = i
	}
	if litAt(b, i, litActor) {
		s, ok := id53(b, i+litActor.n)
		if !ok {
			return false
		}
		r.Actor, i = s, i+litActor.n+54
		d.i = i
	}
	if litAt(b, i, litCreatedAt) {
		n, end := integer(b, i+litCreatedAt.n)
		if end < 0 {
			return false
		}
		r.CreatedAt, i = n, end
		d.i = i
	}
	if litAt(b, i, litAcceptedAt) {
		n, end := integer(b, i+litAcceptedAt.n)
		if end < 0 {
			return false
		}
		r.AcceptedAt, i = n, end
		d.i = i
	}
	if litAt(b, i, litMentions) {
		j := i + litMentions.n
		start := len(d.pool)
		for j < len(b) && at(b, j) == '"' {
			s, ok := id53(b, j+1)
			if !ok {
				d.pool = d.pool[:start]
				return false
			}
			d.pool = append(d.pool, s)
			j += 55
			if j < len(b) && at(b, j) == ',' {
				j++
			}
		}
		if j >= len(b) || at(b, j) != ']' {
			d.pool = d.pool[:start]
			return false
		}
		r.Mentions = d.pool[start:len(d.pool):len(d.pool)]
		i = j + 1
		d.i = i
	}
	if litAt(b, i, litPayload) {
		j := i + litPayload.n
		if j >= len(b) || at(b, j) != '{' {
			return false
		}
		end := valueEnd(b, j)
		if end < 0 {
			return false
		}
		r.Payload = Raw(b[j:end:end])
		i = end
		d.i = i
	}
	if i < len(b) && at(b, i) == '}' {
		d.i = i + 1
		return true
	}
	return false
}

// eqString reports whether a == b, comparing eight bytes per step (the
// runtime's string comparison goes byte by byte under WebAssembly).
func eqString(a, b string) bool {
	n := len(a)
	if n != len(b) {
		return false
	}
	if n < 8 {
		return a == b
	}
	pa, pb := unsafe.Pointer(unsafe.StringData(a)), unsafe.Pointer(unsafe.StringData(b))
	var diff uint64
	i := 0
	for ; i+8 <= n; i += 8 {
		diff |= *(*uint64)(unsafe.Add(pa, i)) ^ *(*uint64)(unsafe.Add(pb, i))
	}
	// The last eight bytes, overlapping what was compared.
	diff |= *(*uint64)(unsafe.Add(pa, n-8)) ^ *(*uint64)(unsafe.Add(pb, n-8))
	return diff == 0
}
