package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"apconnect/host/identity"
	"apconnect/host/proto/adp"
	"apconnect/host/text"
)

var errNilEnvelope = errors.New("client: nil envelope")

func itoa64(v int64) string { return strconv.FormatInt(v, 10) }

// CreateRoom submits a signed room.create envelope to the rooms endpoint
// (POST /v1/rooms). It is not retried; a *NetworkError means the outcome is
// unknown (an exact resubmission returns the same room).
func (h *Host) CreateRoom(ctx context.Context, env *identity.Envelope) (*CreateRoomResult, error) {
	if env == nil {
		return nil, errNilEnvelope
	}
	if env.Event.Type != adp.TypeRoomCreate {
		return nil, fmt.Errorf("client: CreateRoom takes a room.create envelope, not %q", env.Event.Type)
	}
	u, err := h.roomsURL(ctx)
	if err != nil {
		return nil, err
	}
	resp, err := h.svc.postEnvelope(ctx, u, env, h.svc.opts.MaxResourceBytes)
	if err != nil {
		return nil, err
	}
	obj, err := parseObject(resp.body)
	if err != nil {
		return nil, bad(http.MethodPost, u, resp.status, err)
	}
	var r CreateRoomResult
	if err := decodeValue(obj, &r, ""); err != nil {
		return nil, bad(http.MethodPost, u, resp.status, err)
	}
	r.Raw = obj
	r.MaxSeenNonce = resp.header.Get(HeaderMaxSeenNonce)
	if !adp.ValidRoomID(r.ID) {
		return nil, bad(http.MethodPost, u, resp.status, fmt.Errorf("/id: invalid room id %q", text.Truncate(r.ID, 64)))
	}
	if _, err := r.Record(env); err != nil {
		return nil, bad(http.MethodPost, u, resp.status, err)
	}
	return &r, nil
}

// Record rebuilds the genesis server record of a created room from the
// room.create envelope that was submitted, and checks that the host's
// acceptance fields hash to r.Hash (shape and record hash, not the
// envelope's signature).
func (r *CreateRoomResult) Record(env *identity.Envelope) (*adp.Record, error) {
	if env == nil {
		return nil, errNilEnvelope
	}
	if r.Seq != 1 || r.PreHash != "" {
		return nil, fmt.Errorf("room.create answered with seq %d and pre_hash %q, want seq 1 and null", r.Seq, r.PreHash)
	}
	rec := &adp.Record{RoomID: r.ID, Seq: 1, Hash: r.Hash, AcceptedAt: r.AcceptedAt, Envelope: env}
	if err := rec.Validate(); err != nil {
		return nil, err
	}
	return rec, nil
}

// Submit posts a signed room event (every type but room.create and
// room.join.request) to POST /v1/rooms/{room_id} and returns the accepted
// server record. It is not retried; a *NetworkError means the outcome is
// unknown. The record must be the one of this envelope in this room.
func (h *Host) Submit(ctx context.Context, roomID string, env *identity.Envelope) (*SubmitResult, error) {
	if env == nil {
		return nil, errNilEnvelope
	}
	switch env.Event.Type {
	case adp.TypeRoomCreate, adp.TypeJoinRequest:
		return nil, fmt.Errorf("client: %s is not submitted with Submit", env.Event.Type)
	}
	u, err := h.roomURL(ctx, roomID)
	if err != nil {
		return nil, err
	}
	resp, err := h.svc.postEnvelope(ctx, u, env, h.svc.opts.MaxResourceBytes)
	if err != nil {
		return nil, err
	}
	v, err := identity.ParseStrict(resp.body)
	if err != nil {
		return nil, bad(http.MethodPost, u, resp.status, err)
	}
	rec, err := recordFromValue(v, roomID, "")
	if err != nil {
		return nil, bad(http.MethodPost, u, resp.status, err)
	}
	if rec.EnvelopeHash() != env.Hash {
		return nil, bad(http.MethodPost, u, resp.status, fmt.Errorf("the record commits to envelope %s, not the submitted %s", rec.EnvelopeHash(), env.Hash))
	}
	return &SubmitResult{Record: rec, MaxSeenNonce: resp.header.Get(HeaderMaxSeenNonce)}, nil
}

// Room reads the room resource (GET /v1/rooms/{room_id}), authenticated
// when the Host has a signer.
func (h *Host) Room(ctx context.Context, roomID string) (*RoomResource, error) {
	u, err := h.roomURL(ctx, roomID)
	if err != nil {
		return nil, err
	}
	resp, err := h.get(ctx, u, nil, authIfSigner, h.svc.opts.MaxResourceBytes)
	if err != nil {
		return nil, err
	}
	v, err := identity.ParseStrict(resp.body)
	if err != nil {
		return nil, bad(http.MethodGet, u, resp.status, err)
	}
	var r RoomResource
	if err := roomFromValue(v, &r, &r, ""); err != nil {
		return nil, bad(http.MethodGet, u, resp.status, err)
	}
	if r.ID != roomID {
		return nil, bad(http.MethodGet, u, resp.status, fmt.Errorf("/id: room %q, want %q", r.ID, roomID))
	}
	return &r, nil
}

// RoomURL returns the canonical URL of a room on this host: the rooms
// endpoint extended with /{room_id}.
func (h *Host) RoomURL(ctx context.Context, roomID string) (string, error) {
	return h.roomURL(ctx, roomID)
}

// PublicRooms lists public rooms (ADP 17) anonymously with GET {rooms},
// as SDK 0.12.6 hosts serve it. A host that answers that with 405 and
// lists a "public_rooms" endpoint (an older apconnect hub) is asked there
// instead.
func (h *Host) PublicRooms(ctx context.Context, q PublicRoomQuery) (*Page[*RoomResource], error) {
	u, err := h.roomsURL(ctx)
	if err != nil {
		return nil, err
	}
	qs := url.Values{}
	setStr(qs, "status", q.Status)
	setStr(qs, "tag", q.Tag)
	setStr(qs, "keyword", q.Keyword)
	setStr(qs, "creator", q.Creator)
	setInt(qs, "starts_after", q.StartsAfter)
	setInt(qs, "ends_before", q.EndsBefore)
	setStr(qs, "language", q.Language)
	setInt(qs, "limit", int64(q.Limit))
	setStr(qs, "cursor", q.Cursor)
	resp, err := h.get(ctx, u, qs, authNone, h.svc.opts.MaxResponseBytes)
	var se *Error
	if errors.As(err, &se) && se.Status == http.StatusMethodNotAllowed {
		legacy, lerr := h.legacyPublicRoomsURL(ctx)
		if lerr != nil {
			return nil, lerr
		}
		if legacy == "" {
			return nil, err
		}
		u = legacy
		resp, err = h.get(ctx, u, qs, authNone, h.svc.opts.MaxResponseBytes)
	}
	if err != nil {
		return nil, err
	}
	return decodePage(u, resp, 0, func(v any, ptr string, _ []*RoomResource) (*RoomResource, error) {
		var r RoomResource
		return &r, roomFromValue(v, &r, &r, ptr)
	})
}

// MyRooms lists the rooms related to the authenticated agent
// (GET {my_rooms}, by default /v1/me/rooms). It needs a signer. Each item
// is a room resource with the agent's membership and role (D-05); the
// summaries older apconnect hubs returned decode too.
func (h *Host) MyRooms(ctx context.Context, q MyRoomsQuery) (*Page[*MyRoom], error) {
	u, err := h.myRoomsURL(ctx)
	if err != nil {
		return nil, err
	}
	qs := url.Values{}
	setStr(qs, "status", q.Status)
	setStr(qs, "membership", q.Membership)
	setInt(qs, "limit", int64(q.Limit))
	setStr(qs, "cursor", q.Cursor)
	resp, err := h.get(ctx, u, qs, authRequired, h.svc.opts.MaxResponseBytes)
	if err != nil {
		return nil, err
	}
	return decodePage(u, resp, 0, func(v any, ptr string, _ []*MyRoom) (*MyRoom, error) {
		var r MyRoom
		return &r, roomFromValue(v, &r, &r.RoomResource, ptr)
	})
}
