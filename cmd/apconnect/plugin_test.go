package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"apconnect/host/config"
	"apconnect/host/plugin"
	"apconnect/host/plugin/plugintest"
)

// runCLIEnv is runCLI with an environment.
func runCLIEnv(t *testing.T, vars map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: func(k string) string { return vars[k] }, now: time.Now}
	code := run(context.Background(), e, args)
	return code, out.String(), errOut.String()
}

func TestPluginInspect(t *testing.T) {
	t.Parallel()
	wasm := plugintest.Build(t, "../../examples/plugins/hello")
	data, err := os.ReadFile(wasm)
	if err != nil {
		t.Fatal(err)
	}
	digest := plugin.Digest(data)
	// At most one compilation (slow under -race): every run and the load
	// below share plugintest's on-disk compilation cache.
	cache := plugintest.CacheDir()
	if cache == "" {
		cache = t.TempDir()
	}

	code, out, errOut := runCLI(t, "plugin", "inspect", "--cache", cache, wasm)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"Plugin hello 0.1.0 (plugin ABI 1)\n",
		"File      " + wasm + " (",
		"SHA-256   " + digest + "\n",
		"Validates hello.greeting\n",
		"Watches   hello.greeting\n",
		"Proposes  none\n",
		"Tools\n  hello_wave  Waves back.\n",
		"Packs\n  hello:greetings/1.0  hello.greeting (signal)\n",
		"Grants it needs: validate, watch, tools, packs\n",
		"[[plugins]]\nname = \"hello\"\npath = \"" + wasm + "\"\nsha256 = \"" + digest + "\"\ngrants = [\"validate\", \"watch\", \"tools\", \"packs\"]\n",
		"# [plugins.limits]\n# memory_mib = 64\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	// The entry is a valid config and loads the plugin.
	_, snippet, _ := strings.Cut(out, "add this entry to config.toml:\n\n")
	cfg, err := config.Parse([]byte("[[identities]]\nname = \"a\"\nkey_file = \"a.key\"\n\n" + snippet))
	if err != nil {
		t.Fatalf("the entry is not a valid config: %v\n%s", err, snippet)
	}
	entry := cfg.Plugins[0]
	grants, err := plugin.ParseGrants(entry.Grants)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := plugin.NewRuntime(context.Background(), plugin.Options{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
	p, err := rt.Load(context.Background(), entry.Path, entry.SHA256, grants, plugin.Limits{})
	if err != nil {
		t.Fatalf("the entry does not load the plugin: %v", err)
	}
	p.Close(context.Background())

	// --json, flags after FILE.
	code, out, errOut = runCLI(t, "plugin", "inspect", wasm, "--json", "--cache", cache)
	if code != 0 {
		t.Fatalf("--json exit %d: %s", code, errOut)
	}
	var in struct {
		Path        string             `json:"path"`
		Size        int                `json:"size"`
		SHA256      string             `json:"sha256"`
		Description plugin.Description `json:"description"`
		Grants      []string           `json:"grants"`
		Config      string             `json:"config"`
	}
	if err := json.Unmarshal([]byte(out), &in); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if in.Path != wasm || in.Size != len(data) || in.SHA256 != digest || in.Description.Name != "hello" ||
		len(in.Description.Tools) != 1 || in.Description.Tools[0].MCPName != "hello_wave" || len(in.Description.Packs) != 1 ||
		strings.Join(in.Grants, ",") != "validate,watch,tools,packs" || !strings.HasPrefix(in.Config, "[[plugins]]\nname = \"hello\"\n") {
		t.Errorf("json %+v", in)
	}
}

func TestPluginInspectErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.wasm")
	if err := os.WriteFile(junk, []byte("not a module"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"plugin"}, 2, "plugin needs a subcommand: inspect FILE"},
		{[]string{"plugin", "show", "x"}, 2, `unknown subcommand "show" (want inspect or call)`},
		{[]string{"plugin", "inspect"}, 2, "inspect needs the plugin FILE"},
		{[]string{"plugin", "inspect", "a.wasm", "b.wasm"}, 2, "inspect takes one FILE"},
		{[]string{"plugin", "inspect", "--frob", "a.wasm"}, 2, "flag provided but not defined: -frob"},
		{[]string{"plugin", "inspect", "--no-cache", "--cache", dir, "a.wasm"}, 2, "--cache and --no-cache exclude each other"},
		{[]string{"plugin", "inspect", "--no-cache", filepath.Join(dir, "missing.wasm")}, 1, "(plugin_unreadable)"},
		{[]string{"plugin", "--no-cache", "inspect", junk}, 1, "not a valid WebAssembly module"},
	} {
		code, _, errOut := runCLI(t, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.stderr) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errOut, tc.code, tc.stderr)
		}
	}
	// The default cache is under XDG_CACHE_HOME, created on the way.
	cacheHome := t.TempDir()
	code, _, _ := runCLIEnv(t, map[string]string{"XDG_CACHE_HOME": cacheHome}, "plugin", "inspect", junk)
	if _, err := os.Stat(filepath.Join(cacheHome, "apconnect", "plugins")); code != 1 || err != nil {
		t.Errorf("default cache: exit %d, %v", code, err)
	}
	code, out, _ := runCLI(t, "plugin", "inspect", "--help")
	if code != 0 || !strings.Contains(out, "usage: apconnect plugin inspect") || !strings.Contains(out, "--no-cache") {
		t.Errorf("inspect --help: %d\n%s", code, out)
	}
}
