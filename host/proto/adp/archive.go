package adp

import (
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"slices"
	"strings"

	"apconnect/host/identity"
	par "apconnect/host/internal/parallel"
	"apconnect/host/text"
)

// ArchiveManifest is the archive manifest (18; kernel archiveManifest as
// SDK 0.12.6 reads it). Formats must hold "jsonl", the URL of the record
// log (one server record per line); Packs lists every external pack the
// room imported with a URL serving the pack document's exact bytes.
type ArchiveManifest struct {
	Protocol    string            `json:"protocol"`        // "agent-discourse/1.0"
	Type        string            `json:"type"`            // ArchiveManifestType
	RoomID      string            `json:"room_id"`         // the archived room
	URL         string            `json:"url"`             // canonical room URL
	GeneratedAt int64             `json:"generated_at"`    // generation time, Unix ms
	LastSeq     int64             `json:"last_seq"`        // seq of the last record
	LastHash    string            `json:"last_hash"`       // hash of the last record: the commitment
	Formats     map[string]string `json:"formats"`         // "jsonl" (required), "markdown", … by name
	Packs       []ArchivedPack    `json:"packs,omitempty"` // the external packs the room imported
	Extra       map[string]any    `json:"extra,omitempty"` // opaque data
}

// ArchivedPack is one external pack of an archive (kernel archivedPack):
// the import URL the signed declarations name, their digest, and where the
// host serves the document's exact bytes.
type ArchivedPack struct {
	Pack   string `json:"pack"`   // the import URL (the pack's id in its document)
	Digest string `json:"digest"` // the digest the signed import carries
	URL    string `json:"url"`    // where the exact document bytes are served
}

// ParseArchiveManifest strictly parses a manifest and validates it against
// the kernel schema's archiveManifest (invalid_request on failure).
func ParseArchiveManifest(data []byte) (*ArchiveManifest, error) {
	v, err := identity.ParseStrict(data)
	if err != nil {
		return nil, jsonError(err, "", CodeInvalidRequest)
	}
	return archiveManifestFromValue(v)
}

// archiveManifestFromValue is ParseArchiveManifest on a parsed value.
func archiveManifestFromValue(v any) (*ArchiveManifest, error) {
	if err := validateKernel("archiveManifest", v, CodeInvalidRequest, ""); err != nil {
		return nil, err
	}
	m := v.(map[string]any)
	man := &ArchiveManifest{
		Protocol: str(m, "protocol"), Type: str(m, "type"), RoomID: str(m, "room_id"),
		URL: str(m, "url"), LastHash: str(m, "last_hash"),
	}
	man.GeneratedAt, _ = intMember(m, "generated_at")
	man.LastSeq, _ = intMember(m, "last_seq")
	if f, ok := m["formats"].(map[string]any); ok {
		man.Formats = map[string]string{}
		for k, v := range f {
			man.Formats[k], _ = v.(string)
		}
	}
	if ps, ok := m["packs"].([]any); ok {
		man.Packs = make([]ArchivedPack, len(ps))
		for i, pv := range ps {
			pm := pv.(map[string]any) // the schema requires archivedPack objects
			man.Packs[i] = ArchivedPack{Pack: str(pm, "pack"), Digest: str(pm, "digest"), URL: str(pm, "url")}
		}
	}
	if x, ok := m["extra"].(map[string]any); ok {
		man.Extra = cloneObject(x)
	}
	return man, nil
}

// Problem is one verification finding, at a record (Seq > 0) or about the
// archive as a whole (Seq 0).
type Problem struct {
	Seq     int64  `json:"seq,omitempty"`     // the record, 0 for the archive
	Code    string `json:"code"`              // error code (section 19, identity, or verification)
	Pointer string `json:"pointer,omitempty"` // pointer into the record or manifest
	Message string `json:"message"`           // human-readable detail
}

// ArchiveReport is the outcome of Replay or VerifyArchive: every problem
// found (not only the first), the redacted records, the chain's end and the
// replayed room state.
type ArchiveReport struct {
	RoomID   string `json:"room_id"`   // room of the first record
	Records  int    `json:"records"`   // records examined
	LastSeq  int64  `json:"last_seq"`  // seq of the last record
	LastHash string `json:"last_hash"` // hash of the last record
	// Redacted lists the seqs of redacted records (ADP 18 step 5). Their
	// signatures, payloads and permissions could not be verified.
	Redacted []int64   `json:"redacted,omitempty"`
	Problems []Problem `json:"problems,omitempty"` // every finding, in record order
	// Status is the room state at the manifest's generated_at (VerifyArchive
	// only) or after the last record.
	Status RoomStatus `json:"status,omitempty"`
	// Room is the replayed state; nil when the genesis record was unusable.
	Room *Room `json:"-"`
}

// OK reports whether no problem was found. Redactions are not problems, but
// a verifier must report them (14.1).
func (a *ArchiveReport) OK() bool { return len(a.Problems) == 0 }

func (a *ArchiveReport) add(seq int64, err error) {
	e := AsError(err)
	a.Problems = append(a.Problems, Problem{Seq: seq, Code: e.Code, Pointer: e.Pointer, Message: e.Message})
}

// Replay verifies a room's records as ADP 18 steps 1–5 describe and reports
// every problem: records ordered by seq, gapless from 1, no duplicates, one
// room, no signed envelope carried by two records (replayed_envelope, a
// check the SDK's verifier lacks); every record hash recomputed and every pre_hash linked; every
// non-redacted envelope's hash and signature verified; room state replayed
// with CheckCreate and Check evaluated at each record's accepted_at (the
// historical time policy: no live window, no nonce), base anchors looked up
// among the earlier records, custom payloads validated against the
// definition in force at their seq; redacted records reported. rules gives
// the limits to hold the host to (nil: VerifierLimits) and resolves external
// packs (StaticPacks of the archive's pack documents). The hashes and
// signatures are checked on every core; the replay runs in seq order.
func Replay(rules *Rules, records []*Record) *ArchiveReport {
	var rp replayer
	rp.init(rules.orDefault())
	recs := make([]*Record, 0, len(records))
	for i, rec := range records {
		if rec == nil {
			rp.rep.add(0, newError(CodeInvalidRecord, "", "record %d is nil", i))
			continue
		}
		recs = append(recs, rec)
	}
	slices.SortStableFunc(recs, func(a, b *Record) int { return cmp.Compare(a.Seq, b.Seq) })
	rp.add(recs)
	return rp.finish()
}

// ErrOutOfOrder is returned by ArchiveStream.Add for a record whose seq is
// below one added before: a stream is verified in the order it arrives, so
// such an archive is verified whole instead (VerifyArchive sorts it).
var ErrOutOfOrder = errors.New("adp: archive records out of seq order")

// replayer is the state of Replay between records: it takes them in
// ascending seq order, any number at a time.
type replayer struct {
	rules   *Rules
	rep     *ArchiveReport
	hashes  map[int64]string
	events  map[string]int64 // event hash → seq of the first record carrying it
	lookup  CheckOptions
	room    *Room
	prev    *Record
	packRec []*Record // the room.create and type.define records (ReferencedPacks)
	collect bool      // add gathers packRec
}

func (p *replayer) init(rules *Rules) {
	p.rules, p.rep = rules, &ArchiveReport{}
	p.hashes, p.events = map[int64]string{}, map[string]int64{}
	p.lookup = CheckOptions{
		Records:   RecordHashFunc(func(seq int64) (string, bool) { h, ok := p.hashes[seq]; return h, ok }),
		Events:    EventFunc(func(id string) bool { _, ok := p.events[id]; return ok }),
		Envelopes: EnvelopeSeqFunc(func(id string) (int64, bool) { s, ok := p.events[id]; return s, ok }),
	}
}

// CheckedRecords are records whose state-independent checks ran: shape and
// record hash (Validate) and, for signed envelopes, the event hash and
// signature. CheckRecords runs them on every core, on any goroutine, so a
// reader can check the next chunk of an archive while ArchiveStream replays
// the one before.
type CheckedRecords struct {
	recs          []*Record
	valid, signed []error
}

// CheckRecords runs the state-independent checks of records (nil records
// are dropped).
func CheckRecords(records []*Record) *CheckedRecords {
	recs := make([]*Record, 0, len(records))
	for _, rec := range records {
		if rec != nil {
			recs = append(recs, rec)
		}
	}
	c := &CheckedRecords{recs: recs, valid: make([]error, len(recs)), signed: make([]error, len(recs))}
	parallel(len(recs), func(i int) {
		c.valid[i] = recs[i].Validate()
		if recs[i].Envelope != nil {
			c.signed[i] = recs[i].Envelope.Verify()
		}
	})
	return c
}

// Records returns the checked records.
func (c *CheckedRecords) Records() []*Record { return c.recs }

// add replays records in ascending seq order (equal seqs are duplicates).
func (p *replayer) add(recs []*Record) { p.addChecked(CheckRecords(recs)) }

// addChecked is add on checked records.
func (p *replayer) addChecked(c *CheckedRecords) {
	recs, valid, signed := c.recs, c.valid, c.signed
	rep := p.rep
	for i, rec := range recs {
		prev := p.prev
		if rep.Records == 0 {
			rep.RoomID = rec.RoomID
		}
		rep.Records++
		if p.collect && rec.Envelope != nil && (rec.Envelope.Event.Type == TypeRoomCreate || rec.Envelope.Event.Type == TypeTypeDefine) {
			p.packRec = append(p.packRec, rec)
		}
		switch {
		case prev != nil && rec.Seq == prev.Seq:
			rep.add(rec.Seq, newError(CodeChainBroken, "/seq", "seq %d appears more than once", rec.Seq))
			continue
		case prev == nil && rec.Seq != 1:
			rep.add(rec.Seq, newError(CodeChainBroken, "/seq", "records start at seq %d, not 1", rec.Seq))
		case prev != nil && rec.Seq != prev.Seq+1:
			if rec.Seq == prev.Seq+2 {
				rep.add(rec.Seq, newError(CodeChainBroken, "/seq", "record %d is missing", prev.Seq+1))
			} else {
				rep.add(rec.Seq, newError(CodeChainBroken, "/seq", "records %d to %d are missing", prev.Seq+1, rec.Seq-1))
			}
		}
		if rec.RoomID != rep.RoomID {
			rep.add(rec.Seq, newError(CodeChainBroken, "/room_id", "record belongs to room %q, not %q", text.Truncate(rec.RoomID, 64), rep.RoomID))
		}
		if err := valid[i]; err != nil {
			rep.add(rec.Seq, err)
		}
		if prev != nil && rec.Seq == prev.Seq+1 && rec.PreHash != prev.Hash {
			rep.add(rec.Seq, newError(CodeChainBroken, "/pre_hash", "pre_hash does not equal the hash of the record at seq %d", prev.Seq))
		}
		if rec.IsRedacted() {
			rep.Redacted = append(rep.Redacted, rec.Seq)
		}
		switch {
		case rec.Envelope == nil && rec.Redaction == nil:
			// Nothing to replay; Validate reported it.
		case rec.Seq == 1 && prev == nil:
			p.room = replayGenesis(p.rules, rec, signed[i], rep)
		case p.room == nil:
			// No state to replay against; the signature still verifies.
			if err := signed[i]; err != nil {
				rep.add(rec.Seq, withPointerPrefix(err, "/envelope"))
			}
		default:
			room := p.room
			if err := signed[i]; err != nil {
				rep.add(rec.Seq, withPointerPrefix(err, "/envelope"))
			} else if err := room.CheckRecord(p.rules, rec, p.lookup); err != nil {
				rep.add(rec.Seq, err)
			}
			if err := room.apply(p.rules, rec); err != nil {
				rep.add(rec.Seq, err)
				class, cerr := ClassOf(rec.Type(), room.Types)
				if cerr != nil {
					class = ClassSignal
				}
				room.advance(rec, class)
			}
		}
		p.hashes[rec.Seq] = rec.Hash
		if h := rec.EnvelopeHash(); h != "" {
			if _, seen := p.events[h]; !seen {
				p.events[h] = rec.Seq
			}
		}
		p.prev = rec
	}
}

// finish ends the replay and returns its report.
func (p *replayer) finish() *ArchiveReport {
	rep := p.rep
	if rep.Records == 0 {
		rep.add(0, newError(CodeChainBroken, "", "the archive holds no records"))
		return rep
	}
	rep.LastSeq, rep.LastHash = p.prev.Seq, p.prev.Hash
	rep.Room = p.room
	if p.room != nil {
		rep.Status = p.room.StatusAt(p.prev.AcceptedAt)
	}
	return rep
}

// parallel runs fn(0..n-1) on GOMAXPROCS goroutines, inline for small n
// (fewer than 16 items: a goroutine per 8 at least pays for itself).
func parallel(n int, fn func(i int)) {
	par.For(n, min(runtime.GOMAXPROCS(0), n/8), fn)
}

// replayGenesis verifies and materializes the room.create record, reporting
// problems; it returns nil when no room can be built.
func replayGenesis(rules *Rules, rec *Record, signed error, rep *ArchiveReport) *Room {
	if rec.Envelope == nil {
		rep.add(rec.Seq, newError(CodeInvalidRecord, "/envelope", "the room.create record cannot be redacted"))
		return nil
	}
	if err := signed; err != nil {
		rep.add(rec.Seq, withPointerPrefix(err, "/envelope"))
	}
	if err := CheckCreate(rules, rec.Envelope); err != nil {
		rep.add(rec.Seq, withPointerPrefix(err, "/envelope"))
	}
	room, err := NewRoom(rules, rec)
	if err != nil {
		// NewRoom also checks the link; a record whose hash was already
		// reported still yields a room when its payload is usable.
		spec, perr := rules.parseCreate(historical, rec.Envelope.Event.Payload, Limits{}, "")
		if perr != nil || rec.Envelope.Event.Type != TypeRoomCreate {
			rep.add(rec.Seq, err)
			return nil
		}
		room = roomFromSpec(rec, spec)
	}
	return room
}

// ArchiveOptions tune VerifyArchive.
type ArchiveOptions struct {
	// SelfContained says the pack documents came from the archive file
	// itself (the older layout: a manifest line, room.archive.pack lines,
	// then the records) rather than from manifest.packs, so a manifest
	// without packs is not a missing pack.
	SelfContained bool
	// Limits holds the host to its published limits; nil applies
	// VerifierLimits (protocol rules only).
	Limits *Limits
	// HostOrigin overrides the host origin room.create must name; by
	// default it is the origin of the manifest's url.
	HostOrigin string
	// Schemas caches compiled schemas; nil uses the package default.
	Schemas *SchemaCache
}

// VerifyArchive verifies an archive by the five steps of ADP 18 as SDK
// 0.12.6 reads them, with no network: (1) the manifest's protocol, type and
// room; (2) formats.jsonl and every packs[].url on the host's origin; (3)
// the chain, from seq 1 to last_seq ending at last_hash, every record in
// the room, every signed envelope's hash and signature, redactions
// reported; (4) the external packs: every manifest.packs entry's digest
// equals the digest its signed import carries, its document (packDocs,
// keyed by the import URL: raw bytes) matches the digest and contains the
// pack whose id is that URL, and every signed import is listed (unless
// opts.SelfContained); (5) the room state replayed (Replay). The host
// origin is opts.HostOrigin or that of the manifest's url, and room.create
// must name it. It returns an error only for unusable input (a nil
// manifest); every finding is in the report.
func VerifyArchive(manifest *ArchiveManifest, records []*Record, packDocs map[string][]byte, opts *ArchiveOptions) (*ArchiveReport, error) {
	st, err := NewArchiveStream(manifest, packDocs, opts)
	if err != nil {
		return nil, err
	}
	recs := make([]*Record, 0, len(records))
	for i, rec := range records {
		if rec == nil {
			st.rp.rep.add(0, newError(CodeInvalidRecord, "", "record %d is nil", i))
			continue
		}
		recs = append(recs, rec)
	}
	// The imports are read in the order given (a conflict names the later
	// record), the replay in seq order.
	for _, rec := range recs {
		if rec.Envelope != nil && (rec.Envelope.Event.Type == TypeRoomCreate || rec.Envelope.Event.Type == TypeTypeDefine) {
			st.rp.packRec = append(st.rp.packRec, rec)
		}
	}
	st.rp.collect = false
	slices.SortStableFunc(recs, func(a, b *Record) int { return cmp.Compare(a.Seq, b.Seq) })
	st.rp.add(recs)
	return st.Report(), nil
}

// ArchiveStream is VerifyArchive over records that arrive in seq order, a
// chunk at a time (a JSON Lines archive read as it streams in): memory
// holds one chunk and, per record verified, its hash and event ID (the base
// anchors and references later records may name). Reports equal
// VerifyArchive's on the same records.
type ArchiveStream struct {
	manifest *ArchiveManifest
	packDocs map[string][]byte
	opts     ArchiveOptions
	host     string
	uerr     error
	u        *url.URL
	rp       replayer
}

// NewArchiveStream starts verifying the archive of manifest (see
// VerifyArchive); packDocs must be complete before the first record.
func NewArchiveStream(manifest *ArchiveManifest, packDocs map[string][]byte, opts *ArchiveOptions) (*ArchiveStream, error) {
	if manifest == nil {
		return nil, newError(CodeInvalidRequest, "", "archive manifest is missing")
	}
	if opts == nil {
		opts = &ArchiveOptions{}
	}
	limits := VerifierLimits()
	if opts.Limits != nil {
		limits = *opts.Limits
	}
	st := &ArchiveStream{manifest: manifest, packDocs: packDocs, opts: *opts, host: opts.HostOrigin}
	st.u, st.uerr = url.Parse(manifest.URL)
	if st.host == "" && st.uerr == nil && st.u.Scheme == "https" && st.u.Host != "" {
		st.host = "https://" + st.u.Host
	}
	st.rp.init(&Rules{Limits: limits, HostOrigin: st.host, Packs: StaticPacks(packDocs), Schemas: opts.Schemas})
	st.rp.collect = true
	return st, nil
}

// Add verifies the next records, ascending by seq and none below a seq
// added before (ErrOutOfOrder, and nothing of recs is added); a repeated
// seq is reported as a duplicate. Nil records are skipped.
func (st *ArchiveStream) Add(recs []*Record) error {
	if err := st.inOrder(recs); err != nil {
		return err
	}
	st.rp.add(recs)
	return nil
}

// AddChecked is Add on records checked by CheckRecords.
func (st *ArchiveStream) AddChecked(c *CheckedRecords) error {
	if err := st.inOrder(c.recs); err != nil {
		return err
	}
	st.rp.addChecked(c)
	return nil
}

func (st *ArchiveStream) inOrder(recs []*Record) error {
	last := int64(-1)
	if st.rp.prev != nil {
		last = st.rp.prev.Seq
	}
	for _, rec := range recs {
		if rec == nil {
			continue
		}
		if rec.Seq < last {
			return ErrOutOfOrder
		}
		last = rec.Seq
	}
	return nil
}

// Report finishes the verification: the manifest's checks, the packs', and
// the replay's findings.
func (st *ArchiveStream) Report() *ArchiveReport {
	manifest, host, u, uerr := st.manifest, st.host, st.u, st.uerr
	rep := st.rp.finish()
	var mp []Problem
	bad := func(code, ptr, format string, args ...any) {
		mp = append(mp, Problem{Code: code, Pointer: ptr, Message: fmt.Sprintf(format, args...)})
	}
	if manifest.Protocol != Protocol {
		bad(CodeInvalidRequest, "/protocol", "manifest protocol must be %q", Protocol)
	}
	if manifest.Type != ArchiveManifestType {
		bad(CodeInvalidRequest, "/type", "manifest type must be %q", ArchiveManifestType)
	}
	if manifest.RoomID != rep.RoomID {
		bad(CodeChainBroken, "/room_id", "manifest room_id %q differs from the records' room %q", text.Truncate(manifest.RoomID, 64), rep.RoomID)
	}
	if uerr != nil || u.Scheme != "https" || !strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/"+manifest.RoomID) {
		bad(CodeInvalidRequest, "/url", "manifest url must be the https room URL ending in /%s", manifest.RoomID)
	}
	if manifest.LastSeq != rep.LastSeq {
		bad(CodeChainBroken, "/last_seq", "manifest last_seq %d differs from the last record's seq %d", manifest.LastSeq, rep.LastSeq)
	}
	if manifest.LastHash != rep.LastHash {
		bad(CodeChainBroken, "/last_hash", "manifest last_hash does not equal the hash of the record at seq %d", rep.LastSeq)
	}
	// ParseArchiveManifest has required formats.jsonl; a manifest built in
	// code may leave it out.
	if jsonl, ok := manifest.Formats["jsonl"]; ok && host != "" && !onOrigin(jsonl, host) {
		bad(CodeInvalidRequest, "/formats/jsonl", "formats.jsonl %q is not on the host origin %s", text.Truncate(jsonl, 200), host)
	}
	mp = append(mp, verifyArchivedPacks(manifest, st.rp.packRec, st.packDocs, host, &st.opts, st.rp.rules)...)
	rep.Problems = append(mp, rep.Problems...)
	if rep.Room != nil {
		rep.Status = rep.Room.StatusAt(manifest.GeneratedAt)
	}
	return rep
}

// verifyArchivedPacks is step 4 of VerifyArchive: manifest.packs against
// the signed imports and the documents.
func verifyArchivedPacks(manifest *ArchiveManifest, records []*Record, packDocs map[string][]byte, host string, opts *ArchiveOptions, rules *Rules) []Problem {
	var out []Problem
	bad := func(ptr, format string, args ...any) {
		out = append(out, Problem{Code: CodePackUnavailable, Pointer: ptr, Message: fmt.Sprintf(format, args...)})
	}
	signed, conflicts := ReferencedPacks(records)
	out = append(out, conflicts...)
	listed := map[string]string{}
	for i, p := range manifest.Packs {
		ptr := fmt.Sprintf("/packs/%d", i)
		if d, dup := listed[p.Pack]; dup {
			if d != p.Digest {
				bad(ptr, "pack %s is listed twice with different digests", text.Truncate(p.Pack, 200))
			}
			continue
		}
		listed[p.Pack] = p.Digest
		if d, ok := signed[p.Pack]; ok && d != p.Digest {
			bad(ptr+"/digest", "the archived digest of %s differs from the digest its signed import carries", text.Truncate(p.Pack, 200))
		}
		if host != "" && !onOrigin(p.URL, host) {
			bad(ptr+"/url", "pack URL %q is not on the host origin %s", text.Truncate(p.URL, 200), host)
		}
		doc, ok := packDocs[p.Pack]
		if !ok {
			bad(ptr, "the document of pack %s was not provided", text.Truncate(p.Pack, 200))
			continue
		}
		if err := VerifyPackDigest(doc, p.Digest); err != nil {
			bad(ptr+"/digest", "pack %s: %s", text.Truncate(p.Pack, 200), AsError(err).Message)
			continue
		}
		if err := packHasID(doc, p.Pack, rules); err != nil {
			bad(ptr+"/pack", "%s", AsError(err).Message)
		}
	}
	if !opts.SelfContained {
		for _, u := range sortedKeys(signed) {
			if d, ok := listed[u]; !ok || d != signed[u] {
				bad("/packs", "the archive does not list the external pack %s its records import", text.Truncate(u, 200))
			}
		}
	}
	return out
}

// packHasID checks that a pack document holds the pack whose id is the
// import URL: the pack a reader takes from it (SDK 0.12.6).
func packHasID(doc []byte, id string, rules *Rules) error {
	d, err := ParsePackDocument(doc, Limits{}, rules.schemas())
	if err != nil {
		return err
	}
	for _, p := range d.Packs {
		if p.ID == id {
			return nil
		}
	}
	return newError(CodePackUnavailable, "", "archived pack identity mismatch: the document at %s holds no pack with that id", text.Truncate(id, 200))
}

// ReferencedPacks returns the external packs the signed room.create and
// type.define records import, by URL with their digest, and a problem for
// every URL imported with two different digests (SDK 0.12.6: conflicting
// versions of an external pack need separate URLs). Redacted records
// carry no payload and import nothing.
func ReferencedPacks(records []*Record) (map[string]string, []Problem) {
	refs := map[string]string{}
	var problems []Problem
	for _, rec := range records {
		if rec == nil || rec.Envelope == nil {
			continue
		}
		payload, _ := rec.Envelope.Event.Payload.(map[string]any)
		var decls []any
		switch rec.Envelope.Event.Type {
		case TypeRoomCreate:
			decls, _ = payload["types"].([]any)
		case TypeTypeDefine:
			decls = []any{payload}
		}
		for _, dv := range decls {
			m, _ := dv.(map[string]any)
			u, ok1 := m["pack"].(string)
			d, ok2 := m["digest"].(string)
			if !ok1 || !ok2 {
				continue
			}
			if old, seen := refs[u]; seen && old != d {
				problems = append(problems, Problem{Seq: rec.Seq, Code: CodePackUnavailable, Pointer: "/envelope/event/payload",
					Message: fmt.Sprintf("pack %s is imported with two digests; conflicting external pack versions need separate pack URLs", text.Truncate(u, 200))})
				continue
			}
			refs[u] = d
		}
	}
	return refs, problems
}

// onOrigin reports whether raw is an https URL on origin (compared as
// origins: scheme, host and port).
func onOrigin(raw, origin string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
		return false
	}
	o, err := identity.NormalizeOrigin("https://" + u.Host)
	if err != nil {
		return false
	}
	want, err := identity.NormalizeOrigin(origin)
	return err == nil && o == want
}
