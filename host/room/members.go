package room

import (
	"sort"

	"apconnect/host/proto/adp"
)

// Member statuses of MemberView.
const (
	StatusActive  = "active"
	StatusLeft    = "left"
	StatusRemoved = "removed"
	StatusBanned  = "banned"
	StatusUnknown = "unknown"
)

// Member returns the view of one agent in a room: its membership entry,
// or, for an agent banned without ever being a member, a banned observer
// placeholder. ok is false when the room knows nothing of the agent.
func Member(r *adp.Room, agentID string) (MemberView, bool) {
	if m, ok := r.Members[agentID]; ok {
		return memberView(r, m), true
	}
	if seq, ok := r.Bans[agentID]; ok {
		left := seq
		return MemberView{AgentID: agentID, Role: string(adp.RoleObserver), Status: StatusBanned, LeftSeq: &left,
			Extra: map[string]any{}}, true
	}
	return MemberView{}, false
}

func memberView(r *adp.Room, m *adp.Member) MemberView {
	v := MemberView{AgentID: m.AgentID, Role: string(m.Role), IsCreator: r.IsCreator(m.AgentID), Extra: map[string]any{}}
	switch {
	case m.Active:
		v.Status = StatusActive
	case m.Departure == adp.DepartureLeft:
		v.Status = StatusLeft
	case m.Departure == adp.DepartureRemoved:
		v.Status = StatusRemoved
	case m.Departure == adp.DepartureBanned:
		v.Status = StatusBanned
	default:
		v.Status = StatusUnknown
	}
	// A ban outlives the membership it ended; a later approval lifts it.
	if !m.Active && r.IsBanned(m.AgentID) {
		v.Status = StatusBanned
	}
	if m.Perspective != "" {
		p := m.Perspective
		v.Perspective = &p
	}
	if m.JoinedSeq > 0 {
		j := m.JoinedSeq
		v.JoinedSeq = &j
	}
	if m.LeftSeq > 0 {
		l := m.LeftSeq
		v.LeftSeq = &l
	}
	if m.LastEventSeq > 0 {
		e := m.LastEventSeq
		v.LastEventSeq = &e
	}
	return v
}

// Members returns every member view of a room — current and past members
// and banned non-members — sorted by Agent ID.
func Members(r *adp.Room) []MemberView {
	out := make([]MemberView, 0, len(r.Members)+len(r.Bans))
	for _, m := range r.Members {
		out = append(out, memberView(r, m))
	}
	for id := range r.Bans {
		if _, ok := r.Members[id]; !ok {
			v, _ := Member(r, id)
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].AgentID < out[j].AgentID })
	return out
}

// SelfState returns the agent's membership state in a room ("" when it was
// never a member or banned), its role and whether it created the room.
func SelfState(r *adp.Room, self string) (state, role string, creator bool) {
	v, ok := Member(r, self)
	if !ok {
		return "", "", false
	}
	return v.Status, v.Role, v.IsCreator
}
