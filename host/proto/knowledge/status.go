package knowledge

import (
	"slices"

	"apconnect/host/identity"
)

// Lifecycle statuses.
const (
	StatusActive    = "active"
	StatusRetracted = "retracted"
)

// StatusView is the lifecycle of one item at one service, as the
// connector's knowledge_status reports it.
type StatusView struct {
	// Retractions, Successors and Assessments are sorted, distinct ids.
	Retractions []string `json:"retractions"`
	Successors  []string `json:"successors"`
	Assessments []string `json:"assessments"`
	// Complete is whether every page of target={id} was read.
	Complete bool `json:"complete"`
	// Status is StatusActive or StatusRetracted, and "" when the scan is
	// incomplete: an unread page might hold a retraction.
	Status string `json:"status,omitempty"`
}

// Status reduces the events that link to an item (the records of a
// target={id} query) to its lifecycle. Only the item's author can withdraw
// or replace it, so a service that passed another author's retraction or
// successor, or one that does not raise the nonce, is ignored here: a
// retraction counts when it targets id, a successor when it supersedes id,
// each only from target's actor with a nonce above target's. Every
// assessment of id counts, whoever wrote it. complete says whether the scan
// read every page.
func Status(id string, target *identity.Event, links []*identity.Envelope, complete bool) StatusView {
	later := func(ev *identity.Event) bool { return ev.Actor == target.Actor && ev.Nonce > target.Nonce }
	v := StatusView{Retractions: []string{}, Successors: []string{}, Assessments: []string{}, Complete: complete}
	for _, env := range links {
		ev := &env.Event
		p := obj(ev.Payload)
		switch ev.Type {
		case TypeRetract:
			if str(p["target"]) == id && later(ev) {
				v.Retractions = append(v.Retractions, env.Hash)
			}
		case TypeAssess:
			if str(p["target"]) == id {
				v.Assessments = append(v.Assessments, env.Hash)
			}
		case TypePublish:
			if later(ev) && supersedes(p, id) {
				v.Successors = append(v.Successors, env.Hash)
			}
		}
	}
	for _, ids := range []*[]string{&v.Retractions, &v.Successors, &v.Assessments} {
		slices.Sort(*ids)
		*ids = slices.Compact(*ids)
	}
	if complete {
		v.Status = StatusActive
		if len(v.Retractions) > 0 {
			v.Status = StatusRetracted
		}
	}
	return v
}

// supersedes reports whether a publication payload supersedes id.
func supersedes(p map[string]any, id string) bool {
	for _, r := range arr(p["relations"]) {
		m := obj(r)
		if str(m["relation"]) == RelationSupersedes && str(m["target"]) == id {
			return true
		}
	}
	return false
}
