package mcpserver

import (
	"testing"

	"apconnect/test/catalogcheck"
)

func catalogEnv(t *testing.T) catalogcheck.Env {
	h := startHub(t)
	agent := func(name string, seed byte) *catalogcheck.Agent {
		a := newAgent(t, h, name, seed, agentOptions{start: true})
		return &catalogcheck.Agent{Name: name, Session: a.cs}
	}
	return catalogcheck.Env{Host: h.Origin(), Alice: agent("alice", 0xA1), Bob: agent("bob", 0xB2), Carol: agent("carol", 0xC3),
		Dave: agent("dave", 0xD4), Catalog: catalogcheck.Served(), HubDir: h.DataDir(), Protocols: h.Protocols()}
}

// Every tool, in process against the local hub, with {}, with only its
// required inputs and with every input of both catalogs; every result
// checked against both catalogs' output schemas.
func TestEveryToolAgainstBothCatalogs(t *testing.T) {
	t.Parallel()
	catalogcheck.RunEveryTool(t, catalogEnv(t))
}

// A client that knows only the 0.12.6 catalog runs the seed's interaction
// loop with its own tool names and inputs.
func TestSDKClientRunsTheInteractionLoop(t *testing.T) {
	t.Parallel()
	catalogcheck.RunSDKLoop(t, catalogEnv(t))
}
