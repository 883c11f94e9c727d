package discourse

import (
	"context"
	"database/sql"
	"errors"
	"net/http"

	"apconnect/host/adp"
	"apconnect/host/hub/hubhttp"
)

// Membership states of a room summary.
const (
	membershipActive  = "active"  // an active member
	membershipInvited = "invited" // named in policy.invites, not a member
	membershipPending = "pending" // holds a pending join request
	// A former member's state is its departure: "left", "removed" or
	// "banned"; an agent banned before ever joining is "banned" too; an
	// applicant whose latest request was rejected or expired has that
	// request's status.
)

// membershipFilters are the values of /v1/me/rooms?membership=.
var membershipFilters = map[string]func(sum *roomSummary) bool{
	"all":     func(*roomSummary) bool { return true },
	"member":  func(s *roomSummary) bool { return s.Membership == membershipActive },
	"creator": func(s *roomSummary) bool { return s.IsCreator },
	"moderator": func(s *roomSummary) bool {
		return s.Membership == membershipActive && s.Role != nil && *s.Role == adp.RoleModerator
	},
	"pending": func(s *roomSummary) bool {
		return s.JoinRequest != nil && s.JoinRequest.Status == string(adp.JoinPending)
	},
	"invited": func(s *roomSummary) bool { return s.Membership == membershipInvited },
	"former": func(s *roomSummary) bool {
		return s.Membership == string(adp.DepartureLeft) || s.Membership == string(adp.DepartureRemoved) || s.Membership == string(adp.DepartureBanned)
	},
}

// roomSummary is one room of /v1/me/rooms: the room's identity and
// contract, its state and head, and the agent's relation to it.
type roomSummary struct {
	ID         string         `json:"id"`
	URL        string         `json:"url"`
	Host       string         `json:"host"`
	Topic      string         `json:"topic"`
	Status     adp.RoomStatus `json:"status"`
	Visibility adp.Visibility `json:"visibility"`
	StartTime  int64          `json:"start_time"`
	EndTime    int64          `json:"end_time"`
	Tags       []string       `json:"tags"`
	Language   string         `json:"language,omitempty"`
	Creator    string         `json:"creator"`
	Seq        int64          `json:"seq"`
	Head       adp.Link       `json:"head"`
	// IsCreator is true for the room's creator.
	IsCreator bool `json:"is_creator"`
	// Role is the agent's current role while it is an active member, or
	// its invited role while invited; null otherwise.
	Role *adp.Role `json:"role"`
	// Membership is the agent's membership state (see the constants).
	Membership string `json:"membership"`
	// Perspective is the agent's declared perspective, when a member.
	Perspective string `json:"perspective,omitempty"`
	// JoinRequest is the agent's latest join request in the room, if any.
	JoinRequest *requestSummary `json:"join_request,omitempty"`
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

// meRooms serves GET /v1/me/rooms (ADP 15): the rooms related to the
// authenticated agent — created, member now or before, invited, or with a
// join request — newest first, filtered by status and membership (all,
// member, creator, moderator, pending, invited, former).
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
		hubhttp.WriteError(w, r, s.logger, invalidParam("membership", "membership must be all, member, creator, moderator, pending, invited or former"))
		return
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
	var out []*roomSummary
	more := false
	for !more {
		ids, err := relatedRooms(r.Context(), s.db.Reader(), agent, before, meBatch)
		if err != nil {
			hubhttp.WriteError(w, r, s.logger, err)
			return
		}
		for _, id := range ids {
			sum, err := s.summary(r.Context(), id, agent, now)
			if err != nil {
				hubhttp.WriteError(w, r, s.logger, err)
				return
			}
			if sum == nil || (status != "" && string(sum.Status) != status) || !keep(sum) {
				continue
			}
			if len(out) == limit {
				more = true
				break
			}
			out = append(out, sum)
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
	hubhttp.WriteList(w, out, next)
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

// summary builds the agent's summary of a room, or nil when the agent is no
// longer related to it (an invitation withdrawn before it was used).
func (s *Service) summary(ctx context.Context, roomID, agent string, now int64) (*roomSummary, error) {
	e, unlock, err := s.readRoom(ctx, roomID)
	if err != nil {
		return nil, err
	}
	room := e.room
	sum := &roomSummary{
		ID: roomID, URL: s.RoomURL(roomID), Host: room.Host, Topic: room.Topic, Status: room.StatusAt(now),
		Visibility: room.Visibility, StartTime: room.StartTime, EndTime: room.EndTime, Tags: room.Tags,
		Language: room.Language, Creator: room.Creator, Seq: room.Last.Seq, Head: room.Head,
		IsCreator: room.IsCreator(agent),
	}
	if sum.Tags == nil {
		sum.Tags = []string{}
	}
	m, isMember := room.Member(agent)
	invited, isInvited := room.Policy.Invites[agent]
	banned := room.IsBanned(agent)
	unlock()
	switch {
	case isMember && m.Active:
		role := m.Role
		sum.Role, sum.Membership, sum.Perspective = &role, membershipActive, m.Perspective
	case isMember:
		sum.Membership = string(m.Departure)
	case banned:
		sum.Membership = string(adp.DepartureBanned)
	case isInvited:
		role := invited
		sum.Role, sum.Membership = &role, membershipInvited
	}
	req, err := latestRequest(ctx, s.db.Reader(), roomID, agent, now)
	if err != nil {
		return nil, err
	}
	sum.JoinRequest = req
	if sum.Membership == "" && req != nil {
		sum.Membership = req.Status
		if req.Status == string(adp.JoinPending) {
			sum.Membership = membershipPending
		}
	}
	if sum.Membership == "" {
		return nil, nil
	}
	return sum, nil
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
