package discourse

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	"apconnect/host/hub/internal/hubhttp"
	"apconnect/host/proto/adp"
)

// readEventsAllowed applies ADP 15 to reads of accepted events, agent
// status and archives: a room the reader may not see at all is
// room_not_found; public rooms are readable by anyone; otherwise the reader
// must authenticate (invalid_token) and be the creator or an active member
// (membership_required).
func readEventsAllowed(room *adp.Room, agent, roomID, what string) error {
	if !room.CanReadRoom(agent) {
		return roomNotFound(roomID)
	}
	if room.CanReadEvents(agent) {
		return nil
	}
	if agent == "" {
		return authRequired(what)
	}
	return membershipRequired(what)
}

// getRoom serves GET /v1/rooms/{id}: the room resource of ADP 15 — state,
// contract, materialized type registry, latest record fields and head.
// Public and restricted rooms are readable by anyone; a private room only
// by its creator, active members and invited agents (who need the head to
// anchor their room.join, 9.2).
func (s *Service) getRoom(w http.ResponseWriter, r *http.Request) {
	if err := hubhttp.CheckQuery(r.URL.Query()); err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	roomID := r.PathValue("room_id")
	e, unlock, err := s.readRoom(r.Context(), roomID)
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	if !e.room.CanReadRoom(hubhttp.AgentID(r.Context())) {
		unlock()
		hubhttp.WriteError(w, r, s.logger, roomNotFound(roomID))
		return
	}
	res := s.roomResource(e.room, s.now())
	unlock()
	hubhttp.WriteJSON(w, http.StatusOK, res)
}

// roomResource is the room resource of ADP 15 (what GET /v1/rooms/{id},
// the public list and /v1/me/rooms items carry). The caller holds the
// room's lock. The signed room.create envelope, which SDK 0.12.6 accepts
// as an optional member, is left out: a room created under the older
// rules (a policy with observer_allowed, type definitions with version)
// has a genesis payload that the SDK's closed types refuse, and one such
// item would make a whole list unreadable to it.
func (s *Service) roomResource(room *adp.Room, now int64) map[string]any {
	return room.Resource(now, s.RoomURL(room.ID))
}

// events serves GET /v1/rooms/{id}/events (ADP 15): accepted records in
// ascending seq order after after_seq, limit 100 by default and at most
// EventsPageMax, continued with next_cursor.
func (s *Service) events(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := hubhttp.CheckQuery(q, "after_seq", "limit", "cursor"); err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	limit, err := hubhttp.ParseLimit(q, s.limits.EventsPageDefault, s.limits.EventsPageMax)
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	roomID := r.PathValue("room_id")
	after, err := afterSeq(q, roomID)
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	e, unlock, err := s.readRoom(r.Context(), roomID)
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	err = readEventsAllowed(e.room, hubhttp.AgentID(r.Context()), roomID, "reading events")
	unlock()
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	page, err := recordPage(r.Context(), s.db.Reader(), roomID, after, limit+1)
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	next := ""
	if len(page) > limit {
		page = page[:limit]
		next = hubhttp.EncodeCursor("events|"+roomID, after+int64(limit))
	}
	hubhttp.WriteList(w, page, next)
}

// afterSeq reads the position of an events page: the cursor when given,
// otherwise after_seq (a non-negative integer, 0 by default).
func afterSeq(q url.Values, roomID string) (int64, error) {
	if q.Has("cursor") {
		var n int64
		if err := hubhttp.DecodeCursor(q.Get("cursor"), "events|"+roomID, &n); err != nil {
			return 0, err
		}
		return n, nil
	}
	if !q.Has("after_seq") {
		return 0, nil
	}
	s := q.Get("after_seq")
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || s[0] == '+' || (len(s) > 1 && s[0] == '0') {
		return 0, invalidParam("after_seq", "after_seq must be a non-negative integer")
	}
	return n, nil
}

// recordPage returns up to limit stored records of a room with seq > after,
// in seq order. Records are contiguous, so page k ends at after+limit.
func recordPage(ctx context.Context, q hubhttp.Querier, roomID string, after int64, limit int) ([]json.RawMessage, error) {
	rows, err := q.QueryContext(ctx, `SELECT record FROM adp_records WHERE room_id = ? AND seq > ? ORDER BY seq LIMIT ?`, roomID, after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []json.RawMessage
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			return nil, err
		}
		out = append(out, raw)
	}
	return out, rows.Err()
}
