package adp

import "fmt"

// A replayed envelope.
//
// A host that copies one accepted, signed envelope into a second record
// builds a history every other reader check passes: the record hash and
// chain link are the host's own, the envelope's hash and signature are the
// actor's and still verify, and a message.create does not move the room head
// (0.12.6), so the copy anchors where the original did. Readers would then
// see a member say the same thing twice, count a vote or claim twice and
// raise a mention twice. No conformant host can produce such a history:
// within the live window its nonce cache refuses a second copy (and its
// accepted-envelope table answers an exact resubmission with the original
// record), and after the window the envelope's created_at is refused. A
// reader therefore refuses any history in which one event hash appears in
// two records, without ever failing a room a conformant host wrote. A lower
// nonce alone is no such proof (nonce caches expire), so it is not refused.
//
// The SDK 0.12.6 reader does not check this (docs/INTEROP.md).

// EnvelopeLookup finds the record of a room that carries an envelope. ok is
// false when no record the caller verified carries it.
type EnvelopeLookup interface {
	EnvelopeSeq(eventHash string) (seq int64, ok bool)
}

// EnvelopeSeqFunc adapts a function to EnvelopeLookup.
type EnvelopeSeqFunc func(eventHash string) (int64, bool)

// EnvelopeSeq calls f.
func (f EnvelopeSeqFunc) EnvelopeSeq(eventHash string) (int64, bool) { return f(eventHash) }

// CheckReplayed returns replayed_envelope when the envelope rec carries (its
// event hash; a redacted record keeps it) is already carried by an earlier
// record of the room according to look, naming both seqs. An entry at rec's
// own seq or after it is not an earlier record and is ignored. nil look
// checks nothing.
func CheckReplayed(rec *Record, look EnvelopeLookup) error {
	if look == nil || rec == nil {
		return nil
	}
	id := rec.EnvelopeHash()
	if id == "" {
		return nil
	}
	first, ok := look.EnvelopeSeq(id)
	if !ok || first <= 0 || first >= rec.Seq {
		return nil
	}
	return &Error{Code: CodeReplayedEnvelope, Pointer: "/envelope/hash",
		Message: fmt.Sprintf("records seq %d and seq %d carry the same signed envelope %s: the host replayed it (a conformant host records an envelope once)", first, rec.Seq, id),
		Data:    map[string]any{"seq": rec.Seq, "first_seq": first, "event_id": id}}
}
