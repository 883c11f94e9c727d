package delegation

import (
	"context"
	"testing"

	"apconnect/host/capability"
)

// BenchGet returns one GET of credential id from the delegation service at
// origin, through the module's client of that service.
func (m *Module) BenchGet(b *testing.B, origin, id string) func() {
	gctx, svc, err := m.service(context.Background(), origin, capability.DelegationRead)
	if err != nil {
		b.Fatal(err)
	}
	return func() {
		if _, _, err := svc.Credential(gctx, id); err != nil {
			b.Fatal(err)
		}
	}
}
