package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"apconnect/host/identity"
	"apconnect/host/proto/adp"
	"apconnect/host/text"
)

// SubmitJoinRequest posts a signed room.join.request envelope
// (POST /v1/rooms/{room_id}/join-requests; no JWT: the signature
// authenticates the applicant). It is not retried; a *NetworkError means
// the outcome is unknown.
func (h *Host) SubmitJoinRequest(ctx context.Context, roomID string, env *identity.Envelope) (*JoinRequestResult, error) {
	if env == nil {
		return nil, errNilEnvelope
	}
	if env.Event.Type != adp.TypeJoinRequest {
		return nil, fmt.Errorf("client: SubmitJoinRequest takes a room.join.request envelope, not %q", env.Event.Type)
	}
	room, err := h.roomURL(ctx, roomID)
	if err != nil {
		return nil, err
	}
	u := room + "/join-requests"
	resp, err := h.svc.postEnvelope(ctx, u, env, h.svc.opts.MaxResourceBytes)
	if err != nil {
		return nil, err
	}
	v, err := identity.ParseStrict(resp.body)
	if err != nil {
		return nil, bad(http.MethodPost, u, resp.status, err)
	}
	jr, err := joinRequestFromValue(v, roomID, "")
	if err != nil {
		return nil, bad(http.MethodPost, u, resp.status, err)
	}
	if jr.ID != env.Hash {
		return nil, bad(http.MethodPost, u, resp.status, fmt.Errorf("/id: request %s, want the submitted %s", jr.ID, env.Hash))
	}
	return &JoinRequestResult{JoinRequest: jr, MaxSeenNonce: resp.header.Get(HeaderMaxSeenNonce)}, nil
}

// JoinRequests lists a room's join requests (creator and moderators only).
// It needs a signer.
func (h *Host) JoinRequests(ctx context.Context, roomID string, q JoinRequestQuery) (*Page[*JoinRequest], error) {
	room, err := h.roomURL(ctx, roomID)
	if err != nil {
		return nil, err
	}
	u := room + "/join-requests"
	qs := url.Values{}
	setStr(qs, "status", q.Status)
	setInt(qs, "limit", int64(q.Limit))
	setStr(qs, "cursor", q.Cursor)
	resp, err := h.get(ctx, u, qs, authRequired, h.svc.opts.MaxResponseBytes)
	if err != nil {
		return nil, err
	}
	return decodePage(u, resp, 0, func(v any, ptr string, _ []*JoinRequest) (*JoinRequest, error) {
		return joinRequestFromValue(v, roomID, ptr)
	})
}

// JoinRequest reads one join request (its applicant, the creator and
// moderators). It needs a signer.
func (h *Host) JoinRequest(ctx context.Context, roomID, requestID string) (*JoinRequest, error) {
	if !validHash(requestID) {
		return nil, fmt.Errorf("client: invalid join request id %q", text.Truncate(requestID, 64))
	}
	room, err := h.roomURL(ctx, roomID)
	if err != nil {
		return nil, err
	}
	u := room + "/join-requests/" + requestID
	resp, err := h.get(ctx, u, nil, authRequired, h.svc.opts.MaxResourceBytes)
	if err != nil {
		return nil, err
	}
	v, err := identity.ParseStrict(resp.body)
	if err != nil {
		return nil, bad(http.MethodGet, u, resp.status, err)
	}
	jr, err := joinRequestFromValue(v, roomID, "")
	if err != nil {
		return nil, bad(http.MethodGet, u, resp.status, err)
	}
	if jr.ID != requestID {
		return nil, bad(http.MethodGet, u, resp.status, fmt.Errorf("/id: request %s, want %s", jr.ID, requestID))
	}
	return jr, nil
}
