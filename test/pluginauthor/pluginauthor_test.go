// Package pluginauthor follows "Start a plugin outside this repository" in
// docs/PLUGINS.md as a plugin author would: it reads the page's marked
// blocks (files to write, commands to run, the output to expect), puts the
// checkout in place of /path/to/apconnect, and in a temporary directory
// outside the repository writes the files, builds the plugin in Go, Rust
// and C and runs it with the apconnect binary's `plugin call`. The steps
// cannot drift from the page, because the page is the test's input.
//
// A block is marked by the HTML comment line just before its fence:
//
//	<!-- pluginauthor: LANG file PATH -->     a file of LANG's plugin
//	<!-- pluginauthor: LANG run VARIANT -->   one way to build it (bash)
//	<!-- pluginauthor: all run -->            run on every build
//	<!-- pluginauthor: all stdout -->         what that prints
//
// A VARIANT "group/name" is one of several alternatives (cargo with
// rustup's or Debian's toolchain); each other variant is required on its
// own. Without a variant's toolchain the test says so and skips it, except
// under CI (CI=true or APCONNECT_REQUIRE_TOOLCHAINS=1), where every variant
// without a group, and at least one of each group, must run.
package pluginauthor_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// placeholder is what the page writes for the checkout's directory.
const placeholder = "/path/to/apconnect"

// section is the part of docs/PLUGINS.md the blocks belong to.
const section = "## Start a plugin outside this repository"

// langs are the languages the page must cover, each with its build steps.
var langs = []string{"go", "rust", "c"}

var (
	markerRE = regexp.MustCompile(`(?m)^<!--\s*pluginauthor\b.*$`)
	blockRE  = regexp.MustCompile("(?ms)^<!-- pluginauthor: (\\S+) (file|run|stdout)(?: (\\S+))? -->\\n\\n?```[a-z]*\\n(.*?)^```$")
)

// steps are the marked blocks of the page.
type steps struct {
	files  map[string]map[string]string // lang → path → contents
	builds map[string]map[string]string // lang → variant → script
	run    string                       // the script every build runs
	stdout string                       // what it prints
}

func TestPluginAuthorOutsideTheRepository(t *testing.T) {
	t.Parallel()
	root := checkout(t)
	st := readSteps(t, filepath.Join(root, "docs", "PLUGINS.md"), root)

	bin := t.TempDir()
	built := make(chan error, 1)
	go func() { built <- buildApconnect(filepath.Join(bin, "apconnect")) }()
	apconnectBuilt := sync.OnceValue(func() error { return <-built })
	t.Cleanup(func() { apconnectBuilt() }) // before bin is removed, even when every build skips

	for _, lang := range langs {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			for _, group := range variantGroups(st.builds[lang]) {
				var ready []string
				var why []string
				for _, v := range group {
					if err := toolchain(root, lang, v); err != nil {
						why = append(why, fmt.Sprintf("%s: %v", v, err))
						continue
					}
					ready = append(ready, v)
				}
				if len(ready) == 0 {
					g, _, _ := strings.Cut(group[0], "/")
					t.Run(g, func(t *testing.T) { missing(t, strings.Join(why, "; ")) })
					continue
				}
				for _, w := range why {
					t.Logf("not tried (%s builds in its place): %s", strings.Join(ready, ", "), w)
				}
				for _, v := range ready {
					t.Run(v, func(t *testing.T) {
						t.Parallel()
						dir := author(t, root, st.files[lang], st.builds[lang][v])
						if err := apconnectBuilt(); err != nil {
							t.Fatalf("building apconnect: %v", err)
						}
						out := sh(t, dir, st.run, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
						if got, want := strings.TrimRight(out, "\n"), strings.TrimRight(st.stdout, "\n"); got != want {
							t.Errorf("%s printed\n%s\nthe page says\n%s", st.run, got, want)
						}
					})
				}
			}
		})
	}
}

// author makes the plugin's directory in a fresh temporary directory,
// writes the language's files into it and runs one of its builds.
func author(t *testing.T, root string, files map[string]string, build string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "greeter")
	if rel, err := filepath.Rel(root, dir); err == nil && !strings.HasPrefix(rel, "..") {
		t.Fatalf("%s is inside the checkout %s: the steps must work elsewhere", dir, root)
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sh(t, dir, build)
	if _, err := os.Stat(filepath.Join(dir, "greeter.wasm")); err != nil {
		t.Fatalf("the build left no greeter.wasm: %v", err)
	}
	return dir
}

// sh runs script with bash in dir, failing the test with its output when
// it fails, and returns its stdout.
func sh(t *testing.T, dir, script string, env ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(authorEnv(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("in %s:\n%s\n%v\nstdout:\n%s\nstderr:\n%s", dir, script, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// authorEnv is this process's environment less what would send a build
// elsewhere than the page says (cargo's target directory), plus the cache
// of the Rust SDK's script that the repository's own tests use.
func authorEnv() []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "CARGO_TARGET_DIR=") || strings.HasPrefix(kv, "CARGO_BUILD_TARGET_DIR=")
	})
	if os.Getenv("APCONNECT_RUST_SDK_CACHE") == "" {
		if base, err := os.UserCacheDir(); err == nil {
			env = append(env, "APCONNECT_RUST_SDK_CACHE="+filepath.Join(base, "apconnect", "rust-sdk"))
		}
	}
	return env
}

// checkout is the root of this repository (the module apconnect).
func checkout(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || !bytes.HasPrefix(mod, []byte("module apconnect\n")) {
		t.Fatalf("%s is not the apconnect checkout (%v)", root, err)
	}
	return root
}

// readSteps reads the marked blocks of the page's section, with the
// checkout in place of the placeholder, and checks that every language has
// files and a build and that the run and its output are there.
func readSteps(t *testing.T, page, root string) *steps {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "\n"+section+"\n")
	if start < 0 {
		t.Fatalf("%s has no %q", page, section)
	}
	text = text[start+1:]
	if end := strings.Index(text, "\n## "); end >= 0 {
		text = text[:end+1]
	}
	markers := markerRE.FindAllString(text, -1)
	blocks := blockRE.FindAllStringSubmatch(text, -1)
	if len(markers) != len(blocks) {
		t.Fatalf("%s: %d pluginauthor markers but %d marked blocks: each marker must be the line before a fenced block", page, len(markers), len(blocks))
	}
	st := &steps{files: map[string]map[string]string{}, builds: map[string]map[string]string{}}
	for _, m := range blocks {
		lang, kind, arg, body := m[1], m[2], m[3], strings.ReplaceAll(m[4], placeholder, root)
		switch {
		case lang == "all" && kind == "run" && arg == "" && st.run == "":
			st.run = body
		case lang == "all" && kind == "stdout" && arg == "" && st.stdout == "":
			st.stdout = body
		case slices.Contains(langs, lang) && kind == "file" && arg != "" && st.files[lang][arg] == "":
			if st.files[lang] == nil {
				st.files[lang] = map[string]string{}
			}
			st.files[lang][arg] = body
		case slices.Contains(langs, lang) && kind == "run" && arg != "" && st.builds[lang][arg] == "":
			if st.builds[lang] == nil {
				st.builds[lang] = map[string]string{}
			}
			st.builds[lang][arg] = body
		default:
			t.Fatalf("%s: unexpected or repeated marker %q", page, strings.SplitN(m[0], "\n", 2)[0])
		}
	}
	for _, lang := range langs {
		if len(st.files[lang]) == 0 || len(st.builds[lang]) == 0 {
			t.Fatalf("%s: %s has no files or no build (files %d, builds %d)", page, lang, len(st.files[lang]), len(st.builds[lang]))
		}
	}
	if st.run == "" || st.stdout == "" {
		t.Fatalf("%s: no \"all run\" or \"all stdout\" block", page)
	}
	if !strings.Contains(st.run, "apconnect plugin call ") {
		t.Fatalf("%s: the run block does not call apconnect plugin call: %s", page, st.run)
	}
	return st
}

// variantGroups sorts a language's builds into groups of alternatives:
// "cargo/wasm32-wasi" and "cargo/wasm32-wasip1" form one, every variant
// without a "/" is a group of its own.
func variantGroups(builds map[string]string) [][]string {
	byGroup := map[string][]string{}
	for v := range builds {
		g, _, _ := strings.Cut(v, "/")
		byGroup[g] = append(byGroup[g], v)
	}
	var out [][]string
	for _, g := range slices.Sorted(func(yield func(string) bool) {
		for g := range byGroup {
			if !yield(g) {
				return
			}
		}
	}) {
		slices.Sort(byGroup[g])
		out = append(out, byGroup[g])
	}
	return out
}

// errNoToolchain marks a toolchain that is not installed.
var errNoToolchain = errors.New("toolchain not installed")

// toolchain reports whether the variant's build can run on this machine:
// nil, or an error naming what is missing.
func toolchain(root, lang, variant string) error {
	switch lang + " " + variant {
	case "go go":
		if _, err := exec.LookPath("go"); err != nil {
			return fmt.Errorf("%w: no go on PATH", errNoToolchain)
		}
		return nil
	case "rust cargo/wasm32-wasip1":
		rustc := "rustc" // the one cargo runs
		if v := os.Getenv("RUSTC"); v != "" {
			rustc = v
		}
		return cargoTarget("cargo", rustc, "wasm32-wasip1", "rustup target add wasm32-wasip1")
	case "rust cargo/wasm32-wasi":
		return cargoTarget("/usr/bin/cargo", "/usr/bin/rustc", "wasm32-wasi", "apt-get install cargo rustc libstd-rust-dev-wasm32")
	case "rust script":
		return script(root, "rust")
	case "c clang":
		// the block runs clang itself, whatever CC says
		return script(root, "c", "CC=clang")
	case "c script":
		return script(root, "c")
	}
	return fmt.Errorf("the test knows no toolchain for the %s build %q of docs/PLUGINS.md", lang, variant)
}

// cargoTarget checks for cargo and a rustc with the standard library of
// target.
func cargoTarget(cargo, rustc, target, install string) error {
	if _, err := exec.LookPath(cargo); err != nil {
		return fmt.Errorf("%w: no %s (%s)", errNoToolchain, cargo, install)
	}
	sysroot, err := exec.Command(rustc, "--print", "sysroot").Output()
	if err != nil {
		return fmt.Errorf("%w: %s --print sysroot: %v (%s)", errNoToolchain, rustc, err, install)
	}
	lib := filepath.Join(strings.TrimSpace(string(sysroot)), "lib", "rustlib", target, "lib")
	if _, err := os.Stat(lib); err != nil {
		return fmt.Errorf("%w: %s has no standard library for %s (%s)", errNoToolchain, rustc, target, install)
	}
	return nil
}

// script runs the --check of the language's SDK build script, with env
// added to this process's environment.
func script(root, lang string, env ...string) error {
	cmd := exec.Command("bash", filepath.Join(root, "sdk-guest", lang, "build.sh"), "--check")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: %s", errNoToolchain, strings.TrimSpace(string(out)))
	}
	return nil
}

// missing skips the test of a build whose toolchain is not installed, or
// fails it under CI, where every toolchain must be.
func missing(t *testing.T, why string) {
	t.Helper()
	if required() {
		t.Fatalf("%s (CI and APCONNECT_REQUIRE_TOOLCHAINS=1 build every language)", why)
	}
	t.Skipf("%s (CI installs it; set APCONNECT_REQUIRE_TOOLCHAINS=1 to make this a failure)", why)
}

// required reports whether a missing toolchain fails the test, as for
// the repository's own Rust and C plugins.
func required() bool {
	v := os.Getenv("APCONNECT_REQUIRE_TOOLCHAINS")
	return v != "" && v != "0" || os.Getenv("CI") == "true"
}

// buildApconnect builds the binary the page's run block calls. It is built
// without -race even under `go test -race` (a Go plugin's first load takes
// about ten times as long in a race-enabled binary, and the binary is
// exercised here only as an author uses it) and with -trimpath, as
// `make build` builds it, so the compiled packages come from the build
// cache.
func buildApconnect(out string) error {
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "apconnect/cmd/apconnect")
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%v\n%s", err, log.String())
	}
	return nil
}
