package discourse

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"apconnect/host/hub/internal/hubhttp"
	"apconnect/host/identity"
	"apconnect/host/proto/adp"
	"apconnect/host/text"
)

// checkProtocol is the precheck every ADP write endpoint shares.
func checkProtocol(env *identity.Envelope) error {
	if env.Event.Protocol != Protocol {
		return hubhttp.Errorf(identity.CodeInvalidEvent, "event.protocol must be %q, got %q", Protocol, text.Truncate(env.Event.Protocol, 80)).
			WithData("pointer", "/event/protocol")
	}
	return nil
}

func wrongEndpoint(typ, where string) error {
	return hubhttp.Errorf(identity.CodeInvalidEvent, "%s envelopes are submitted to %s", text.Truncate(typ, 80), where).
		WithData("pointer", "/event/type")
}

// checkPathRoom enforces ADP 15 and 21: the event's room_id equals the path's.
func checkPathRoom(r *http.Request, env *identity.Envelope) error {
	path := r.PathValue("room_id")
	if adp.RoomOf(&env.Event) != path {
		return hubhttp.Errorf(identity.CodeInvalidRequest, "event room_id does not equal the room id of the request path").
			WithData("pointer", "/event/room_id")
	}
	return nil
}

// rateLimit counts a write against its per-agent, per-room quota (ADP 20):
// the quota class of its type (message, signal, control), or the type's own
// rate_hint when it has one.
func (s *Service) rateLimit(w *hubhttp.Write, scope, typ string, reg adp.Registry) error {
	n, err := adp.RateLimit(s.limits.Rules, typ, reg)
	if err != nil {
		return apiError(err)
	}
	if n <= 0 {
		return nil
	}
	key := Protocol + "|" + scope + "|"
	if def, ok := reg.Lookup(typ); ok && def.RateHint > 0 {
		key += "type:" + typ
	} else {
		k, _ := adp.QuotaClass(typ, reg)
		key += "class:" + string(k)
	}
	return w.RateLimit(key+"|"+w.Envelope.Event.Actor, hubhttp.Rate{Limit: n, Per: time.Minute})
}

// --- POST /v1/rooms: room.create ---

// createWriter accepts room.create (ADP 8).
type createWriter struct{ s *Service }

// Precheck rejects envelopes that are not room.create and prefetches the
// external packs the room imports (outside the write transaction).
func (h createWriter) Precheck(r *http.Request, env *identity.Envelope) error {
	if err := checkProtocol(env); err != nil {
		return err
	}
	if env.Event.Type != adp.TypeRoomCreate {
		return wrongEndpoint(env.Event.Type, "POST /v1/rooms/{room_id} (room events) or /v1/rooms/{room_id}/join-requests; POST /v1/rooms takes room.create")
	}
	h.s.packs.prefetch(r.Context(), env)
	return nil
}

// NonceFloor is 0: ADP needs no durable nonce comparison beyond the cache.
func (createWriter) NonceFloor(context.Context, *sql.Tx, *identity.Envelope) (int64, error) {
	return 0, nil
}

// Accept applies the creation rules, assigns the room id and stores the
// room, its genesis record and the section 8 response.
func (h createWriter) Accept(ctx context.Context, w *hubhttp.Write) (*hubhttp.Result, error) {
	s := h.s
	env := w.Envelope
	if err := adp.CheckCreate(s.rules, env); err != nil {
		return nil, apiError(err)
	}
	if err := s.rateLimit(w, "create", adp.TypeRoomCreate, nil); err != nil {
		return nil, err
	}
	id := newRoomID()
	rec, err := adp.NewRecord(id, adp.Link{}, w.AcceptedAt, env)
	if err != nil {
		return nil, err
	}
	room, err := adp.NewRoom(s.rules, rec)
	if err != nil {
		return nil, apiError(err)
	}
	raw := recordJSON(rec, w.Raw)
	resp, err := json.Marshal(map[string]any{
		"id": id, "status": room.StatusAt(w.AcceptedAt), "url": s.RoomURL(id),
		"seq": rec.Seq, "pre_hash": nil, "hash": rec.Hash, "accepted_at": rec.AcceptedAt,
	})
	if err != nil {
		return nil, err
	}
	snap, err := json.Marshal(room)
	if err != nil {
		return nil, err
	}
	topic, agenda, tags, lang, start, end, closed := contractColumns(room)
	if _, err := w.Tx.ExecContext(ctx, `INSERT INTO adp_rooms (id, creator, visibility, topic, agenda, tags, language,
		start_time, end_time, closed, created_at, last_seq, last_accepted_at, create_response, snapshot, snapshot_seq)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		id, room.Creator, string(room.Visibility), topic, agenda, tags, lang, start, end, closed,
		rec.AcceptedAt, rec.Seq, rec.AcceptedAt, resp, snap, rec.Seq); err != nil {
		return nil, err
	}
	if err := s.insertRecord(ctx, w.Tx, rec, raw); err != nil {
		return nil, err
	}
	if err := s.relate(ctx, w.Tx, id, append([]string{room.Creator}, invitees(room)...)...); err != nil {
		return nil, err
	}
	if err := s.persistPacks(ctx, w.Tx, room, rec.Seq, rec.AcceptedAt); err != nil {
		return nil, apiError(err)
	}
	entry := &roomEntry{id: id, room: room, snapshotSeq: rec.Seq}
	return &hubhttp.Result{
		Status: http.StatusCreated, Body: json.RawMessage(resp),
		Header:      http.Header{"Location": {s.RoomURL(id)}},
		AfterCommit: func() { s.put(entry) },
	}, nil
}

// Replay answers an exact resubmission of a room.create with the original
// response (ADP 8).
func (h createWriter) Replay(ctx context.Context, tx *sql.Tx, acc *hubhttp.Accepted) (*hubhttp.Result, error) {
	var id string
	var resp []byte
	err := tx.QueryRowContext(ctx, `SELECT r.id, r.create_response FROM adp_records c JOIN adp_rooms r ON r.id = c.room_id
		WHERE c.event_hash = ? AND c.seq = 1`, acc.Hash).Scan(&id, &resp)
	if err != nil {
		return nil, fmt.Errorf("discourse: accepted room.create %s has no room: %w", acc.Hash, err)
	}
	return &hubhttp.Result{Status: http.StatusCreated, Body: json.RawMessage(resp),
		Header: http.Header{"Location": {h.s.RoomURL(id)}}}, nil
}

func invitees(r *adp.Room) []string {
	out := make([]string, 0, len(r.Policy.Invites))
	for id := range r.Policy.Invites {
		out = append(out, id)
	}
	return out
}

// --- POST /v1/rooms/{room_id}: every other room event ---

// eventWriter accepts every room event except room.create and
// room.join.request.
type eventWriter struct{ s *Service }

// Precheck rejects envelopes this endpoint can never accept: another
// protocol, room.create or room.join.request, or another room than the
// path's. It prefetches a type.define's external pack. (A stale head is
// not rejected here: Agent Identity 6.1 answers the window and nonce checks
// first, and a hub that reordered them would hide nonce bugs.)
func (h eventWriter) Precheck(r *http.Request, env *identity.Envelope) error {
	if err := checkProtocol(env); err != nil {
		return err
	}
	switch env.Event.Type {
	case adp.TypeRoomCreate:
		return wrongEndpoint(env.Event.Type, "POST /v1/rooms")
	case adp.TypeJoinRequest:
		return wrongEndpoint(env.Event.Type, "POST /v1/rooms/{room_id}/join-requests")
	}
	if err := checkPathRoom(r, env); err != nil {
		return err
	}
	if env.Event.Type == adp.TypeTypeDefine {
		h.s.packs.prefetch(r.Context(), env)
	}
	return nil
}

// NonceFloor is 0 (see createWriter).
func (eventWriter) NonceFloor(context.Context, *sql.Tx, *identity.Envelope) (int64, error) {
	return 0, nil
}

// Accept runs adp Check against the room as it is at acceptance (the head
// compared is the head replaced: the room is locked from here until the
// record has committed and been fanned out), counts the quota, assigns the
// record, stores it and applies it.
func (h eventWriter) Accept(ctx context.Context, w *hubhttp.Write) (*hubhttp.Result, error) {
	s := h.s
	env := w.Envelope
	roomID := adp.RoomOf(&env.Event) // checkPathRoom has compared it with the path
	e, err := s.writeRoom(ctx, w, roomID)
	if err != nil {
		return nil, err
	}
	room := e.room
	look := &lookups{ctx: ctx, db: s.db, tx: w.Tx, room: roomID}
	err = room.Check(s.rules, env, look.options(w.AcceptedAt, s.RoomURL(roomID)))
	if look.err != nil {
		return nil, look.err
	}
	if err != nil {
		return nil, apiError(err)
	}
	if err := s.rateLimit(w, roomID, env.Event.Type, room.Types); err != nil {
		return nil, err
	}
	class, err := adp.ClassOf(env.Event.Type, room.Types)
	if err != nil {
		return nil, apiError(err)
	}
	rec, err := adp.NewRecord(roomID, room.Last.Link(), w.AcceptedAt, env)
	if err != nil {
		return nil, err
	}
	raw := recordJSON(rec, w.Raw)
	if err := s.insertRecord(ctx, w.Tx, rec, raw); err != nil {
		return nil, err
	}
	w.OnAbort(func() { s.evict(e) })
	if err := room.Apply(s.rules, rec); err != nil {
		return nil, fmt.Errorf("discourse: apply after a passing check: %w", err)
	}
	if err := s.recordEffects(ctx, w.Tx, room, rec); err != nil {
		return nil, err
	}
	snapshot := !class.HeadChecked() || rec.Seq-e.snapshotSeq >= int64(s.limits.SnapshotEvery)
	if err := s.saveRoom(ctx, w.Tx, e, snapshot); err != nil {
		return nil, err
	}
	return &hubhttp.Result{Status: http.StatusOK, Body: json.RawMessage(raw), AfterCommit: func() {
		s.publishRecord(e, rec, raw)
	}}, nil
}

// recordEffects stores what an accepted record changes besides the room:
// a reviewed join request's outcome, the agents /v1/me/rooms relates to
// the room, the external packs a type.define imported, and the archive time
// of a closed room.
func (s *Service) recordEffects(ctx context.Context, tx *sql.Tx, room *adp.Room, rec *adp.Record) error {
	ev := &rec.Envelope.Event
	payload, _ := ev.Payload.(map[string]any)
	switch ev.Type {
	case adp.TypeJoinReview:
		req, _ := payload["request"].(map[string]any)
		reqEv, _ := req["event"].(map[string]any)
		reqID, _ := req["hash"].(string)
		applicant, _ := reqEv["actor"].(string)
		status := adp.JoinRejected
		if payload["decision"] == "approve" {
			status = adp.JoinApproved
		}
		if _, err := tx.ExecContext(ctx, `UPDATE adp_join_requests SET status = ?, reviewed_by = ?, reviewed_at = ?,
			review_event_id = ? WHERE id = ? AND room_id = ?`, string(status), ev.Actor, rec.AcceptedAt, rec.EnvelopeHash(), reqID, rec.RoomID); err != nil {
			return err
		}
		return s.relate(ctx, tx, rec.RoomID, applicant)
	case adp.TypeRoomJoin:
		return s.relate(ctx, tx, rec.RoomID, ev.Actor)
	case adp.TypeRoomUpdate:
		return s.relate(ctx, tx, rec.RoomID, invitees(room)...)
	case adp.TypeMemberRemove:
		member, _ := payload["member"].(string)
		return s.relate(ctx, tx, rec.RoomID, member)
	case adp.TypeTypeDefine:
		if err := s.persistPacks(ctx, tx, room, rec.Seq, rec.AcceptedAt); err != nil {
			return apiError(err)
		}
	case adp.TypeRoomClose, adp.TypeRoomCancel:
		_, err := tx.ExecContext(ctx, `UPDATE adp_rooms SET archived_at = ? WHERE id = ? AND archived_at IS NULL`, rec.AcceptedAt, rec.RoomID)
		return err
	}
	return nil
}

// Replay answers an exact resubmission with the original record (ADP 14),
// in its redacted form if it was redacted since.
func (eventWriter) Replay(ctx context.Context, tx *sql.Tx, acc *hubhttp.Accepted) (*hubhttp.Result, error) {
	var raw []byte
	if err := tx.QueryRowContext(ctx, `SELECT record FROM adp_records WHERE event_hash = ?`, acc.Hash).Scan(&raw); err != nil {
		return nil, fmt.Errorf("discourse: accepted event %s has no record: %w", acc.Hash, err)
	}
	return &hubhttp.Result{Status: http.StatusOK, Body: json.RawMessage(raw)}, nil
}
