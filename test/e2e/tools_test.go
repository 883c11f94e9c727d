package e2e

import (
	"slices"
	"strings"
	"testing"

	"apconnect/host/toolcatalog"
	"apconnect/test/catalogcheck"
)

// stdioEnv starts a hub and four `apconnect mcp` processes, one per agent,
// all with the hub as their only host.
func stdioEnv(t *testing.T) catalogcheck.Env {
	h := startHub(t)
	home := newHome(t, h, "alice", "bob", "carol", "dave")
	agent := func(name string) *catalogcheck.Agent {
		return &catalogcheck.Agent{Name: name, Session: startMCP(t, home, name, procOptions{}).cs}
	}
	return catalogcheck.Env{Host: h.Origin(), Alice: agent("alice"), Bob: agent("bob"), Carol: agent("carol"), Dave: agent("dave"),
		Catalog: catalogcheck.Served()}
}

// Each of the 38 tools works end to end over stdio against the local hub:
// called with {}, with only its required inputs and with every input of
// both catalogs, its results match both catalogs' output schemas.
func TestEveryToolOverStdio(t *testing.T) {
	t.Parallel()
	if n := len(toolcatalog.Names()); n != 38 {
		t.Fatalf("the catalog has %d tools, want 38", n)
	}
	env := stdioEnv(t)
	listed, err := env.Alice.Session.ListTools(bg, nil)
	if err != nil {
		t.Fatal(err)
	}
	var standard []string
	for _, tool := range listed.Tools {
		if strings.HasPrefix(tool.Name, catalogcheck.Prefix) {
			standard = append(standard, tool.Name)
		}
	}
	slices.Sort(standard)
	if !slices.Equal(standard, toolcatalog.Names()) {
		t.Fatalf("tools/list shows %d standard tools: %v", len(standard), standard)
	}
	catalogcheck.RunEveryTool(t, env)
}

// A client that knows only the 0.12.6 catalog runs the seed's interaction
// loop over stdio, with its own tool names and inputs.
func TestSDKClientLoopOverStdio(t *testing.T) {
	t.Parallel()
	catalogcheck.RunSDKLoop(t, stdioEnv(t))
}
