package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"apconnect/host/config"
	"apconnect/host/plugin"
	"apconnect/host/plugin/plugintest"
	"apconnect/host/pluginhost"
)

// Terminal escapes from the hostile-plugin corpus (host/plugin/testdata/
// hostile/wat): a plugin whose strings carry ESC, CR, BEL, OSC sequences,
// and one whose describe fails with a message that moves the cursor up,
// erases the line and prints a green "All checks passed.".
const (
	escapesWat     = "../../host/plugin/testdata/hostile/wat/escapes.wat"
	escapesLoadWat = "../../host/plugin/testdata/hostile/wat/escapes_load.wat"
)

// rawControl reports a character a terminal would act on (line feeds
// between lines are the program's own).
func rawControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool {
		return r != '\n' && (r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || unicode.Is(unicode.Cf, r))
	})
}

func TestTerminalEscapesInPluginInspect(t *testing.T) {
	t.Parallel()
	wasm := plugintest.BuildWat(t, escapesWat)
	code, out, errOut := runCLI(t, "plugin", "inspect", "--no-cache", wasm)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if rawControl(out) {
		t.Fatalf("inspect printed raw control characters:\n%q", out)
	}
	for _, want := range []string{
		"Plugin escapes 1.0\\x1b[2J (plugin ABI 1)\n",
		"  Formats dates.\\x1b[8m\n",
		"escapes_t  Shows the date.\\x1b[1A\\x1b[2K\\rNo problems.\n",
		// What the description tried to hide is on the screen.
		"\nGrants it needs: validate, tools\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect output lacks %q:\n%s", want, out)
		}
	}

	// --json: the same data, with nothing raw either.
	code, out, errOut = runCLI(t, "plugin", "inspect", "--no-cache", "--json", wasm)
	if code != 0 {
		t.Fatalf("--json exit %d: %s", code, errOut)
	}
	if rawControl(out) {
		t.Fatalf("inspect --json printed raw control characters:\n%q", out)
	}
	var in struct {
		Description plugin.Description `json:"description"`
	}
	if err := json.Unmarshal([]byte(out), &in); err != nil {
		t.Fatal(err)
	}
	if in.Description.Description != "Formats dates.\x1b[8m" || in.Description.Tools[0].Title != "T\x1b]0;owned\x07" {
		t.Errorf("the JSON does not carry the strings themselves: %+v", in.Description)
	}

	// A plugin that fails describe: the error reaches stderr escaped.
	code, _, errOut = runCLI(t, "plugin", "inspect", "--no-cache", plugintest.BuildWat(t, escapesLoadWat))
	if code != 1 || rawControl(errOut) || !strings.Contains(errOut, `\r\x1b[1A\x1b[2K\x1b[32mAll checks passed.\x1b[0m`) {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

func TestTerminalEscapesInDoctor(t *testing.T) {
	t.Parallel()
	home := filepath.Join(t.TempDir(), "home")
	if code, _, errOut := runCLI(t, "init", "--home", home, "--unencrypted-key"); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	entry := func(name, wat string, grants string) string {
		wasm := plugintest.BuildWat(t, wat)
		data, err := os.ReadFile(wasm)
		if err != nil {
			t.Fatal(err)
		}
		return "\n[[plugins]]\nname = \"" + name + "\"\npath = \"" + wasm + "\"\nsha256 = \"" + plugin.Digest(data) + "\"\ngrants = [" + grants + "]\n"
	}
	cfgFile := filepath.Join(home, config.FileName)
	text, err := os.ReadFile(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	text = append(text, entry("escapes", escapesWat, `"validate", "tools"`)+entry("escapes_load", escapesLoadWat, `"tools"`)...)
	if err := os.WriteFile(cfgFile, text, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	// A health report a running apconnect left, with the plugin's last
	// error as the plugin wrote it.
	rep := pluginhost.Report{Process: "mcp\x1b[2J default", PID: 1, WrittenAt: time.Now().Add(-time.Minute), Plugins: []plugin.Health{{
		Name: "escapes", Loaded: true, Calls: 3, Failures: 1, FailuresByCode: map[string]uint64{"plugin_error": 1},
		LastError: "plugin escapes: tool: oops: \x1b[2J\rAll checks passed. (plugin_error)", LastErrorAt: time.Now().Add(-2 * time.Minute),
	}}}
	data, _ := json.Marshal(rep)
	if err := os.MkdirAll(pluginhost.ReportDir(cfg), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pluginhost.ReportPath(cfg, "mcp", "default"), data, 0o600); err != nil {
		t.Fatal(err)
	}

	code, out, _ := runCLI(t, "doctor", "--home", home)
	if code != 1 {
		t.Fatalf("doctor exit %d:\n%s", code, out)
	}
	if rawControl(out) {
		t.Fatalf("doctor printed raw control characters:\n%q", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "1 problem(s), ") {
		t.Errorf("summary %q:\n%s", last, out)
	}
	var failRow, reportRow string
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "plugin escapes_load "):
			failRow = l
		case strings.HasPrefix(l, "plugin escapes at run time"):
			reportRow = l
		}
	}
	// (doctor keeps each row on one line: CR and LF become spaces.)
	if !strings.Contains(failRow, "FAIL") || !strings.Contains(failRow, `nope: \x1b[1A\x1b[2K\x1b[32mAll checks passed.\x1b[0m`) {
		t.Errorf("FAIL row %q:\n%s", failRow, out)
	}
	if !strings.Contains(reportRow, "warn") || !strings.Contains(reportRow, `mcp\x1b[2J default`) || !strings.Contains(reportRow, `oops: \x1b[2J All checks passed.`) {
		t.Errorf("report row %q:\n%s", reportRow, out)
	}

	code, out, _ = runCLI(t, "doctor", "--home", home, "--json")
	if code != 1 || rawControl(out) {
		t.Fatalf("doctor --json: exit %d, raw control characters in %q", code, out)
	}
	var cs checks
	if err := json.Unmarshal([]byte(out), &cs); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range cs {
		found = found || c.Name == "plugin escapes_load" && strings.Contains(c.Detail, "\x1b[1A")
	}
	if !found {
		t.Errorf("the JSON does not carry the message itself:\n%s", out)
	}
}
