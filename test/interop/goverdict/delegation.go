package main

import (
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"apconnect/host/identity"
	"apconnect/host/proto/delegation"
)

// delegationKinds answer the Agent Delegation cases of
// test/interop/test_delegation_*.py through host/proto/delegation (and the
// controller registration challenge of host/identity). A verdict is "ok" or
// the stable code, a credential object, a verification verdict, or a bool.
var delegationKinds = map[string]func(json.RawMessage) (any, error){
	"delegation_principal":    delegationPrincipal,
	"delegation_resolution":   delegationResolution,
	"delegation_id":           delegationID,
	"delegation_audience":     delegationAudience,
	"delegation_envelope":     delegationEnvelope,
	"delegation_authority":    delegationAuthority,
	"delegation_acceptance":   delegationAcceptance,
	"delegation_materialize":  delegationMaterialize,
	"delegation_verify":       delegationVerify,
	"delegation_audit":        delegationAudit,
	"delegation_use":          delegationUse,
	"delegation_enumeration":  delegationEnumeration,
	"delegation_covers":       delegationCovers,
	"delegation_query":        delegationQuery,
	"controller_challenge":    controllerChallenge,
	"controller_challenge_ok": controllerChallengeVerify,
}

// dcode is "ok" for nil, else the error's stable code.
func dcode(err error) string {
	if err == nil {
		return "ok"
	}
	if c := delegation.ErrorCode(err); c != "" {
		return c
	}
	return "uncoded: " + err.Error()
}

// delegationInput is the union of the members the delegation cases use.
type delegationInput struct {
	Document    json.RawMessage `json:"document"`
	ResolvedURL string          `json:"resolved_url"`
	Envelope    json.RawMessage `json:"envelope"`
	Event       json.RawMessage `json:"event"`
	AcceptedAt  int64           `json:"accepted_at"`
	Previous    json.RawMessage `json:"previous"`
	Mode        string          `json:"mode"`
	Credential  json.RawMessage `json:"credential"`
	Records     json.RawMessage `json:"records"`
	Audience    string          `json:"audience"`
	Now         int64           `json:"now"`
	Actor       string          `json:"actor"`
	Controller  json.RawMessage `json:"controller"`
	Request     json.RawMessage `json:"request"`
	Enumerate   bool            `json:"allow_enumeration"`
	Value       string          `json:"value"`
	Seed        string          `json:"seed"`
	ID          string          `json:"id"`
	Signature   string          `json:"signature"`
}

func readInput(raw json.RawMessage) (*delegationInput, error) {
	var in delegationInput
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	return &in, nil
}

func principalOf(raw json.RawMessage) (*delegation.PrincipalDocument, error) {
	v, err := strict(raw)
	if err != nil {
		return nil, err
	}
	return delegation.PrincipalDocumentFromValue(v)
}

func envelopeOf(raw json.RawMessage) (*identity.Envelope, error) {
	v, err := strict(raw)
	if err != nil {
		return nil, err
	}
	return identity.EnvelopeFromValue(v, "")
}

// previousOf reads an optional credential (null or absent: none).
func previousOf(raw json.RawMessage) (*delegation.Credential, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	v, err := strict(raw)
	if err != nil {
		return nil, err
	}
	return delegation.CredentialFromValue(v, "")
}

func recordsOf(raw json.RawMessage) ([]delegation.Record, error) {
	v, err := strict(raw)
	if err != nil {
		return nil, err
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("bad input: records must be an array")
	}
	out := make([]delegation.Record, 0, len(arr))
	for i, e := range arr {
		r, err := delegation.RecordFromValue(e, fmt.Sprintf("/%d", i))
		if err != nil {
			return nil, err
		}
		out = append(out, *r)
	}
	return out, nil
}

func delegationPrincipal(raw json.RawMessage) (any, error) {
	in, err := readInput(raw)
	if err != nil {
		return nil, err
	}
	// The document's bytes, as a client reads them: a value outside
	// I-JSON is a refusal too.
	_, err = delegation.ParsePrincipalDocument(in.Document)
	return dcode(err), nil
}

func delegationResolution(raw json.RawMessage) (any, error) {
	in, err := readInput(raw)
	if err != nil {
		return nil, err
	}
	doc, err := principalOf(in.Document)
	if err != nil {
		return nil, fmt.Errorf("bad input: document: %w", err)
	}
	return map[string]any{
		"resolution": dcode(delegation.CheckPrincipalResolution(doc, in.ResolvedURL)),
		"alias":      doc.IsAlias(in.ResolvedURL),
	}, nil
}

func delegationID(raw json.RawMessage) (any, error) {
	in, err := readInput(raw)
	if err != nil {
		return nil, err
	}
	return dcode(delegation.ValidateID(in.Value)), nil
}

func delegationAudience(raw json.RawMessage) (any, error) {
	in, err := readInput(raw)
	if err != nil {
		return nil, err
	}
	return dcode(delegation.ValidateAudience(in.Value)), nil
}

func delegationEnvelope(raw json.RawMessage) (any, error) {
	in, err := readInput(raw)
	if err != nil {
		return nil, err
	}
	env, err := envelopeOf(in.Envelope)
	if err == nil {
		_, err = delegation.ValidateEnvelope(env)
	}
	return dcode(err), nil
}

func delegationAuthority(raw json.RawMessage) (any, error) {
	in, err := readInput(raw)
	if err != nil {
		return nil, err
	}
	doc, err := principalOf(in.Document)
	if err != nil {
		return dcode(err), nil
	}
	ev, err := strict(in.Event)
	if err != nil {
		return nil, err
	}
	event, err := identity.EventFromValue(ev, "/event")
	if err != nil {
		return dcode(err), nil
	}
	prev, err := previousOf(in.Previous)
	if err != nil {
		return dcode(err), nil
	}
	return dcode(delegation.CheckEventAuthority(event, doc, in.AcceptedAt, prev)), nil
}

func delegationAcceptance(raw json.RawMessage) (any, error) {
	in, err := readInput(raw)
	if err != nil {
		return nil, err
	}
	env, err := envelopeOf(in.Envelope)
	if err != nil {
		return dcode(err), nil
	}
	if _, err := delegation.ValidateEnvelope(env); err != nil {
		return dcode(err), nil
	}
	doc, err := principalOf(in.Document)
	if err != nil {
		return dcode(err), nil
	}
	prev, err := previousOf(in.Previous)
	if err != nil {
		return dcode(err), nil
	}
	switch in.Mode {
	case "live":
		return dcode(delegation.CheckAcceptance(env, doc, in.ResolvedURL, in.AcceptedAt, prev)), nil
	case "historical":
		rec := &delegation.Record{Envelope: env, AcceptedAt: in.AcceptedAt}
		return dcode(delegation.CheckHistorical(rec, doc, in.ResolvedURL, prev)), nil
	}
	return nil, fmt.Errorf("bad input: mode %q", in.Mode)
}

func delegationMaterialize(raw json.RawMessage) (any, error) {
	in, err := readInput(raw)
	if err != nil {
		return nil, err
	}
	env, err := envelopeOf(in.Envelope)
	if err != nil {
		return dcode(err), nil
	}
	prev, err := previousOf(in.Previous)
	if err != nil {
		return dcode(err), nil
	}
	cred, err := delegation.Materialize(env, delegation.StatusActive, in.AcceptedAt, prev)
	if err != nil {
		return dcode(err), nil
	}
	return cred.Value(), nil
}

// verifyInputs reads the credential, records and document of a verify or
// audit case; a value Go cannot read is reported as the code.
func verifyInputs(in *delegationInput) (*delegation.Credential, []delegation.Record, *delegation.PrincipalDocument, string) {
	cred, err := previousOf(in.Credential)
	if err != nil || cred == nil {
		return nil, nil, nil, dcode(err)
	}
	records, err := recordsOf(in.Records)
	if err != nil {
		return nil, nil, nil, dcode(err)
	}
	doc, err := principalOf(in.Document)
	if err != nil {
		return nil, nil, nil, dcode(err)
	}
	return cred, records, doc, ""
}

func delegationVerify(raw json.RawMessage) (any, error) {
	in, err := readInput(raw)
	if err != nil {
		return nil, err
	}
	cred, records, doc, failed := verifyInputs(in)
	if failed != "" {
		return failed, nil
	}
	v := delegation.VerifyCredential(cred, records, doc, in.ResolvedURL, in.Audience, in.Now)
	return map[string]any{"verified": v.Verified, "usable": v.Usable, "reasons": v.Reasons}, nil
}

func delegationAudit(raw json.RawMessage) (any, error) {
	in, err := readInput(raw)
	if err != nil {
		return nil, err
	}
	cred, records, doc, failed := verifyInputs(in)
	if failed != "" {
		return failed, nil
	}
	return dcode(delegation.AuditHistory(cred, records, doc, in.ResolvedURL)), nil
}

func delegationUse(raw json.RawMessage) (any, error) {
	in, err := readInput(raw)
	if err != nil {
		return nil, err
	}
	cred, err := previousOf(in.Credential)
	if err != nil || cred == nil {
		return dcode(err), nil
	}
	return dcode(delegation.ValidateUse(cred, in.Audience, in.Now)), nil
}

func delegationEnumeration(raw json.RawMessage) (any, error) {
	in, err := readInput(raw)
	if err != nil {
		return nil, err
	}
	doc, err := principalOf(in.Document)
	if err != nil {
		return dcode(err), nil
	}
	cred, err := previousOf(in.Credential)
	if err != nil || cred == nil {
		return dcode(err), nil
	}
	return dcode(delegation.CheckControllerEnumeration(doc, in.Actor, in.Now, cred)), nil
}

// delegationCovers reads one controller record inside a minimal document.
func delegationCovers(raw json.RawMessage) (any, error) {
	in, err := readInput(raw)
	if err != nil {
		return nil, err
	}
	doc, err := principalOf(in.Document)
	if err != nil {
		return nil, fmt.Errorf("bad input: document: %w", err)
	}
	cred, err := previousOf(in.Credential)
	if err != nil || cred == nil {
		return nil, fmt.Errorf("bad input: credential: %v", err)
	}
	c := doc.FindController(in.Actor, true)
	if c == nil {
		return nil, fmt.Errorf("bad input: no controller %s", in.Actor)
	}
	return delegation.ControllerCoversCredential(c, cred), nil
}

func delegationQuery(raw json.RawMessage) (any, error) {
	in, err := readInput(raw)
	if err != nil {
		return nil, err
	}
	v, err := strict(in.Request)
	if err != nil {
		return nil, err
	}
	q, err := delegation.QueryRequestFromValue(v)
	if err == nil {
		err = delegation.ValidateQueryRequest(q, in.Enumerate)
	}
	return dcode(err), nil
}

// controllerChallenge: the challenge's shape, and the signature the seed's
// key gives it (or the refusal's code).
func controllerChallenge(raw json.RawMessage) (any, error) {
	in, err := readInput(raw)
	if err != nil {
		return nil, err
	}
	seed, err := hex.DecodeString(in.Seed)
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("bad input: seed")
	}
	signer := identity.NewKeySigner(ed25519.NewKeyFromSeed(seed))
	sig, err := identity.SignControllerChallenge(signer, in.Value)
	out := map[string]any{"valid": identity.IsControllerChallenge(in.Value), "signature": sig}
	if err != nil {
		out["signature"] = dcode(err)
	}
	return out, nil
}

func controllerChallengeVerify(raw json.RawMessage) (any, error) {
	in, err := readInput(raw)
	if err != nil {
		return nil, err
	}
	return dcode(identity.VerifyControllerChallenge(in.ID, in.Value, in.Signature)), nil
}
