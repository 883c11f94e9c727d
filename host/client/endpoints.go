package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"apconnect/host/proto/adp"
	"apconnect/host/text"
)

// discovery returns the cached discovery document, reading it when none is
// cached.
func (s *service) discovery(ctx context.Context) (*Discovery, error) {
	s.mu.Lock()
	d := s.disc
	s.mu.Unlock()
	if d != nil {
		return d, nil
	}
	d, err := s.fetchDiscovery(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.disc = d
	s.mu.Unlock()
	return d, nil
}

// fetchDiscovery reads the document with the read retry policy. A 404
// stands for "no document": the default paths apply.
func (s *service) fetchDiscovery(ctx context.Context) (*Discovery, error) {
	resp, err := s.do(ctx, call{
		method: http.MethodGet, url: s.origin + "/.well-known/" + s.discName,
		auth: authNone, maxBytes: MaxDiscoveryBytes, discovery: true,
	})
	var se *Error
	if errors.As(err, &se) && se.Status == http.StatusNotFound {
		return &Discovery{Protocol: s.protocol, Service: s.origin}, nil
	}
	if err != nil {
		return nil, err
	}
	d, err := parseDiscovery(resp.body, s.origin, s.discName, s.protocol)
	if err != nil {
		return nil, &ResponseError{Method: http.MethodGet, Path: "/.well-known/" + s.discName, Status: resp.status, Err: err}
	}
	return d, nil
}

// invalidate drops the cached discovery document (after a network error,
// 429 or 5xx).
func (s *service) invalidate() {
	s.mu.Lock()
	s.disc = nil
	s.mu.Unlock()
}

// endpoint returns the discovery URL of name (without a trailing slash), or
// origin+defaultPath when the document lists none.
func (s *service) endpoint(ctx context.Context, name, defaultPath string) (string, error) {
	d, err := s.discovery(ctx)
	if err != nil {
		return "", err
	}
	if u := d.Endpoint(name); u != "" {
		// parseDiscovery checked it is on the origin.
		return strings.TrimRight(u, "/"), nil
	}
	return s.origin + defaultPath, nil
}

// roomsURL is the ADP rooms endpoint.
func (h *Host) roomsURL(ctx context.Context) (string, error) {
	return h.svc.endpoint(ctx, "rooms", "/v1/rooms")
}

// roomURL is the rooms endpoint extended with the (checked) room id.
func (h *Host) roomURL(ctx context.Context, roomID string) (string, error) {
	if !adp.ValidRoomID(roomID) {
		return "", fmt.Errorf("client: invalid room id %q", text.Truncate(roomID, 64))
	}
	rooms, err := h.roomsURL(ctx)
	if err != nil {
		return "", err
	}
	return rooms + "/" + roomID, nil
}

// legacyPublicRoomsURL is the "public_rooms" endpoint that older apconnect
// hubs listed (their GET {rooms} answered 405), or "" when the document
// lists none.
func (h *Host) legacyPublicRoomsURL(ctx context.Context) (string, error) {
	d, err := h.svc.discovery(ctx)
	if err != nil {
		return "", err
	}
	return strings.TrimRight(d.Endpoint("public_rooms"), "/"), nil
}

// myRoomsURL is the "my_rooms" endpoint (SDK 0.12.6; kernel
// discoveryDocument); else "me_rooms", the name older apconnect hubs used;
// else next to the rooms endpoint (a rooms endpoint at {prefix}/rooms puts
// it at {prefix}/me/rooms); else the default path /v1/me/rooms.
func (h *Host) myRoomsURL(ctx context.Context) (string, error) {
	d, err := h.svc.discovery(ctx)
	if err != nil {
		return "", err
	}
	for _, name := range []string{"my_rooms", "me_rooms"} {
		if u := d.Endpoint(name); u != "" {
			return strings.TrimRight(u, "/"), nil
		}
	}
	rooms, err := h.roomsURL(ctx)
	if err != nil {
		return "", err
	}
	if prefix, ok := strings.CutSuffix(rooms, "/rooms"); ok {
		return prefix + "/me/rooms", nil
	}
	return h.svc.origin + "/v1/me/rooms", nil
}
