package profile

import (
	"errors"

	"apconnect/host/identity"
)

// Document builds the profile document of a profile.update (section 6): the
// payload's members — the payload is closed, so that is all of them, with
// explicit empty values kept as signed — plus updated_at = created_at and
// event_id = the envelope hash. It returns the document's canonical JSON
// (JCS). It checks nothing else: a service calls it on an update it has
// validated, a reader through Materialize.
func Document(env *identity.Envelope) ([]byte, error) {
	payload, ok := env.Event.Payload.(map[string]any)
	if !ok {
		return nil, errors.New("profile: payload is not an object")
	}
	doc := make(map[string]any, len(payload)+2)
	for k, v := range payload {
		if IsPayloadField(k) {
			doc[k] = v
		}
	}
	doc[FieldUpdatedAt] = env.Event.CreatedAt
	doc[FieldEventID] = env.Hash
	return identity.Canonicalize(doc)
}

// CheckUpdateOf checks that env is a profile.update of agentID: its
// protocol and type, its actor, and a payload object naming agentID as id.
// Every failure is invalid_event, pointing at the field. It verifies
// neither hash nor signature, and does not validate the payload further.
func CheckUpdateOf(env *identity.Envelope, agentID string) error {
	ev := &env.Event
	if err := CheckEvent(ev); err != nil {
		return err
	}
	if ev.Actor != agentID {
		return newError(CodeInvalidEvent, "/event/actor", "profile.update signed by %s, not by %s", ev.Actor, agentID)
	}
	payload, ok := ev.Payload.(map[string]any)
	if !ok {
		return newError(CodeInvalidEvent, "/event/payload", "profile.update payload is not an object")
	}
	if id, _ := payload["id"].(string); id != agentID {
		return newError(CodeInvalidEvent, "/event/payload/id", "profile.update payload.id does not name %s", agentID)
	}
	return nil
}

// Materialized is a reader's verified profile: the document of a verified
// profile.update and what a pin keeps of it.
type Materialized struct {
	AgentID string
	Nonce   int64  // the update's nonce
	EventID string // the update's event ID (envelope hash)
	// Document is the profile document's canonical JSON (see Document).
	Document []byte
}

// Pin returns the pin of the materialized profile.
func (m *Materialized) Pin() Pin { return Pin{Nonce: m.Nonce, EventID: m.EventID} }

// Materialize is what a reader does with an envelope a profile service
// served as agentID's (latest) update: it verifies the envelope's hash and
// strict signature (identity), checks it is a profile.update of agentID
// naming it as payload.id (CheckUpdateOf), and builds its document
// (Document). It does not validate the payload against the schema: the
// document is the signed data as it is.
func Materialize(agentID string, env *identity.Envelope) (*Materialized, error) {
	if err := env.Verify(); err != nil {
		return nil, err
	}
	if err := CheckUpdateOf(env, agentID); err != nil {
		return nil, err
	}
	doc, err := Document(env)
	if err != nil {
		return nil, err
	}
	return &Materialized{AgentID: agentID, Nonce: env.Event.Nonce, EventID: env.Hash, Document: doc}, nil
}
