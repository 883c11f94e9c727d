package discourse

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"apconnect/host/hub/internal/hubhttp"
	"apconnect/host/identity"
	"apconnect/host/proto/adp"
	"apconnect/host/text"
)

// joinRequest is the join request resource (ADP 10; the kernel schema's
// joinRequest).
type joinRequest struct {
	ID            string          `json:"id"`
	Request       json.RawMessage `json:"request"`
	Status        string          `json:"status"`
	ExpiresAt     int64           `json:"expires_at"`
	ReviewedBy    *string         `json:"reviewed_by"`
	ReviewedAt    *int64          `json:"reviewed_at"`
	ReviewEventID *string         `json:"review_event_id"`

	roomID    string
	applicant string
	role      string
	createdAt int64
}

const joinRequestColumns = `id, room_id, applicant, role, status, expires_at, created_at, reviewed_by, reviewed_at, review_event_id, envelope`

func scanJoinRequest(sc interface{ Scan(...any) error }, now int64) (*joinRequest, error) {
	var j joinRequest
	var env []byte
	var by, evID sql.NullString
	var at sql.NullInt64
	if err := sc.Scan(&j.ID, &j.roomID, &j.applicant, &j.role, &j.Status, &j.ExpiresAt, &j.createdAt, &by, &at, &evID, &env); err != nil {
		return nil, err
	}
	j.Request = env
	if by.Valid {
		j.ReviewedBy = &by.String
	}
	if at.Valid {
		j.ReviewedAt = &at.Int64
	}
	if evID.Valid {
		j.ReviewEventID = &evID.String
	}
	if j.Status == string(adp.JoinPending) && j.ExpiresAt <= now {
		j.Status = string(adp.JoinExpired)
	}
	return &j, nil
}

// loadJoinRequest returns a join request of a room, or nil.
func loadJoinRequest(ctx context.Context, q hubhttp.Querier, roomID, id string, now int64) (*joinRequest, error) {
	j, err := scanJoinRequest(q.QueryRowContext(ctx, `SELECT `+joinRequestColumns+` FROM adp_join_requests WHERE id = ? AND room_id = ?`, id, roomID), now)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return j, err
}

// joinWriter accepts room.join.request at POST /v1/rooms/{id}/join-requests.
type joinWriter struct{ s *Service }

// Precheck rejects anything but a room.join.request for the path's room.
func (joinWriter) Precheck(r *http.Request, env *identity.Envelope) error {
	if err := checkProtocol(env); err != nil {
		return err
	}
	if env.Event.Type != adp.TypeJoinRequest {
		return wrongEndpoint(env.Event.Type, "POST /v1/rooms/{room_id} (room events) or POST /v1/rooms (room.create); this endpoint takes room.join.request")
	}
	return checkPathRoom(r, env)
}

// NonceFloor is 0 (see createWriter).
func (joinWriter) NonceFloor(context.Context, *sql.Tx, *identity.Envelope) (int64, error) {
	return 0, nil
}

// Accept applies section 10: the request rules (adp CheckJoinRequest), the
// signal quota, supersession of the applicant's pending request, the expiry
// by published policy (Limits.Rules.JoinRequestLifetime, never past
// end_time), and a room.join_request notice to subscribed reviewers.
func (h joinWriter) Accept(ctx context.Context, w *hubhttp.Write) (*hubhttp.Result, error) {
	s := h.s
	env := w.Envelope
	roomID := adp.RoomOf(&env.Event) // checkPathRoom has compared it with the path
	e, err := s.writeRoom(ctx, w, roomID)
	if err != nil {
		return nil, err
	}
	room := e.room
	if err := room.CheckJoinRequest(s.rules, env, w.AcceptedAt); err != nil {
		return nil, apiError(err)
	}
	if err := s.rateLimit(w, roomID, adp.TypeJoinRequest, room.Types); err != nil {
		return nil, err
	}
	now := w.AcceptedAt
	applicant := env.Event.Actor
	role, _ := env.Event.Payload.(map[string]any)["role"].(string)
	if _, err := w.Tx.ExecContext(ctx, `UPDATE adp_join_requests SET status = 'expired', expires_at = MIN(expires_at, ?)
		WHERE room_id = ? AND applicant = ? AND status = 'pending'`, now, roomID, applicant); err != nil {
		return nil, err
	}
	expires := room.JoinRequestExpiry(s.limits.Rules, now)
	if _, err := w.Tx.ExecContext(ctx, `INSERT INTO adp_join_requests (id, room_id, applicant, role, status, expires_at, created_at, envelope)
		VALUES (?, ?, ?, ?, 'pending', ?, ?, ?)`, env.Hash, roomID, applicant, role, expires, now, []byte(w.Raw)); err != nil {
		return nil, err
	}
	if err := s.relate(ctx, w.Tx, roomID, applicant); err != nil {
		return nil, err
	}
	j := &joinRequest{ID: env.Hash, Request: w.Raw, Status: string(adp.JoinPending), ExpiresAt: expires}
	body, err := json.Marshal(j)
	if err != nil {
		return nil, err
	}
	return &hubhttp.Result{Status: http.StatusCreated, Body: json.RawMessage(body), AfterCommit: func() {
		s.publishJoinRequest(e, map[string]any{
			"room_id": roomID, "request_id": env.Hash, "applicant": applicant, "role": role, "expires_at": expires,
		})
	}}, nil
}

// Replay answers an exact resubmission with the request's current resource.
func (h joinWriter) Replay(ctx context.Context, tx *sql.Tx, acc *hubhttp.Accepted) (*hubhttp.Result, error) {
	j, err := scanJoinRequest(tx.QueryRowContext(ctx, `SELECT `+joinRequestColumns+` FROM adp_join_requests WHERE id = ?`, acc.Hash), h.s.now())
	if err != nil {
		return nil, fmt.Errorf("discourse: accepted join request %s is not held: %w", acc.Hash, err)
	}
	return &hubhttp.Result{Status: http.StatusCreated, Body: j}, nil
}

// listJoinRequests serves GET /v1/rooms/{id}/join-requests: the creator and
// moderators only (ADP 10), oldest first, optionally filtered by status.
func (s *Service) listJoinRequests(w http.ResponseWriter, r *http.Request) {
	agent := hubhttp.AgentID(r.Context())
	q := r.URL.Query()
	if err := hubhttp.CheckQuery(q, "status", "limit", "cursor"); err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	limit, err := hubhttp.ParseLimit(q, s.limits.ListPageDefault, s.limits.ListPageMax)
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	status := q.Get("status")
	switch adp.JoinRequestStatus(status) {
	case "", adp.JoinPending, adp.JoinApproved, adp.JoinRejected, adp.JoinExpired:
	default:
		hubhttp.WriteError(w, r, s.logger, invalidParam("status", "status must be pending, approved, rejected or expired"))
		return
	}
	roomID := r.PathValue("room_id")
	e, unlock, err := s.readRoom(r.Context(), roomID)
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	visible, manager := e.room.CanReadRoom(agent), e.room.IsManager(agent)
	unlock()
	switch {
	case !visible:
		hubhttp.WriteError(w, r, s.logger, roomNotFound(roomID))
		return
	case !manager:
		hubhttp.WriteError(w, r, s.logger, hubhttp.Errorf(identity.CodePermissionDenied, "only the room creator and moderators may list join requests"))
		return
	}
	type position struct {
		At int64  `json:"a"`
		ID string `json:"i"`
	}
	var after position
	if q.Has("cursor") {
		if err := hubhttp.DecodeCursor(q.Get("cursor"), "join-requests|"+roomID+"|"+status, &after); err != nil {
			hubhttp.WriteError(w, r, s.logger, err)
			return
		}
	}
	now := s.now()
	where, args := `room_id = ? AND (created_at, id) > (?, ?)`, []any{roomID, after.At, after.ID}
	switch adp.JoinRequestStatus(status) {
	case adp.JoinPending:
		where += ` AND status = 'pending' AND expires_at > ?`
		args = append(args, now)
	case adp.JoinExpired:
		where += ` AND (status = 'expired' OR (status = 'pending' AND expires_at <= ?))`
		args = append(args, now)
	case adp.JoinApproved, adp.JoinRejected:
		where += ` AND status = ?`
		args = append(args, status)
	}
	rows, err := s.db.Reader().QueryContext(r.Context(), `SELECT `+joinRequestColumns+` FROM adp_join_requests WHERE `+
		where+` ORDER BY created_at, id LIMIT ?`, append(args, limit+1)...)
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	defer rows.Close()
	var out []*joinRequest
	for rows.Next() {
		j, err := scanJoinRequest(rows, now)
		if err != nil {
			hubhttp.WriteError(w, r, s.logger, err)
			return
		}
		out = append(out, j)
	}
	if err := rows.Err(); err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	next := ""
	if len(out) > limit {
		out = out[:limit]
		last := out[limit-1]
		next = hubhttp.EncodeCursor("join-requests|"+roomID+"|"+status, position{At: last.createdAt, ID: last.ID})
	}
	hubhttp.WriteList(w, out, next)
}

// getJoinRequest serves GET /v1/rooms/{id}/join-requests/{request_id}: its
// applicant, the room creator and moderators (ADP 10).
func (s *Service) getJoinRequest(w http.ResponseWriter, r *http.Request) {
	agent := hubhttp.AgentID(r.Context())
	if err := hubhttp.CheckQuery(r.URL.Query()); err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	roomID, id := r.PathValue("room_id"), r.PathValue("request_id")
	e, unlock, err := s.readRoom(r.Context(), roomID)
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	manager := e.room.IsManager(agent)
	unlock()
	j, err := loadJoinRequest(r.Context(), s.db.Reader(), roomID, id, s.now())
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	if j == nil || (!manager && j.applicant != agent) {
		// A request the caller may not read is reported as absent.
		hubhttp.WriteError(w, r, s.logger, hubhttp.Errorf(adp.CodeJoinRequestNotFound, "join request %s does not exist or is not visible", text.Truncate(id, 64)))
		return
	}
	hubhttp.WriteJSON(w, http.StatusOK, j)
}
