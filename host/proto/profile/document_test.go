package profile

import (
	"testing"

	"apconnect/host/identity"
)

func TestDocumentKeepsPayloadAsSigned(t *testing.T) {
	s := signer(0)
	env := sign(t, s, identity.Event{
		Protocol: Protocol, Type: TypeUpdate, Actor: s.AgentID(), CreatedAt: 5, Nonce: 1,
		Payload: parse(t, `{"id":"`+s.AgentID()+`","name":"n","links":[],"extra":{"a":{"b":[1,2]}}}`),
	})
	doc, err := Document(env)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"event_id":"` + env.Hash + `","extra":{"a":{"b":[1,2]}},"id":"` + s.AgentID() + `","links":[],"name":"n","updated_at":5}`
	if string(doc) != want {
		t.Fatalf("document\n got %s\nwant %s", doc, want)
	}
	m, err := Materialize(s.AgentID(), env)
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Document) != want || m.Nonce != 1 || m.EventID != env.Hash || m.AgentID != s.AgentID() || m.Pin() != (Pin{1, env.Hash}) {
		t.Fatalf("materialized %+v", m)
	}
}

// Materialize refuses what is not agentID's verified profile.update, each
// with its code and pointer; CheckUpdateOf gives the same verdicts without
// verifying.
func TestMaterializeRefuses(t *testing.T) {
	s, other := signer(1), signer(2)
	ok := func(ev *identity.Event) {}
	for _, c := range []struct {
		name     string
		edit     func(*identity.Event)
		tamper   bool // change the payload after signing
		agent    string
		code     string
		pointer  string
		verifies bool // CheckUpdateOf (no verification) passes
	}{
		{name: "the update", edit: ok, agent: s.AgentID()},
		{name: "another protocol", edit: func(e *identity.Event) { e.Protocol = "agent-other/1.0" }, agent: s.AgentID(), code: CodeInvalidEvent, pointer: "/event/protocol"},
		{name: "another type", edit: func(e *identity.Event) { e.Type = "profile.delete" }, agent: s.AgentID(), code: CodeInvalidEvent, pointer: "/event/type"},
		{name: "another agent's update", edit: ok, agent: other.AgentID(), code: CodeInvalidEvent, pointer: "/event/actor"},
		{name: "payload naming another agent", edit: func(e *identity.Event) {
			e.Payload = map[string]any{"id": other.AgentID(), "name": "n"}
		}, agent: s.AgentID(), code: CodeInvalidEvent, pointer: "/event/payload/id"},
		{name: "payload without id", edit: func(e *identity.Event) { e.Payload = map[string]any{"name": "n"} }, agent: s.AgentID(), code: CodeInvalidEvent, pointer: "/event/payload/id"},
		{name: "changed after signing", edit: ok, tamper: true, agent: s.AgentID(), code: identity.CodeInvalidEventHash, pointer: "/hash", verifies: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ev := identity.Event{Protocol: Protocol, Type: TypeUpdate, Actor: s.AgentID(), CreatedAt: 7, Nonce: 3,
				Payload: map[string]any{"id": s.AgentID(), "name": "n"}}
			c.edit(&ev)
			env := sign(t, s, ev)
			if c.tamper {
				env.Event.Payload = map[string]any{"id": s.AgentID(), "name": "changed"}
			}
			_, err := Materialize(c.agent, env)
			check := CheckUpdateOf(env, c.agent)
			if c.code == "" {
				if err != nil || check != nil {
					t.Fatalf("refused: %v, %v", err, check)
				}
				return
			}
			if e := asError(t, err); e.Code != c.code || e.Pointer != c.pointer {
				t.Fatalf("Materialize: %+v, want %s at %q", e, c.code, c.pointer)
			}
			if c.verifies {
				if check != nil {
					t.Fatalf("CheckUpdateOf: %v", check)
				}
			} else if e := asError(t, check); e.Code != c.code || e.Pointer != c.pointer {
				t.Fatalf("CheckUpdateOf: %+v", e)
			}
		})
	}
}
