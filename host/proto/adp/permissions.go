package adp

import "slices"

// IsCreator reports whether agentID created the room. The creator holds
// creator permission whatever its role (9.1, 13).
func (r *Room) IsCreator(agentID string) bool { return agentID == r.Creator }

// IsActiveMember reports whether agentID is an active member.
func (r *Room) IsActiveMember(agentID string) bool {
	m, ok := r.Members[agentID]
	return ok && m.Active
}

// IsManager reports whether agentID may manage the room — update the
// contract, define types, review join requests, change roles, remove
// members, close or cancel: the creator, or an active moderator.
func (r *Room) IsManager(agentID string) bool {
	if r.IsCreator(agentID) {
		return true
	}
	m, ok := r.Members[agentID]
	return ok && m.Active && m.Role == RoleModerator
}

// MaySend reports whether an active member's role lets it send an event type
// (13): built-ins by the 12.2 table, custom types by their roles or kind
// default. The creator passes every role check; non-members pass none. It
// does not look at room state, type status or payloads; Check does.
func (r *Room) MaySend(agentID, typ string) bool {
	if !r.IsActiveMember(agentID) {
		return false
	}
	if r.IsCreator(agentID) {
		return true
	}
	role := r.Members[agentID].Role
	switch typ {
	case TypeMessageCreate:
		return role.Speaking()
	case TypeRoomLeave:
		return true
	case TypeRoomUpdate, TypeRoomClose, TypeRoomCancel, TypeTypeDefine, TypeJoinReview, TypeRoleUpdate, TypeMemberRemove:
		return role == RoleModerator
	case TypeRoomCreate, TypeRoomJoin, TypeJoinRequest:
		return false
	}
	def, ok := r.Types.Lookup(typ)
	return ok && slices.Contains(def.SenderRoles(), role)
}

// CanJoinDirectly reports whether agentID meets a direct-join condition for
// role (9.2): the policy invites the agent with exactly that role, or role is
// an effective open role of the room (in any visibility). It does not
// consider bans, quotas or membership; Check does.
func (r *Room) CanJoinDirectly(agentID string, role Role) bool {
	return r.canJoinDirectly(current, agentID, role)
}

// canJoinDirectly is CanJoinDirectly under dialect d: the historical dialect
// also admits the open roles of the 0f87fee drafts (Policy.legacyOpenRoles).
func (r *Room) canJoinDirectly(d dialect, agentID string, role Role) bool {
	if invited, ok := r.Policy.Invites[agentID]; ok && invited == role {
		return true
	}
	if slices.Contains(r.Policy.EffectiveOpenRoles(r.Visibility), role) {
		return true
	}
	return d == historical && slices.Contains(r.Policy.legacyOpenRoles(r.Visibility), role)
}

// CanReadRoom reports whether agentID ("" for an anonymous reader) may read
// the room resource under section 15: anyone for public and restricted
// rooms; for private rooms the creator, active members and invited agents.
func (r *Room) CanReadRoom(agentID string) bool {
	if r.Visibility != VisibilityPrivate {
		return true
	}
	if agentID == "" {
		return false
	}
	_, invited := r.Policy.Invites[agentID]
	return r.IsCreator(agentID) || r.IsActiveMember(agentID) || invited
}

// CanReadEvents reports whether agentID may read accepted events, agent
// status and the archive under section 15: anyone for public rooms; the
// creator and active members otherwise.
func (r *Room) CanReadEvents(agentID string) bool {
	if r.Visibility == VisibilityPublic {
		return true
	}
	return agentID != "" && (r.IsCreator(agentID) || r.IsActiveMember(agentID))
}

// SpeakerCount returns the number of active members with a speaking role,
// the creator included when it holds one.
func (r *Room) SpeakerCount() int {
	n := 0
	for _, m := range r.Members {
		if m.Active && m.Role.Speaking() {
			n++
		}
	}
	return n
}

// ObserverCount returns the number of active observers.
func (r *Room) ObserverCount() int {
	n := 0
	for _, m := range r.Members {
		if m.Active && m.Role == RoleObserver {
			n++
		}
	}
	return n
}

// MaxSpeakers returns the effective speaker limit: the smaller of
// policy.max_speakers and the host limit, 0 when neither applies.
func (r *Room) MaxSpeakers(l Limits) int64 {
	var n int64
	if r.Policy.MaxSpeakers != nil {
		n = *r.Policy.MaxSpeakers
	}
	if l.MaxSpeakers > 0 && (n == 0 || int64(l.MaxSpeakers) < n) {
		n = int64(l.MaxSpeakers)
	}
	return n
}

// checkRoleGrant applies the quota rules to granting role to agentID (a
// join, an approval or a role update): a new speaking member must fit
// max_speakers (max_speakers_exceeded), and, when countObservers, a new
// observer must fit the host's observer quota (rate_limited).
func (r *Room) checkRoleGrant(agentID string, role Role, l Limits, countObservers bool, at string) error {
	prev := Role("")
	if m, ok := r.Members[agentID]; ok && m.Active {
		prev = m.Role
	}
	if role.Speaking() && !prev.Speaking() {
		if limit := r.MaxSpeakers(l); limit > 0 && int64(r.SpeakerCount())+1 > limit {
			return newError(CodeMaxSpeakersExceeded, at, "the room allows at most %d members with a speaking role", limit)
		}
	}
	if countObservers && role == RoleObserver && prev != RoleObserver && l.MaxObservers > 0 && r.ObserverCount()+1 > l.MaxObservers {
		return newError(CodeRateLimited, at, "the room allows at most %d observers", l.MaxObservers)
	}
	return nil
}
