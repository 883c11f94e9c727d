package plugin

import (
	"context"
	"testing"

	"apconnect/host/plugin/internal/gobuild"
)

// BenchmarkInstantiate is the cost of one fresh instance of a Go plugin
// (what a call pays after its instance was discarded): instantiation with
// the Go runtime's initialisation, and the ABI version check.
func BenchmarkInstantiate(b *testing.B) {
	wasm, err := gobuild.Build("testdata/full")
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	rt, err := NewRuntime(ctx, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close(ctx)
	grants := Grants{Validate: true, Watch: true, Tools: true, Packs: true, Propose: []string{"demo.vote"}}
	p, err := rt.LoadBytes(ctx, "full", wasm, Digest(wasm), grants, Limits{})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		inst, err := p.spawn(ctx, p.limits.LoadTimeout)
		if err != nil {
			b.Fatal(err)
		}
		inst.mod.Close(ctx)
	}
}
