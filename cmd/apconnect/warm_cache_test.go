package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"apconnect/host/config"
	"apconnect/host/plugin/plugintest"
	"apconnect/host/pluginhost"
)

// Enabling a plugin compiles it into the home's compilation cache, so that
// the first `apconnect mcp` start is warm. These tests run the commands an
// operator runs and then load the home's plugins exactly as `apconnect mcp`
// does (pluginhost.Load with the home's cache), asserting that nothing is
// compiled again.

// freshHome is a new home with no plugins and an empty compilation cache.
func freshHome(t *testing.T) string {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	if code, _, errOut := runCLI(t, "init", "--home", home, "--unencrypted-key"); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	return home
}

// sealedEntries lists the compiled entries in the home's cache.
func sealedEntries(t *testing.T, cfg *config.Config) []string {
	t.Helper()
	entries, err := filepath.Glob(filepath.Join(pluginhost.CacheDir(cfg), "apconnect-sealed-v1", "*.entry"))
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

// enable appends a [[plugins]] entry to the home's config and loads it.
func enable(t *testing.T, home, entry string) *config.Config {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(home, config.FileName), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("\n" + entry); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// assertWarm loads the home's plugins as `apconnect mcp` does and fails
// unless every one loads with its compiled code from the cache.
func assertWarm(t *testing.T, cfg *config.Config) {
	t.Helper()
	before := sealedEntries(t, cfg)
	set := pluginhost.Load(context.Background(), cfg, pluginhost.Options{})
	defer set.Close(context.Background())
	for _, e := range set.Entries {
		if e.Plugin == nil {
			t.Fatalf("%s: %v", e.Config.Name, e.Err)
		}
		if !e.Plugin.FromCache() {
			t.Errorf("%s: the load after enabling it compiled it again", e.Config.Name)
		}
	}
	if after := sealedEntries(t, cfg); strings.Join(after, ",") != strings.Join(before, ",") {
		t.Errorf("the warm load changed the cache: %v, then %v", before, after)
	}
}

// `plugin inspect --home` compiles into that home's cache; the entry it
// prints, once in the config, loads without compiling. The cache does not
// care about the guest's language: the C hello compiles in a fraction of
// the Go one's time under -race (a minute for three Go compilations).
func TestInspectWarmsTheHomeCache(t *testing.T) {
	t.Parallel()
	home := freshHome(t)
	cfg, err := config.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	if got := sealedEntries(t, cfg); len(got) != 0 {
		t.Fatalf("a fresh home has cache entries: %v", got)
	}
	wasm := plugintest.BuildC(t, "../../examples/plugins/hello_c")
	code, out, errOut := runCLI(t, "plugin", "inspect", "--home", home, "--json", wasm)
	if code != 0 {
		t.Fatalf("inspect: %d %s", code, errOut)
	}
	var ins inspection
	if err := json.Unmarshal([]byte(out), &ins); err != nil {
		t.Fatal(err)
	}
	if got := sealedEntries(t, cfg); len(got) != 1 {
		t.Fatalf("after inspect the home's cache holds %v, want one entry", got)
	}
	assertWarm(t, enable(t, home, ins.Config))

	// $APCONNECT_HOME names the home when --home is absent.
	other := freshHome(t)
	if code, _, errOut := runCLIEnv(t, map[string]string{config.EnvHome: other}, "plugin", "inspect", wasm); code != 0 {
		t.Fatalf("inspect with %s: %s", config.EnvHome, errOut)
	}
	otherCfg, err := config.Load(other)
	if err != nil {
		t.Fatal(err)
	}
	if got := sealedEntries(t, otherCfg); len(got) != 1 {
		t.Fatalf("inspect with %s=%s: the home's cache holds %v", config.EnvHome, other, got)
	}
	// So does the default home, $XDG_CONFIG_HOME/apconnect, when it has a
	// config; without one the user cache directory is used.
	xdg := t.TempDir()
	if code, _, errOut := runCLI(t, "init", "--home", filepath.Join(xdg, "apconnect"), "--unencrypted-key"); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	xdgCfg, err := config.Load(filepath.Join(xdg, "apconnect"))
	if err != nil {
		t.Fatal(err)
	}
	userCache := t.TempDir()
	if code, _, errOut := runCLIEnv(t, map[string]string{"XDG_CONFIG_HOME": xdg, "XDG_CACHE_HOME": userCache}, "plugin", "inspect", wasm); code != 0 {
		t.Fatalf("inspect with XDG_CONFIG_HOME: %s", errOut)
	}
	if got := sealedEntries(t, xdgCfg); len(got) != 1 {
		t.Fatalf("inspect with the default home: its cache holds %v", got)
	}
	if entries, _ := os.ReadDir(userCache); len(entries) != 0 {
		t.Fatalf("inspect with a default home also filled the user cache directory: %v", entries)
	}

	// --home names the cache: it excludes --cache and --no-cache, and a
	// home without a config is an error, not a silent fallback.
	if code, _, errOut := runCLI(t, "plugin", "inspect", "--home", home, "--no-cache", wasm); code != 2 || !strings.Contains(errOut, "excludes") {
		t.Fatalf("--home with --no-cache: %d %s", code, errOut)
	}
	if code, _, errOut := runCLI(t, "plugin", "inspect", "--home", filepath.Join(t.TempDir(), "none"), wasm); code != 1 || !strings.Contains(errOut, "apconnect init") {
		t.Fatalf("--home without a config: %d %s", code, errOut)
	}
}

// `apconnect doctor` on a fresh home compiles each enabled plugin into the
// home's cache and says so; the next doctor and the next load compile
// nothing.
func TestDoctorWarmsTheHomeCache(t *testing.T) {
	t.Parallel()
	home := freshHome(t)
	wasm := plugintest.BuildC(t, "../../examples/plugins/hello_c")
	code, out, errOut := runCLI(t, "plugin", "inspect", "--no-cache", "--json", wasm)
	if code != 0 {
		t.Fatalf("inspect: %s", errOut)
	}
	var ins inspection
	if err := json.Unmarshal([]byte(out), &ins); err != nil {
		t.Fatal(err)
	}
	cfg := enable(t, home, ins.Config)
	if got := sealedEntries(t, cfg); len(got) != 0 {
		t.Fatalf("inspect --no-cache filled the home's cache: %v", got)
	}
	doctor := func() string {
		t.Helper()
		_, out, _ := runCLI(t, "doctor", "--home", home, "--json")
		var cs checks
		if err := json.Unmarshal([]byte(out), &cs); err != nil {
			t.Fatalf("doctor --json: %v\n%s", err, out)
		}
		for _, c := range cs {
			if c.Name == "plugin hello_c" {
				if c.Status != statusOK {
					t.Fatalf("doctor: %+v", c)
				}
				return c.Detail
			}
		}
		t.Fatalf("doctor has no row for the plugin:\n%s", out)
		return ""
	}
	if d := doctor(); !strings.Contains(d, "(compiled into the cache)") {
		t.Fatalf("the first doctor: %s", d)
	}
	if got := sealedEntries(t, cfg); len(got) != 1 {
		t.Fatalf("after doctor the home's cache holds %v, want one entry", got)
	}
	if d := doctor(); !strings.Contains(d, "(compiled code from the cache)") {
		t.Fatalf("the second doctor: %s", d)
	}
	assertWarm(t, cfg)
}
