package room

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"

	"apconnect/host/identity"
	"apconnect/host/internal/parallel"
	"apconnect/host/proto/adp"
	"apconnect/host/text"
)

// CodeForked is the failure code of a record that differs from the
// verified record at the same seq: the host served a forked history.
const CodeForked = "forked_history"

// Processor verifies and applies the records of rooms of one host for one
// agent. It is safe for concurrent use (it holds no state of its own).
type Processor struct {
	// Rules are the verification rules: the host's origin as HostOrigin
	// (room.create must name it), verifier limits, pack resolution.
	Rules *adp.Rules
	// Host is the host origin the records were read from.
	Host string
	// Self is the active Agent ID (inbox items are about it).
	Self string
	// Workers bounds the parallel signature verification
	// (runtime.GOMAXPROCS when zero).
	Workers int
}

// State is a room's verified local state: the materialized room (nil before
// the genesis record) and its active turn.
type State struct {
	Room       *adp.Room
	ActiveTurn *ActiveTurn
}

// Applied is one record that passed verification, with what it caused.
type Applied struct {
	Record *adp.Record
	// Class is the record's freshness class.
	Class adp.Class
	// Item is its timeline item.
	Item TimelineItem
	// Inbox are the inbox items it causes for the agent.
	Inbox []InboxItem
	// Head is the room head after the record.
	Head adp.Link
	// RecordJSON is the record's canonical JSON (computed with the
	// parallel checks, for the caller to store).
	RecordJSON []byte
}

// Failure is the first record of a batch that did not verify.
type Failure struct {
	Seq     int64  // its seq
	Code    string // adp / identity code (invalid_signature, chain_broken, …) or CodeForked
	Message string // what was wrong
	Err     error  // the underlying error
}

// Error implements error.
func (f *Failure) Error() string {
	return fmt.Sprintf("record seq %d failed verification (%s): %s", f.Seq, f.Code, f.Message)
}

// Result is the outcome of Process.
type Result struct {
	// State is the room after the applied records (the input state when
	// none was applied; never mutated in place).
	State *State
	// Applied are the records applied, in order.
	Applied []Applied
	// Skipped counts records at or below the verified position that match
	// it (already applied; de-duplicated by seq).
	Skipped int
	// Failure is set when a record failed; nothing from it on was applied.
	Failure *Failure
}

// Options tune one Process call.
type Options struct {
	// Known returns the record hash the store holds at a seq (the record
	// window), used to detect forks among already-applied records and to
	// check anchors. nil knows nothing beyond the room state.
	Known func(seq int64) (hash string, ok bool)
	// Envelopes returns the seq of the verified record of the room that
	// carries an envelope (by event hash), over the room's whole verified
	// history, not only the record window: a record whose envelope an
	// earlier record carries is a failure (replayed_envelope). The records
	// of the batch itself are always checked against each other; nil knows
	// nothing beyond the batch. EnvelopeSeqs.Lookup is one.
	Envelopes func(eventHash string) (seq int64, ok bool)
}

// EnvelopeSeqs maps event hashes to the seq of the record that carries them:
// an envelope index for Options.Envelopes. A caller that stores records keeps
// the index with them (bounded memory: look up the hashes of one batch,
// Prepared.EnvelopeIDs); one that verifies a bounded run of records in memory
// fills it with Add.
type EnvelopeSeqs map[string]int64

// Lookup answers Options.Envelopes.
func (m EnvelopeSeqs) Lookup(eventHash string) (int64, bool) {
	seq, ok := m[eventHash]
	return seq, ok
}

// then looks a hash up in m, then in outer (when not nil).
func (m EnvelopeSeqs) then(outer func(string) (int64, bool)) adp.EnvelopeSeqFunc {
	return func(id string) (int64, bool) {
		if seq, ok := m[id]; ok {
			return seq, true
		}
		if outer != nil {
			return outer(id)
		}
		return 0, false
	}
}

// Add indexes the envelopes of applied records (the first seq of a hash
// wins).
func (m EnvelopeSeqs) Add(applied []Applied) {
	for _, a := range applied {
		if id := a.Record.EnvelopeHash(); id != "" {
			if _, ok := m[id]; !ok {
				m[id] = a.Record.Seq
			}
		}
	}
}

// Prepared is a batch of records whose state-independent checks — record
// hash, envelope hash and strict signature — ran (in parallel), or are
// running (PrepareAsync), with each record's canonical JSON. Preparing the
// next history page while the current one is applied overlaps the two.
type Prepared struct {
	recs []*adp.Record
	errs []error
	raw  [][]byte
	// chunks[k] is closed once the checks of records
	// [k*prepareChunk, (k+1)*prepareChunk) ran; nil when all of them ran
	// before the Prepared was returned.
	chunks []chan struct{}
	done   chan struct{} // closed once every chunk is closed (PrepareAsync)
}

// prepareChunk is how many records a worker of PrepareAsync checks at a
// time: small enough that the in-order pass follows the workers closely,
// large enough that handing chunks out costs nothing next to the checks.
const prepareChunk = 16

// Records returns the prepared records.
func (pr *Prepared) Records() []*adp.Record { return pr.recs }

// EnvelopeIDs returns the event hashes the prepared records carry (redacted
// records keep theirs), for a store lookup of the envelope index before
// ProcessPrepared. It does not wait for the checks.
func (pr *Prepared) EnvelopeIDs() []string {
	ids := make([]string, 0, len(pr.recs))
	for _, rec := range pr.recs {
		if rec == nil {
			continue
		}
		if id := rec.EnvelopeHash(); id != "" {
			ids = append(ids, id)
		}
	}
	return ids
}

// Wait returns once every check of the batch ran.
func (pr *Prepared) Wait() { <-pr.Done() }

// Done is closed once every check of the batch ran.
func (pr *Prepared) Done() <-chan struct{} {
	if pr.done == nil {
		return closed
	}
	return pr.done
}

// closed is a closed channel: the Done of a batch whose checks all ran.
var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// ready waits until the checks of record i ran.
func (pr *Prepared) ready(i int) {
	if pr.chunks != nil {
		<-pr.chunks[i/prepareChunk]
	}
}

// Prepare runs the state-independent checks of records in parallel.
func (p *Processor) Prepare(recs []*adp.Record) *Prepared {
	errs, raw := p.precheck(recs, 0)
	return &Prepared{recs: recs, errs: errs, raw: raw}
}

// PrepareAsync starts the state-independent checks of records on the
// Processor's workers, a chunk of records at a time in order, and returns
// at once: ProcessPrepared waits for each record's checks before it uses
// them, so the in-order pass over the first records runs while the workers
// check the later ones, and Wait says when all of them ran. The checks
// always run to the end (a batch is at most a history page), so a
// ProcessPrepared never waits for ever.
func (p *Processor) PrepareAsync(recs []*adp.Record) *Prepared {
	return p.PrepareAsyncJSON(recs, 0)
}

// PrepareAsyncJSON is PrepareAsync for a caller that stores no record at or
// below jsonThrough (a catch-up leaving them out of its window): those get
// every check but no canonical JSON (their Applied.RecordJSON is nil; a
// caller that stores one after all serializes the record).
func (p *Processor) PrepareAsyncJSON(recs []*adp.Record, jsonThrough int64) *Prepared {
	n := (len(recs) + prepareChunk - 1) / prepareChunk
	pr := &Prepared{recs: recs, errs: make([]error, len(recs)), raw: make([][]byte, len(recs)),
		chunks: make([]chan struct{}, n), done: make(chan struct{})}
	for k := range pr.chunks {
		pr.chunks[k] = make(chan struct{})
	}
	if n == 0 {
		close(pr.done)
		return pr
	}
	var next, finished atomic.Int64
	worker := func() {
		var scratch []byte // the event bytes of records without JSON
		for k := int(next.Add(1) - 1); k < n; k = int(next.Add(1) - 1) {
			for i := k * prepareChunk; i < min((k+1)*prepareChunk, len(recs)); i++ {
				if recs[i] != nil {
					pr.raw[i], pr.errs[i] = check(recs[i], recs[i].Seq > jsonThrough, &scratch)
				}
			}
			close(pr.chunks[k])
			if finished.Add(1) == int64(n) {
				close(pr.done)
			}
		}
	}
	for range min(p.workers(), n) {
		go worker()
	}
	return pr
}

// Process verifies records (ascending by seq, typically one history page or
// one live item) against st and applies those that pass, stopping at the
// first failure. Records at or below the verified position are skipped
// when they match what was verified before, and are a failure (forked
// history) when they do not. The first record of a room without state must
// be its genesis record (seq 1).
func (p *Processor) Process(st *State, recs []*adp.Record, opt Options) *Result {
	var last int64
	if st != nil && st.Room != nil {
		last = st.Room.Last.Seq
	}
	errs, raw := p.precheck(recs, last)
	return p.ProcessPrepared(st, &Prepared{recs: recs, errs: errs, raw: raw}, opt)
}

// ProcessPrepared is Process on a prepared batch.
func (p *Processor) ProcessPrepared(st *State, prep *Prepared, opt Options) *Result {
	if st == nil {
		st = &State{}
	}
	recs, pre, raw := prep.recs, prep.errs, prep.raw
	res := &Result{State: st, Applied: make([]Applied, 0, len(recs))}
	work := &State{ActiveTurn: st.ActiveTurn}
	cloned := false
	batch := make(map[int64]string, len(recs))
	envs := make(EnvelopeSeqs, len(recs))
	envelopes := envs.then(opt.Envelopes)
	known := func(seq int64) (string, bool) {
		if h, ok := batch[seq]; ok {
			return h, true
		}
		if r := res.State.Room; r != nil && seq == r.Last.Seq {
			return r.Last.Hash, true
		}
		if opt.Known != nil {
			return opt.Known(seq)
		}
		return "", false
	}
	fail := func(rec *adp.Record, err error) *Result {
		res.Failure = failure(rec.Seq, err)
		return res
	}
	for i, rec := range recs {
		if rec == nil {
			res.Failure = &Failure{Code: adp.CodeInvalidRecord, Message: "nil record"}
			return res
		}
		prep.ready(i)
		cur := st.Room
		if cloned {
			cur = work.Room
		}
		if cur != nil && rec.Seq <= cur.Last.Seq {
			if h, ok := known(rec.Seq); ok && h != rec.Hash {
				return fail(rec, &adp.Error{Code: CodeForked, Message: fmt.Sprintf("record at seq %d differs from the verified record (forked history)", rec.Seq)})
			}
			res.Skipped++
			continue
		}
		if cur == nil {
			room, err := adp.VerifyGenesis(p.Rules, rec)
			if err != nil {
				return fail(rec, err)
			}
			item := NewTimelineItem(rec, room.Types)
			work.Room, cloned = room, true
			res.State = work
			res.Applied = append(res.Applied, Applied{Record: rec, Class: adp.ClassGenesis, Item: item, Head: room.Head, RecordJSON: raw[i]})
			batch[rec.Seq] = rec.Hash
			envs[rec.EnvelopeHash()] = rec.Seq
			continue
		}
		if !cloned {
			work.Room, cloned = cur.Clone(), true
			res.State = work
		}
		room := work.Room
		if err := pre[i]; err != nil {
			return fail(rec, err)
		}
		// The record's shape and hash were validated in the parallel pass;
		// here only its position: the authoritative adp.CheckLink runs again
		// inside Apply, before the room changes.
		if err := linkError(room, rec); err != nil {
			return fail(rec, err)
		}
		class, err := adp.ClassOf(rec.Type(), room.Types)
		if err != nil {
			return fail(rec, err)
		}
		// As a reader: the union of the current rules and the 0f87fee
		// drafts', so histories written by older hosts verify.
		if err := room.CheckRecord(p.Rules, rec, adp.CheckOptions{Records: adp.RecordHashFunc(known), TrustUnknownAnchors: true, Envelopes: envelopes}); err != nil {
			return fail(rec, err)
		}
		wasMember := room.IsActiveMember(p.Self)
		item := NewTimelineItem(rec, room.Types)
		if err := room.Apply(p.Rules, rec); err != nil {
			return fail(rec, err)
		}
		if t := turnFrom(rec); t != nil {
			work.ActiveTurn = t
		}
		a := Applied{Record: rec, Class: class, Item: item, Head: room.Head, RecordJSON: raw[i]}
		a.Inbox = p.inboxFor(wasMember, rec, &item)
		res.Applied = append(res.Applied, a)
		batch[rec.Seq] = rec.Hash
		envs[rec.EnvelopeHash()] = rec.Seq
	}
	return res
}

// precheck verifies, in parallel, the record hash and (for non-redacted
// records) the envelope hash and strict signature of every record after
// last, and encodes each such record's canonical JSON. The genesis record
// is verified by VerifyGenesis; only its JSON is made here.
func (p *Processor) precheck(recs []*adp.Record, last int64) ([]error, [][]byte) {
	errs := make([]error, len(recs))
	raw := make([][]byte, len(recs))
	var idx []int
	for i, rec := range recs {
		if rec != nil && rec.Seq > last {
			idx = append(idx, i)
		}
	}
	parallel.For(len(idx), p.workers(), func(k int) {
		i := idx[k]
		raw[i], errs[i] = check(recs[i], true, nil)
	})
	return errs, raw
}

// workers is the number of goroutines of the parallel checks.
func (p *Processor) workers() int {
	if p.Workers > 0 {
		return p.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// check runs the state-independent checks of one record: its shape and
// hash, and (unless redacted) its envelope's hash and strict signature —
// for the genesis record only its JSON: VerifyGenesis verifies it. It
// returns the record's canonical JSON around the event bytes just hashed
// (nil unless withJSON), or the first error. Without JSON, the event bytes
// are written to *scratch, a buffer the caller reuses from record to
// record.
func check(rec *adp.Record, withJSON bool, scratch *[]byte) ([]byte, error) {
	var event []byte
	if rec.Seq > 1 {
		if err := rec.Validate(); err != nil {
			return nil, err
		}
		if rec.Envelope != nil {
			var err error
			if withJSON {
				event, err = rec.Envelope.VerifyCanonical()
			} else {
				event, err = rec.Envelope.VerifyAppend((*scratch)[:0])
				*scratch = event
			}
			if err != nil {
				return nil, prefix(err)
			}
		}
	}
	if !withJSON {
		return nil, nil
	}
	raw, _ := rec.AppendCanonical(make([]byte, 0, len(event)+512), event)
	return raw, nil
}

// linkError checks that rec directly follows the room's latest record: its
// room, seq and pre_hash (chain_broken otherwise).
func linkError(r *adp.Room, rec *adp.Record) error {
	switch {
	case rec.RoomID != r.ID:
		return &adp.Error{Code: adp.CodeChainBroken, Pointer: "/room_id", Message: fmt.Sprintf("record belongs to room %q, not %q", text.Truncate(rec.RoomID, 64), r.ID)}
	case rec.Seq != r.Last.Seq+1:
		return &adp.Error{Code: adp.CodeChainBroken, Pointer: "/seq", Message: fmt.Sprintf("record seq %d does not follow seq %d", rec.Seq, r.Last.Seq)}
	case rec.PreHash != r.Last.Hash:
		return &adp.Error{Code: adp.CodeChainBroken, Pointer: "/pre_hash", Message: fmt.Sprintf("pre_hash does not equal the hash of the record at seq %d", r.Last.Seq)}
	}
	return nil
}

// prefix points envelope errors into the record ("/envelope/…").
func prefix(err error) error {
	e := adp.AsError(err)
	if e == nil {
		return err
	}
	c := *e
	if c.Pointer == "" || c.Pointer[0] != '/' || len(c.Pointer) < 9 || c.Pointer[:9] != "/envelope" {
		c.Pointer = "/envelope" + c.Pointer
	}
	return &c
}

// failure describes a verification error.
func failure(seq int64, err error) *Failure {
	code := adp.ErrorCode(err)
	if code == "" {
		code = identity.ErrorCode(err)
	}
	if code == "" {
		code = adp.CodeInvalidRecord
	}
	var e *adp.Error
	msg := err.Error()
	if errors.As(err, &e) && e.Pointer != "" {
		msg = e.Message + " (at " + e.Pointer + ")"
	}
	return &Failure{Seq: seq, Code: code, Message: msg, Err: err}
}
