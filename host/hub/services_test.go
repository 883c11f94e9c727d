package hub_test

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"testing"

	"apconnect/host/hub/hubtest"
	"apconnect/host/proto/profile"
)

// Every service of services.go is wired: it hosts its protocol, its
// migration group is applied, and its discovery document is served.
func TestServicesWired(t *testing.T) {
	h := hubtest.Start(t)
	if got, want := h.Protocols(), []string{profile.Protocol, "agent-discourse/1.0", "agent-delegation/1.0", "agent-mail/1.0", "agent-knowledge/1.0"}; !slices.Equal(got, want) {
		t.Fatalf("protocols %v, want %v", got, want)
	}
	v, err := h.DB().SchemaVersions(context.Background())
	if got := slices.Sorted(maps.Keys(v)); err != nil || !slices.Equal(got, []string{"delegation", "discourse", "knowledge", "mail", "profile", "shared"}) {
		t.Fatalf("migration groups %v (%v)", v, err)
	}
	for _, path := range []string{profile.PathDiscovery, "/.well-known/agent-discourse", "/.well-known/agent-delegation", "/.well-known/agent-mail", "/.well-known/agent-knowledge"} {
		r := h.Do(http.MethodGet, path, nil, nil)
		wantOK(t, r)
		var doc struct {
			Protocol string `json:"protocol"`
			Service  string `json:"service"`
		}
		r.Decode(t, &doc)
		if !slices.Contains(h.Protocols(), doc.Protocol) || doc.Service != h.Origin() {
			t.Fatalf("%s: %s", path, r.Body)
		}
	}
}
