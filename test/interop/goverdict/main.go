// Command goverdict answers the interop suite's differential vectors with
// apconnect's Go packages: it reads a JSON array of cases
// ({"id","kind","input"}) on stdin and prints one verdict per case
// ({"id","verdict"}) on stdout, in the same order.
//
// It exists so test/interop/test_vectors.py can put the same inputs
// through the reference SDK (agent-protocols 0.12.6) and through
// host/identity, host/proto/adp and host/proto/profile, and compare the verdicts
// case by case. A verdict has the shape the Python side uses: true/false,
// "ok" or an error code, or a small object. An input this program cannot
// read is reported as {"error": "..."} for that case, never as a verdict.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"time"

	"apconnect/host/identity"
	"apconnect/host/proto/adp"
	"apconnect/host/proto/profile"
)

type testCase struct {
	ID    string          `json:"id"`
	Kind  string          `json:"kind"`
	Input json.RawMessage `json:"input"`
}

type answer struct {
	ID      string `json:"id"`
	Verdict any    `json:"verdict,omitempty"`
	Error   string `json:"error,omitempty"`
}

// kinds maps a case kind to the function that answers it.
var kinds = map[string]func(json.RawMessage) (any, error){
	"event_hash":      eventHash,
	"envelope":        envelope,
	"signature":       signature,
	"agent_id":        agentID,
	"strict_json":     strictJSON,
	"max_seen_nonce":  maxSeenNonce,
	"origin":          origin,
	"jwt":             jwt,
	"record_hash":     recordHash,
	"record":          record,
	"chain":           chain,
	"class":           class,
	"base_check":      baseCheck,
	"reader":          reader,
	"payload":         reader,
	"type_name":       typeName,
	"open_roles":      openRoles,
	"pattern":         pattern,
	"blank":           blank,
	"profile_payload": profilePayload,
	"pack_digest":     packDigest,
	"pack_digest_of":  packDigestOf,
	"declaration":     declaration,
}

func main() {
	for _, protocol := range []map[string]func(json.RawMessage) (any, error){mailKinds, knowledgeKinds, delegationKinds} {
		maps.Copy(kinds, protocol)
	}
	data, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "goverdict: read stdin:", err)
		os.Exit(2)
	}
	var cases []testCase
	if err := json.Unmarshal(data, &cases); err != nil {
		fmt.Fprintln(os.Stderr, "goverdict: stdin is not a JSON array of cases:", err)
		os.Exit(2)
	}
	out := make([]answer, 0, len(cases))
	for _, c := range cases {
		a := answer{ID: c.ID}
		if fn, ok := kinds[c.Kind]; !ok {
			a.Error = fmt.Sprintf("unknown case kind %q", c.Kind)
		} else if v, err := fn(c.Input); err != nil {
			a.Error = err.Error()
		} else {
			a.Verdict = v
		}
		out = append(out, a)
	}
	w := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "goverdict:", err)
		os.Exit(2)
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "goverdict:", err)
		os.Exit(2)
	}
}

// decode reads a case input into v.
func decode(raw json.RawMessage, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("bad input: %w", err)
	}
	return nil
}

// strict reads a JSON value the way apconnect reads signed data.
func strict(raw json.RawMessage) (any, error) {
	v, err := identity.ParseStrict(raw)
	if err != nil {
		return nil, fmt.Errorf("bad input: %w", err)
	}
	return v, nil
}

// code is "ok" for nil, else the error's stable code: an *adp.Error's or
// an *identity.Error's (every rules package returns one), and
// invalid_request for a strict-JSON failure no rule wrapped.
func code(err error) string {
	if err == nil {
		return "ok"
	}
	if c := adp.ErrorCode(err); c != "" {
		return c
	}
	var je *identity.JSONError
	if errors.As(err, &je) {
		return identity.CodeInvalidRequest
	}
	return "uncoded: " + err.Error()
}

func eventHash(raw json.RawMessage) (any, error) {
	var in struct {
		Event json.RawMessage `json:"event"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	v, err := strict(in.Event)
	if err != nil {
		return nil, err
	}
	ev, err := identity.EventFromValue(v, "")
	if err != nil {
		return code(err), nil
	}
	id, err := ev.ID()
	if err != nil {
		return code(err), nil
	}
	return map[string]string{"hash": id}, nil
}

// envelope is a submitted envelope: strict parse, closed shape, hash and
// signature. Codes other than the hash and signature ones are reported as
// invalid_event, as the SDK side does.
func envelope(raw json.RawMessage) (any, error) {
	var in struct {
		Text string `json:"text"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	env, err := identity.ParseEnvelope([]byte(in.Text))
	if err == nil {
		err = env.Verify()
	}
	if err == nil {
		err = closedShape(&env.Event)
	}
	switch c := code(err); c {
	case "ok", identity.CodeInvalidEventHash, identity.CodeInvalidSignature:
		return c, nil
	default:
		return identity.CodeInvalidEvent, nil
	}
}

// closedShape applies the closed event object of the event's protocol:
// identity keeps every top-level field, each protocol's rules refuse those
// it does not define (the SDK's validators do the same).
func closedShape(ev *identity.Event) error {
	switch ev.Protocol {
	case adp.Protocol:
		return adp.CheckEventFields(ev, "/event")
	case profile.Protocol:
		return profile.CheckEvent(ev)
	}
	return ev.CheckFields("/event")
}

func signature(raw json.RawMessage) (any, error) {
	var in struct {
		PublicKey string `json:"public_key"`
		Message   string `json:"message"`
		Signature string `json:"signature"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	pub, err1 := identity.DecodeBase64URL(in.PublicKey)
	msg, err2 := identity.DecodeBase64URL(in.Message)
	sig, err3 := identity.DecodeBase64URL(in.Signature)
	if err1 != nil || err2 != nil || err3 != nil {
		return false, nil
	}
	return identity.VerifyStrict(pub, msg, sig) == nil, nil
}

func agentID(raw json.RawMessage) (any, error) {
	var in struct {
		Value string `json:"value"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	return identity.ValidAgentID(in.Value), nil
}

func strictJSON(raw json.RawMessage) (any, error) {
	var in struct {
		Text string `json:"text"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	_, err := identity.ParseStrict([]byte(in.Text))
	return err == nil, nil
}

func maxSeenNonce(raw json.RawMessage) (any, error) {
	var in struct {
		Next   int64  `json:"next"`
		Now    int64  `json:"now"`
		Header string `json:"header"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	next, err := identity.ApplyMaxSeenNonce(in.Next, in.Now, in.Header)
	if err != nil {
		return "refused", nil
	}
	return map[string]int64{"next": next}, nil
}

func origin(raw json.RawMessage) (any, error) {
	var in struct {
		Value string `json:"value"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	return identity.ValidOrigin(in.Value), nil
}

// jwt verifies a request JWT as a host does, with zero clock skew: the
// SDK's request_jwts vectors are read that way (PROTOCOL-0.12.md §2.7).
func jwt(raw json.RawMessage) (any, error) {
	var in struct {
		Token    string `json:"token"`
		Audience string `json:"audience"`
		Now      int64  `json:"now"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	_, err := identity.VerifyToken(in.Token, in.Audience, time.Unix(in.Now, 0), identity.MaxTokenLifetime, 0)
	return code(err), nil
}

func recordHash(raw json.RawMessage) (any, error) {
	var in struct {
		RoomID       string  `json:"room_id"`
		Seq          int64   `json:"seq"`
		PreHash      *string `json:"pre_hash"`
		EnvelopeHash string  `json:"envelope_hash"`
		AcceptedAt   int64   `json:"accepted_at"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	pre := ""
	if in.PreHash != nil {
		pre = *in.PreHash
	}
	h, err := adp.RecordHash(in.RoomID, in.Seq, pre, in.EnvelopeHash, in.AcceptedAt)
	if err != nil {
		return code(err), nil
	}
	return map[string]string{"hash": h}, nil
}

// record is one server record's own checks: shape, hash, redaction rule.
func record(raw json.RawMessage) (any, error) {
	var in struct {
		Record json.RawMessage `json:"record"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	rec, err := adp.ParseRecord(in.Record)
	if err == nil {
		err = rec.Validate()
	}
	if err != nil {
		return adp.CodeInvalidRecord, nil
	}
	return "ok", nil
}

func parseRecords(raw []json.RawMessage) ([]*adp.Record, error) {
	recs := make([]*adp.Record, 0, len(raw))
	for i, r := range raw {
		rec, err := adp.ParseRecord(r)
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", i+1, err)
		}
		recs = append(recs, rec)
	}
	return recs, nil
}

func chain(raw json.RawMessage) (any, error) {
	var in struct {
		Records []json.RawMessage `json:"records"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	recs, err := parseRecords(in.Records)
	if err != nil {
		return "broken", nil
	}
	res, err := adp.VerifyChain("", adp.Link{}, recs)
	if err != nil {
		return "broken", nil
	}
	red := res.Redacted
	if red == nil {
		red = []int64{}
	}
	return map[string]any{"redacted": red}, nil
}

// genesisRoom materializes a room from its room.create record as a reader
// does (verifier rules: no host binding, registered packs only).
func genesisRoom(raw json.RawMessage) (*adp.Room, error) {
	rec, err := adp.ParseRecord(raw)
	if err != nil {
		return nil, fmt.Errorf("bad genesis record: %w", err)
	}
	room, err := adp.VerifyGenesis(nil, rec)
	if err != nil {
		return nil, fmt.Errorf("genesis record refused: %w", err)
	}
	return room, nil
}

func class(raw json.RawMessage) (any, error) {
	var in struct {
		Genesis json.RawMessage `json:"genesis"`
		Type    string          `json:"type"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	room, err := genesisRoom(in.Genesis)
	if err != nil {
		return nil, err
	}
	c, err := adp.ClassOf(in.Type, room.Types)
	if err != nil {
		return "none", nil
	}
	return map[string]any{"class": string(c), "head_checked": c.HeadChecked(), "advances": c.AdvancesHead()}, nil
}

// baseCheck is the SDK's freshness.base_checks vector: records up to
// last_seq exist, the one at base_seq hashes to "base-hash" when anchored,
// and the head is at head_seq.
func baseCheck(raw json.RawMessage) (any, error) {
	var in struct {
		Genesis  json.RawMessage `json:"genesis"`
		Type     string          `json:"type"`
		BaseSeq  int64           `json:"base_seq"`
		Anchored bool            `json:"anchored"`
		HeadSeq  int64           `json:"head_seq"`
		LastSeq  int64           `json:"last_seq"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	room, err := genesisRoom(in.Genesis)
	if err != nil {
		return nil, err
	}
	c, err := adp.ClassOf(in.Type, room.Types)
	if err != nil {
		return code(err), nil
	}
	anchor := func(seq int64) (string, bool) {
		if seq < 1 || seq > in.LastSeq {
			return "", false
		}
		if seq == in.BaseSeq && in.Anchored {
			return "base-hash", true
		}
		return fmt.Sprintf("hash-of-%d", seq), true
	}
	headHash, _ := anchor(in.HeadSeq)
	err = adp.CheckBase(c, adp.Link{Seq: in.HeadSeq, Hash: headHash}, in.LastSeq,
		adp.Link{Seq: in.BaseSeq, Hash: "base-hash"}, anchor, false)
	return code(err), nil
}

// reader verifies records as apconnect's reader does: VerifyGenesis, then
// VerifyRecord and Apply for each later record, with every earlier record
// held. Per record: {"head": seq} after it, "rejected", then "skipped".
// For "payload" cases the answer is the list of per-record codes instead.
func reader(raw json.RawMessage) (any, error) {
	var in struct {
		Records []json.RawMessage `json:"records"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	recs, err := parseRecords(in.Records)
	if err != nil {
		return nil, err
	}
	out := make([]any, 0, len(recs))
	codes := make([]string, 0, len(recs))
	hashes := map[int64]string{}
	var room *adp.Room
	failed := false
	for _, rec := range recs {
		if failed {
			out = append(out, "skipped")
			codes = append(codes, "skipped")
			continue
		}
		if room == nil {
			room, err = adp.VerifyGenesis(nil, rec)
		} else {
			lookup := adp.RecordHashFunc(func(seq int64) (string, bool) { h, ok := hashes[seq]; return h, ok })
			err = room.VerifyRecord(nil, rec, adp.CheckOptions{Records: lookup})
			if err == nil {
				err = room.Apply(nil, rec)
			}
		}
		codes = append(codes, code(err))
		if err != nil {
			failed = true
			out = append(out, "rejected")
			continue
		}
		hashes[rec.Seq] = rec.Hash
		out = append(out, map[string]int64{"head": room.Head.Seq})
	}
	if isPayloadCase(raw) {
		return codes, nil
	}
	return out, nil
}

// isPayloadCase tells payload cases (kind "payload") from reader ones: the
// Python side marks them with "payload": true.
func isPayloadCase(raw json.RawMessage) bool {
	var in struct {
		Payload bool `json:"payload"`
	}
	return json.Unmarshal(raw, &in) == nil && in.Payload
}

func typeName(raw json.RawMessage) (any, error) {
	var in struct {
		Name string `json:"name"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	return adp.ValidCustomTypeName(in.Name), nil
}

func openRoles(raw json.RawMessage) (any, error) {
	var in struct {
		Visibility adp.Visibility  `json:"visibility"`
		Policy     json.RawMessage `json:"policy"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	var policy any
	if len(in.Policy) > 0 && string(in.Policy) != "null" {
		v, err := strict(in.Policy)
		if err != nil {
			return nil, err
		}
		policy = v
	}
	// An absent policy has nothing to validate (room.create without one).
	if policy != nil {
		if err := adp.ValidatePolicy(policy, in.Visibility); err != nil {
			return map[string]any{"valid": false, "effective": nil}, nil
		}
	}
	var p adp.Policy
	if policy != nil {
		if err := json.Unmarshal(in.Policy, &p); err != nil {
			return map[string]any{"valid": false, "effective": nil}, nil
		}
	}
	roles := []string{}
	for _, r := range p.EffectiveOpenRoles(in.Visibility) {
		roles = append(roles, string(r))
	}
	return map[string]any{"valid": true, "effective": roles}, nil
}

func pattern(raw json.RawMessage) (any, error) {
	var in struct {
		Pattern string `json:"pattern"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	return adp.CheckPattern(in.Pattern) == nil, nil
}

func blank(raw json.RawMessage) (any, error) {
	var in struct {
		Value string `json:"value"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	return adp.IsBlank(in.Value), nil
}

var profileValidator = func() *profile.Validator {
	v, err := profile.NewValidator(profile.DefaultLimits())
	if err != nil {
		panic(err)
	}
	return v
}()

func profilePayload(raw json.RawMessage) (any, error) {
	var in struct {
		Actor   string          `json:"actor"`
		Payload json.RawMessage `json:"payload"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	payload, err := strict(in.Payload)
	if err != nil {
		return nil, err
	}
	return code(profileValidator.Validate(payload, in.Actor)), nil
}

func packDigest(raw json.RawMessage) (any, error) {
	var in struct {
		Data   string `json:"data"`
		Digest string `json:"digest"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	data, err := identity.DecodeBase64URL(in.Data)
	if err != nil {
		return nil, fmt.Errorf("bad input: %w", err)
	}
	return code(adp.VerifyPackDigest(data, in.Digest)), nil
}

func packDigestOf(raw json.RawMessage) (any, error) {
	var in struct {
		Data string `json:"data"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	data, err := identity.DecodeBase64URL(in.Data)
	if err != nil {
		return nil, fmt.Errorf("bad input: %w", err)
	}
	return map[string]string{"digest": adp.PackDigest(data)}, nil
}

// declaration is one type declaration as room.create and type.define
// check it: the kernel shape, then the type schema profile of an inline
// definition.
func declaration(raw json.RawMessage) (any, error) {
	var in struct {
		Declaration json.RawMessage `json:"declaration"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	v, err := strict(in.Declaration)
	if err != nil {
		return nil, err
	}
	d, err := adp.ParseDeclaration(v, "")
	if err == nil && d.Def != nil {
		err = adp.CheckTypeSchema(d.Def.Schema, adp.VerifierLimits(), nil)
	}
	return code(err), nil
}
