package knowledge

import (
	"fmt"
	"slices"

	"apconnect/host/identity"
)

// Target is what the dependency rules need to know about a referenced,
// retained event: a service can keep these four columns beside each event
// instead of parsing envelopes to check a new one.
type Target struct {
	Type  string // knowledge.publish, knowledge.assess or knowledge.retract
	Actor string
	Nonce int64
	Kind  string // the contribution kind of a publication, "" otherwise
}

// TargetOf returns the Target facts of a validated event.
func TargetOf(ev *identity.Event) Target {
	t := Target{Type: ev.Type, Actor: ev.Actor, Nonce: ev.Nonce}
	if ev.Type == TypePublish {
		t.Kind = str(obj(ev.Payload)["kind"])
	}
	return t
}

// Lookup finds a retained event by id. ok is false when the service does
// not hold it (or, for a service, cannot use it as a dependency).
type Lookup func(id string) (t Target, ok bool)

// Dependencies returns the sorted, distinct ids a validated event depends
// on: a publication's relation targets, or the target of an assessment or
// retraction.
func Dependencies(ev *identity.Event) []string {
	p := obj(ev.Payload)
	if ev.Type != TypePublish {
		return []string{str(p["target"])}
	}
	var out []string
	for _, r := range arr(p["relations"]) {
		out = append(out, str(obj(r)["target"]))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// assessmentRelations may point at an assessment as well as a publication.
var assessmentRelations = []string{RelationDerivedFrom, RelationSupports, RelationContradicts}

// CheckDependencies applies the SDK's target rules to a validated event.
// Every dependency must resolve, or the error is missing_dependency with
// data.missing, the sorted missing ids. Then each link, in payload order,
// must point at a publication (an assessment is also allowed for a
// retraction and for derived_from, supports and contradicts); addresses
// needs a question and tests a hypothesis; supersedes and a retraction need
// the same actor and a smaller target nonce. A violation is invalid_target.
func CheckDependencies(ev *identity.Event, lookup Lookup) error {
	deps := Dependencies(ev)
	targets := make(map[string]Target, len(deps))
	var missing []any
	for _, id := range deps {
		t, ok := lookup(id)
		if !ok {
			missing = append(missing, id)
			continue
		}
		targets[id] = t
	}
	if len(missing) > 0 {
		e := errorf(CodeMissingDependency, "", "%d unresolved dependenc%s", len(missing), plural(len(missing), "y", "ies"))
		e.Data = map[string]any{"missing": missing}
		return e
	}
	for _, l := range links(ev) {
		t := targets[l.target]
		allowed := t.Type == TypePublish ||
			t.Type == TypeAssess && (l.relation == TypeRetract || slices.Contains(assessmentRelations, l.relation))
		if !allowed {
			return errorf(CodeInvalidTarget, l.pointer, "%s cannot target a %s event", l.relation, t.Type)
		}
		if l.relation == RelationAddresses && t.Kind != KindQuestion {
			return errorf(CodeInvalidTarget, l.pointer, "addresses must target a question, not a %s", t.Kind)
		}
		if l.relation == RelationTests && t.Kind != KindHypothesis {
			return errorf(CodeInvalidTarget, l.pointer, "tests must target a hypothesis, not a %s", t.Kind)
		}
		if (l.relation == RelationSupersedes || l.relation == TypeRetract) && (t.Actor != ev.Actor || t.Nonce >= ev.Nonce) {
			return errorf(CodeInvalidTarget, l.pointer, "%s must target an event of the same actor with a smaller nonce", l.relation)
		}
	}
	return nil
}

// link is one dependency edge: a relation of a publication, or the event
// type itself for an assessment or retraction.
type link struct {
	relation, target, pointer string
}

func links(ev *identity.Event) []link {
	p := obj(ev.Payload)
	if ev.Type != TypePublish {
		return []link{{relation: ev.Type, target: str(p["target"]), pointer: "/event/payload/target"}}
	}
	rels := arr(p["relations"])
	out := make([]link, len(rels))
	for i, r := range rels {
		m := obj(r)
		out[i] = link{relation: str(m["relation"]), target: str(m["target"]), pointer: fmt.Sprintf("/event/payload/relations/%d/target", i)}
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
