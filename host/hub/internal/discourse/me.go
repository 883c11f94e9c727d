package discourse

import (
	"context"
	"database/sql"
	"errors"
	"net/http"

	"apconnect/host/hub/internal/hubhttp"
	"apconnect/host/proto/adp"
)

// Membership states of a /v1/me/rooms item.
const (
	membershipActive  = "active"  // an active member
	membershipInvited = "invited" // named in policy.invites, not a member
	membershipPending = "pending" // holds a pending join request
	// A former member's state is its departure: "left", "removed" or
	// "banned"; an agent banned before ever joining is "banned" too; an
	// applicant whose latest request was rejected or expired has that
	// request's status.
)

// membershipFilters are the values of /v1/me/rooms?membership=. "left"
// is what SDK 0.12.6 sends for former members and means the same as
// "former": the agent left, was removed or was banned.
var membershipFilters = map[string]func(rel *relation) bool{
	"all":     func(*relation) bool { return true },
	"member":  func(r *relation) bool { return r.Membership == membershipActive },
	"creator": func(r *relation) bool { return r.IsCreator },
	"moderator": func(r *relation) bool {
		return r.Membership == membershipActive && r.Role == adp.RoleModerator
	},
	"pending": func(r *relation) bool {
		return r.JoinRequest != nil && r.JoinRequest.Status == string(adp.JoinPending)
	},
	"invited": func(r *relation) bool { return r.Membership == membershipInvited },
	"former":  isFormer,
	"left":    isFormer,
}

func isFormer(r *relation) bool {
	return r.Membership == string(adp.DepartureLeft) || r.Membership == string(adp.DepartureRemoved) || r.Membership == string(adp.DepartureBanned)
}

// relation is the authenticated agent's relation to a room, as
// /v1/me/rooms reports it next to the room resource.
type relation struct {
	// Room is the room resource (adp.Room.Resource), read under the
	// room's lock.
	Room   map[string]any
	ID     string
	Status adp.RoomStatus
	// IsCreator is true for the room's creator.
	IsCreator bool
	// Role is the agent's current role while it is an active member, or
	// its invited role while invited; "" otherwise.
	Role adp.Role
	// Membership is the agent's membership state (see the constants).
	Membership string
	// Perspective is the agent's declared perspective, when a member.
	Perspective string
	// JoinRequest is the agent's latest join request in the room, if any.
	JoinRequest *requestSummary
}

// item is the list item of the relation (D-05): the full room resource —
// what SDK 0.12.6 decodes each item as — plus "membership" and, when the
// agent has one, "role", which the SDK copies into its summary; and the
// hub's "is_creator", "perspective" and "join_request".
func (r *relation) item() map[string]any {
	m := r.Room
	m["membership"] = r.Membership
	if r.Role != "" {
		m["role"] = string(r.Role)
	}
	m["is_creator"] = r.IsCreator
	if r.Perspective != "" {
		m["perspective"] = r.Perspective
	}
	if r.JoinRequest != nil {
		m["join_request"] = r.JoinRequest
	}
	return m
}

// requestSummary is a join request as /v1/me/rooms shows it.
type requestSummary struct {
	ID        string `json:"id"`
	Status    string `json:"status"`
	Role      string `json:"role"`
	ExpiresAt int64  `json:"expires_at"`
}

// meBatch is how many related rooms /v1/me/rooms examines per query.
const meBatch = 200

// meRooms serves GET /v1/me/rooms (ADP 15; the "my_rooms" endpoint): the
// rooms related to the authenticated agent — created, member now or before,
// invited, or with a join request — newest first, filtered by status and
// membership (all, member, creator, moderator, pending, invited, former or
// left). Each item is the room resource with the agent's relation added.
func (s *Service) meRooms(w http.ResponseWriter, r *http.Request) {
	agent := hubhttp.AgentID(r.Context())
	q := r.URL.Query()
	if err := hubhttp.CheckQuery(q, "status", "membership", "limit", "cursor"); err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	limit, err := hubhttp.ParseLimit(q, s.limits.ListPageDefault, s.limits.ListPageMax)
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	status := q.Get("status")
	switch adp.RoomStatus(status) {
	case "", adp.RoomScheduled, adp.RoomActive, adp.RoomEnded, adp.RoomCancelled:
	default:
		hubhttp.WriteError(w, r, s.logger, invalidParam("status", "status must be scheduled, active, ended or cancelled"))
		return
	}
	membership := "all"
	if q.Has("membership") {
		membership = q.Get("membership")
	}
	keep, ok := membershipFilters[membership]
	if !ok {
		hubhttp.WriteError(w, r, s.logger, invalidParam("membership", "membership must be all, member, creator, moderator, pending, invited, former or left"))
		return
	}
	if membership == "left" {
		membership = "former" // one filter, one cursor scope
	}
	scope := "me|" + agent + "|" + status + "|" + membership
	before := "\x7f"
	if q.Has("cursor") {
		if err := hubhttp.DecodeCursor(q.Get("cursor"), scope, &before); err != nil {
			hubhttp.WriteError(w, r, s.logger, err)
			return
		}
	}
	now := s.now()
	var out []*relation
	more := false
	for !more {
		ids, err := relatedRooms(r.Context(), s.db.Reader(), agent, before, meBatch)
		if err != nil {
			hubhttp.WriteError(w, r, s.logger, err)
			return
		}
		for _, id := range ids {
			rel, err := s.relation(r.Context(), id, agent, now)
			if err != nil {
				hubhttp.WriteError(w, r, s.logger, err)
				return
			}
			if rel == nil || (status != "" && string(rel.Status) != status) || !keep(rel) {
				continue
			}
			if len(out) == limit {
				more = true
				break
			}
			out = append(out, rel)
		}
		if len(ids) < meBatch {
			break
		}
		before = ids[len(ids)-1]
	}
	next := ""
	if more {
		next = hubhttp.EncodeCursor(scope, out[len(out)-1].ID)
	}
	items := make([]map[string]any, len(out))
	for i, rel := range out {
		items[i] = rel.item()
	}
	hubhttp.WriteList(w, items, next)
}

// relatedRooms returns up to n room ids related to agent below before,
// greatest (newest Xid) first.
func relatedRooms(ctx context.Context, q hubhttp.Querier, agent, before string, n int) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT room_id FROM adp_room_agents WHERE agent_id = ? AND room_id < ?
		ORDER BY room_id DESC LIMIT ?`, agent, before, n)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// relation builds the agent's relation to a room, or nil when the agent is
// no longer related to it (an invitation withdrawn before it was used).
func (s *Service) relation(ctx context.Context, roomID, agent string, now int64) (*relation, error) {
	e, unlock, err := s.readRoom(ctx, roomID)
	if err != nil {
		return nil, err
	}
	room := e.room
	rel := &relation{
		Room: s.roomResource(room, now), ID: roomID, Status: room.StatusAt(now), IsCreator: room.IsCreator(agent),
	}
	m, isMember := room.Member(agent)
	invited, isInvited := room.Policy.Invites[agent]
	banned := room.IsBanned(agent)
	unlock()
	switch {
	case isMember && m.Active:
		rel.Role, rel.Membership, rel.Perspective = m.Role, membershipActive, m.Perspective
	case isMember:
		rel.Membership = string(m.Departure)
	case banned:
		rel.Membership = string(adp.DepartureBanned)
	case isInvited:
		rel.Role, rel.Membership = invited, membershipInvited
	}
	req, err := latestRequest(ctx, s.db.Reader(), roomID, agent, now)
	if err != nil {
		return nil, err
	}
	rel.JoinRequest = req
	if rel.Membership == "" && req != nil {
		rel.Membership = req.Status
		if req.Status == string(adp.JoinPending) {
			rel.Membership = membershipPending
		}
	}
	if rel.Membership == "" {
		return nil, nil
	}
	return rel, nil
}

// latestRequest returns the agent's latest join request in a room, or nil.
func latestRequest(ctx context.Context, q hubhttp.Querier, roomID, agent string, now int64) (*requestSummary, error) {
	var rs requestSummary
	err := q.QueryRowContext(ctx, `SELECT id, status, role, expires_at FROM adp_join_requests
		WHERE applicant = ? AND room_id = ? ORDER BY created_at DESC, id DESC LIMIT 1`, agent, roomID).
		Scan(&rs.ID, &rs.Status, &rs.Role, &rs.ExpiresAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if rs.Status == string(adp.JoinPending) && rs.ExpiresAt <= now {
		rs.Status = string(adp.JoinExpired)
	}
	return &rs, nil
}
