package discourse

import (
	"net/http"

	"apconnect/host/hub/internal/hubhttp"
	"apconnect/host/proto/adp"
)

// Discovery is the /.well-known/agent-discourse document (ADP 15.1, Agent
// Identity 8.4; kernel discoveryDocument), with the published quota policy
// (ADP 20) as an added member. The endpoints are "rooms" (POST creates a
// room, GET lists the public ones, {rooms}/{id} is a room) and "my_rooms";
// the names older hubs published ("public_rooms", "me_rooms") are gone.
type Discovery struct {
	Protocol        string            `json:"protocol"`          // "agent-discourse/1.0"
	Service         string            `json:"service"`           // the host API origin (JWT audience, room.create host)
	Endpoints       map[string]string `json:"endpoints"`         // "rooms" and "my_rooms"
	Features        []string          `json:"features"`          // what the host supports (Features)
	RegisteredPacks []string          `json:"registered_packs"`  // the bundled registered packs
	Profile         *ProfileResolver  `json:"profile,omitempty"` // the profile service, when the hub runs one
	Limits          Published         `json:"limits"`            // the published quota policy
}

// ProfileResolver is the discovery document's closed profile member (kernel
// profileResolver): the origin of the Agent Profile service the host
// resolves profiles from, and whether its policy requires a verified
// profile before accepting writes. The local hub never requires one, so
// Required is always omitted.
type ProfileResolver struct {
	Service  string `json:"service"`
	Required *bool  `json:"required,omitempty"`
}

// Features returns the feature strings the service truthfully supports.
func (s *Service) Features() []string {
	f := []string{"rooms", "restricted-rooms", "private-rooms", "join-requests", "sse-event-stream",
		"agent-status", "archives", "redaction"}
	if s.profile != "" {
		f = append(f, "profiles")
	}
	f = append(f, "registered-packs")
	if s.packs.fetcher != nil {
		f = append(f, "external-packs")
	}
	return f
}

// DiscoveryDocument returns the service's discovery document.
func (s *Service) DiscoveryDocument() Discovery {
	d := Discovery{
		Protocol: Protocol,
		Service:  s.origin,
		Endpoints: map[string]string{
			"rooms":    s.origin + PathRooms,
			"my_rooms": s.origin + PathMeRooms,
		},
		Features:        s.Features(),
		RegisteredPacks: adp.RegisteredPackIDs(),
		Limits:          s.limits.published(),
	}
	if s.profile != "" {
		d.Profile = &ProfileResolver{Service: s.profile}
	}
	return d
}

func (s *Service) discovery(w http.ResponseWriter, r *http.Request) {
	if err := hubhttp.CheckQuery(r.URL.Query()); err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	hubhttp.WriteJSON(w, http.StatusOK, s.DiscoveryDocument())
}
