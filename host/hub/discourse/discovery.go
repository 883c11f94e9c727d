package discourse

import (
	"net/http"

	"apconnect/host/adp"
	"apconnect/host/hub/hubhttp"
	"apconnect/host/identity"
)

// Discovery is the /.well-known/agent-discourse document (ADP 15.1, Agent
// Identity 8.4), with the published quota policy (ADP 20) as an added member.
type Discovery struct {
	Protocol        string            `json:"protocol"`         // "agent-discourse/1.0"
	Service         string            `json:"service"`          // the host API origin (JWT audience, room.create host)
	Endpoints       map[string]string `json:"endpoints"`        // "rooms", and the public and me room lists
	Features        []string          `json:"features"`         // what the host supports (Features)
	RegisteredPacks []string          `json:"registered_packs"` // the bundled registered packs
	Profile         map[string]any    `json:"profile"`          // profile resolution: mode local and the service
	Limits          Published         `json:"limits"`           // the published quota policy
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
			"rooms":        s.origin + PathRooms,
			"public_rooms": s.origin + PathPublic,
			"me_rooms":     s.origin + PathMeRooms,
		},
		Features:        s.Features(),
		RegisteredPacks: adp.RegisteredPackIDs(),
		Limits:          s.limits.published(),
	}
	if s.profile != "" {
		d.Profile = map[string]any{"mode": "local", "service": s.profile, "protocol": identity.ProtocolProfile}
	} else {
		d.Profile = map[string]any{"mode": "optional"}
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
