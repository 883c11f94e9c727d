package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"apconnect/host/config"
	"apconnect/host/plugin"
	"apconnect/host/pluginhost"
)

// doctor reports each configured plugin: a file that is not the pinned one
// is a FAIL with the reason, a disabled entry is skipped, and run-time
// failures a running apconnect reported are warnings.
func TestDoctorPlugins(t *testing.T) {
	t.Parallel()
	home := filepath.Join(t.TempDir(), "home")
	if code, _, errOut := runCLI(t, "init", "--home", home, "--unencrypted-key"); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	wasm := filepath.Join(home, "plugins", "tampered.wasm")
	if err := os.MkdirAll(filepath.Dir(wasm), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wasm, []byte("\x00asm not the pinned module"), 0o600); err != nil {
		t.Fatal(err)
	}
	pinned := strings.Repeat("5e", 32)
	cfgFile := filepath.Join(home, config.FileName)
	text, err := os.ReadFile(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	cfgText := string(text) + `
[[plugins]]
name = "tampered"
path = "plugins/tampered.wasm"
sha256 = "` + pinned + `"
grants = ["validate"]

[[plugins]]
name = "resting"
path = "plugins/resting.wasm"
sha256 = "` + pinned + `"
grants = ["tools"]
enabled = false
`
	if err := os.WriteFile(cfgFile, []byte(cfgText), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	// A report a running `apconnect mcp` left: a watcher that timed out.
	rep := pluginhost.Report{Process: "mcp default", PID: 1, WrittenAt: time.Now().Add(-time.Minute), Plugins: []plugin.Health{{
		Name: "watcher", Loaded: true, Calls: 9, Failures: 2, FailuresByCode: map[string]uint64{"plugin_timeout": 2},
		LastError: "plugin watcher: watch: the deadline of 250ms passed (plugin_timeout)", LastErrorAt: time.Now().Add(-2 * time.Minute),
	}, {Name: "fine", Loaded: true, Calls: 5}}}
	data, _ := json.Marshal(rep)
	if err := os.MkdirAll(pluginhost.ReportDir(cfg), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pluginhost.ReportPath(cfg, "mcp", "default"), data, 0o600); err != nil {
		t.Fatal(err)
	}

	code, out, _ := runCLI(t, "doctor", "--home", home, "--json")
	var cs checks
	if err := json.Unmarshal([]byte(out), &cs); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, out)
	}
	rows := map[string]check{}
	for _, c := range cs {
		rows[c.Name] = c
	}
	if code != 1 {
		t.Fatalf("doctor exit %d\n%s", code, out)
	}
	if c := rows["plugin tampered"]; c.Status != statusFail || !strings.Contains(c.Detail, "config pins "+pinned) || !strings.Contains(c.Detail, "plugin_digest_mismatch") {
		t.Fatalf("tampered: %+v", c)
	}
	if c := rows["plugin resting"]; c.Status != statusSkip || !strings.Contains(c.Detail, "disabled") {
		t.Fatalf("disabled: %+v", c)
	}
	if c := rows["plugin watcher at run time"]; c.Status != statusWarn || !strings.Contains(c.Detail, "2 of 9 calls failed in `apconnect mcp default`") ||
		!strings.Contains(c.Detail, "plugin_timeout ×2") || !strings.Contains(c.Detail, "deadline of 250ms") {
		t.Fatalf("run-time failures: %+v", c)
	}
	if _, ok := rows["plugin fine at run time"]; ok {
		t.Fatal("a plugin without failures is reported")
	}
}
