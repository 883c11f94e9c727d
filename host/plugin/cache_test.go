package plugin_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"apconnect/host/internal/fileowner"
	"apconnect/host/plugin"
	"apconnect/host/plugin/plugintest"
)

// These tests attack the on-disk compilation cache (Options.CacheDir) as
// someone who can write files in the home, but cannot read its private
// files, would: entries are native code that runs in apconnect's process.

// loadCached loads the module at wasm through a Runtime with CacheDir dir
// and returns what its ping tool answers.
func loadCached(t *testing.T, dir, wasm string) string {
	t.Helper()
	rt, err := plugin.NewRuntime(ctx(), plugin.Options{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx())
	data, err := os.ReadFile(wasm)
	if err != nil {
		t.Fatal(err)
	}
	p, err := rt.Load(ctx(), wasm, plugin.Digest(data), plugin.AllGrants(), plugin.Limits{})
	if err != nil {
		t.Fatalf("loading %s with cache %s: %v", filepath.Base(wasm), dir, err)
	}
	res, err := p.CallTool(ctx(), "ping", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Content[0].Text
}

// cacheEntries lists the files of a cache directory that hold compiled
// code (wazero's entries, sealed).
func cacheEntries(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, f := range cacheFiles(t, dir) {
		if strings.HasSuffix(f, ".entry") {
			out = append(out, f)
		}
	}
	return out
}

// cacheFiles lists every file of a cache directory but the key and
// temporary files: compiled code, descriptions and rewritten modules.
func cacheFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() != "key" && !strings.HasPrefix(d.Name(), ".") {
			out = append(out, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func oneEntry(t *testing.T, dir string) string {
	t.Helper()
	entries := cacheEntries(t, dir)
	if len(entries) != 1 {
		t.Fatalf("want one cache entry in %s, found %v", dir, entries)
	}
	return entries[0]
}

// An entry copied over another module's runs the other module's machine
// code on the next start unless the cache binds entries to their module.
func TestCacheEntryOfAnotherModuleIsNotRun(t *testing.T) {
	honest := plugintest.BuildWat(t, "testdata/cache/honest.wat")
	swapped := plugintest.BuildWat(t, "testdata/cache/swapped.wat")
	dirH, dirS := t.TempDir(), t.TempDir()
	if got := loadCached(t, dirH, honest); got != "pong" {
		t.Fatalf("honest answers %q", got)
	}
	if got := loadCached(t, dirS, swapped); got != "EVIL" {
		t.Fatalf("swapped answers %q", got)
	}
	// The attacker copies the other module's entry over this one's.
	forged, err := os.ReadFile(oneEntry(t, dirS))
	if err != nil {
		t.Fatal(err)
	}
	target := oneEntry(t, dirH)
	if err := os.WriteFile(target, forged, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := loadCached(t, dirH, honest); got != "pong" {
		t.Fatalf("after the forgery the pinned module answers %q: it ran another module's code", got)
	}
	// The bad entry was replaced by a good one, which a later load uses.
	after, err := os.ReadFile(oneEntry(t, dirH))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(after, forged) {
		t.Error("the forged entry is still in the cache")
	}
	if got := loadCached(t, dirH, honest); got != "pong" {
		t.Fatalf("third load: %q", got)
	}
	if again, _ := os.ReadFile(oneEntry(t, dirH)); !bytes.Equal(again, after) {
		t.Error("a valid entry was rewritten instead of used")
	}
}

// A corrupt entry is recompiled, not a refused plugin.
func TestCorruptCacheEntryIsRecompiled(t *testing.T) {
	honest := plugintest.BuildWat(t, "testdata/cache/honest.wat")
	dir := t.TempDir()
	loadCached(t, dir, honest)
	entry := oneEntry(t, dir)
	data, err := os.ReadFile(entry)
	if err != nil {
		t.Fatal(err)
	}
	for _, corrupt := range [][]byte{
		flipByte(data, len(data)/2),
		data[:len(data)/3],
		{},
	} {
		if err := os.WriteFile(entry, corrupt, 0o600); err != nil {
			t.Fatal(err)
		}
		if got := loadCached(t, dir, honest); got != "pong" {
			t.Fatalf("with a corrupt entry: %q", got)
		}
		if fixed, _ := os.ReadFile(oneEntry(t, dir)); bytes.Equal(fixed, corrupt) {
			t.Error("the corrupt entry was kept")
		}
	}
}

func flipByte(b []byte, i int) []byte {
	c := bytes.Clone(b)
	c[i] ^= 0x55
	return c
}

// An entry sealed in another cache (another home's key) is not trusted.
func TestCacheEntryFromAnotherCacheIsRecompiled(t *testing.T) {
	honest := plugintest.BuildWat(t, "testdata/cache/honest.wat")
	mine, theirs := t.TempDir(), t.TempDir()
	loadCached(t, mine, honest)
	loadCached(t, theirs, honest)
	foreign, err := os.ReadFile(oneEntry(t, theirs))
	if err != nil {
		t.Fatal(err)
	}
	entry := oneEntry(t, mine)
	if err := os.WriteFile(entry, foreign, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := loadCached(t, mine, honest); got != "pong" {
		t.Fatalf("%q", got)
	}
	if kept, _ := os.ReadFile(entry); bytes.Equal(kept, foreign) {
		t.Error("an entry sealed with another key was accepted")
	}
}

// The key that seals entries must be this user's, private and whole;
// otherwise the cache is not used.
func TestCacheKeyMustBePrivate(t *testing.T) {
	honest := plugintest.BuildWat(t, "testdata/cache/honest.wat")
	for _, tc := range []struct {
		name   string
		break_ func(key string) error
		frag   string
	}{
		{"readable by others", func(key string) error { return os.Chmod(key, 0o644) }, "mode 0644"},
		{"short", func(key string) error { return os.WriteFile(key, []byte("short"), 0o600) }, "is 5 bytes"},
		{"a directory", func(key string) error {
			if err := os.Remove(key); err != nil {
				return err
			}
			return os.Mkdir(key, 0o700)
		}, "not a regular file"},
		{"another user's", func(key string) error { return chownForeign(t, key) }, "owned by uid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			loadCached(t, dir, honest)
			key := filepath.Join(dir, "apconnect-sealed-v1", "key")
			if err := tc.break_(key); err != nil {
				t.Fatal(err)
			}
			_, err := plugin.NewRuntime(ctx(), plugin.Options{CacheDir: dir})
			if err == nil || !strings.Contains(err.Error(), tc.frag) {
				t.Fatalf("want a refusal naming %q, got %v", tc.frag, err)
			}
		})
	}
}

// chownForeign makes path look owned by another user: chown as root,
// otherwise by making the checks see this process as another user for the
// rest of the test.
func chownForeign(t *testing.T, path string) error {
	if os.Getuid() == 0 {
		return os.Chown(path, 65534, 65534)
	}
	old := fileowner.CurrentUID
	fileowner.CurrentUID = func() int { return os.Getuid() + 1 }
	t.Cleanup(func() { fileowner.CurrentUID = old })
	return nil
}

// Entries no load used for 30 days are removed when a Runtime opens the
// cache; used ones are kept.
func TestUnusedCacheEntriesExpire(t *testing.T) {
	honest := plugintest.BuildWat(t, "testdata/cache/honest.wat")
	swapped := plugintest.BuildWat(t, "testdata/cache/swapped.wat")
	dir := t.TempDir()
	loadCached(t, dir, honest)
	old := oneEntry(t, dir)
	loadCached(t, dir, swapped)
	long := time.Now().Add(-40 * 24 * time.Hour)
	for _, e := range cacheFiles(t, dir) {
		if err := os.Chtimes(e, long, long); err != nil {
			t.Fatal(err)
		}
	}
	loadCached(t, dir, honest) // uses (touches) its entries, after tidying
	entries := cacheEntries(t, dir)
	if len(entries) != 1 || entries[0] != old {
		t.Fatalf("entries after expiry: %v (want only %s, rewritten)", entries, old)
	}
	// The swapped module's description and rewritten module went too.
	honestData, _ := os.ReadFile(honest)
	for _, f := range cacheFiles(t, dir) {
		if !strings.HasSuffix(f, ".entry") && !strings.HasPrefix(filepath.Base(f), plugin.Digest(honestData)+".") {
			t.Errorf("%s outlived its 30 days", f)
		}
	}
	loadCached(t, dir, honest)
	if info, err := os.Stat(old); err != nil || time.Since(info.ModTime()) > time.Hour {
		t.Fatalf("a used entry was not touched: %v %v", info, err)
	}
}

// FromCache tells a load that compiled from one that used a sealed entry:
// the first load through a fresh cache compiles, the next uses the entry,
// and a load after the entry was damaged compiles again.
func TestFromCacheReportsWhetherALoadCompiled(t *testing.T) {
	honest := plugintest.BuildWat(t, "testdata/cache/honest.wat")
	data, err := os.ReadFile(honest)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	load := func() bool {
		t.Helper()
		rt, err := plugin.NewRuntime(ctx(), plugin.Options{CacheDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		defer rt.Close(ctx())
		p, err := rt.Load(ctx(), honest, plugin.Digest(data), plugin.AllGrants(), plugin.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Ready(ctx()); err != nil {
			t.Fatal(err)
		}
		return p.FromCache()
	}
	if load() {
		t.Fatal("the first load through an empty cache says it compiled nothing")
	}
	if !load() {
		t.Fatal("the second load compiled again instead of using the sealed entry")
	}
	entry := oneEntry(t, dir)
	sealed, err := os.ReadFile(entry)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(entry, flipByte(sealed, len(sealed)/2), 0o600); err != nil {
		t.Fatal(err)
	}
	if load() {
		t.Fatal("a load with a damaged entry says it came from the cache")
	}
	rt, err := plugin.NewRuntime(ctx(), plugin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx())
	p, err := rt.Load(ctx(), honest, plugin.Digest(data), plugin.AllGrants(), plugin.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if p.FromCache() {
		t.Fatal("a load with an in-memory cache says it came from the on-disk cache")
	}
}
