package mcpserver

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"apconnect/host/plugin"
	"apconnect/host/plugin/plugintest"
)

// A call of a plugin tool that waits for its plugin to be compiled and
// started (a plugin described from the cache, called for the first time)
// tells a client that sent a progress token that it waits; a call of a
// ready plugin sends nothing.
func TestPluginCompileProgress(t *testing.T) {
	t.Parallel()
	wasm := plugintest.BuildWat(t, "../plugin/testdata/cache/honest.wat")
	data, err := os.ReadFile(wasm)
	if err != nil {
		t.Fatal(err)
	}
	digest, cache := plugin.Digest(data), t.TempDir()
	load := func() *plugin.Plugin {
		rt, err := plugin.NewRuntime(bg, plugin.Options{CacheDir: cache})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rt.Close(bg) })
		p, err := rt.Load(bg, wasm, digest, plugin.AllGrants(), plugin.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if err := load().Ready(bg); err != nil { // fills the cache
		t.Fatal(err)
	}
	h := startHub(t)
	prog := &progress{}
	a := newAgent(t, h, "alice", 0xA1, agentOptions{tools: []plugin.ToolProvider{load()},
		client: &mcp.ClientOptions{ProgressNotificationHandler: prog.on}})

	params := &mcp.CallToolParams{Name: "cached_ping", Arguments: obj{}}
	params.SetProgressToken("ping-1")
	if res := callRaw2(t, a.cs, params); res.IsError || !strings.Contains(text(res), "pong") {
		t.Fatalf("first call: %s", text(res))
	}
	eventually(t, 5*time.Second, "a progress notification", func() bool { return len(prog.all()) > 0 })
	notes := prog.all()
	if notes[0].ProgressToken != "ping-1" || notes[0].Progress != 1 ||
		!strings.Contains(notes[0].Message, "plugin cached is being compiled and started") {
		t.Fatalf("progress of the first call: %+v", notes)
	}
	if !slices.IsSortedFunc(notes, func(x, y *mcp.ProgressNotificationParams) int { return int(x.Progress - y.Progress) }) {
		t.Fatalf("progress goes back: %+v", notes)
	}
	params.SetProgressToken("ping-2")
	if res := callRaw2(t, a.cs, params); res.IsError {
		t.Fatalf("second call: %s", text(res))
	}
	if got := len(prog.all()); got != len(notes) {
		t.Fatalf("a call of a ready plugin sent %d progress notifications", got-len(notes))
	}
}
