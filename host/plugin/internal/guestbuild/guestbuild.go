// Package guestbuild compiles the Rust and C plugins of the repository with
// the SDKs' own build scripts (sdk-guest/rust/build.sh, sdk-guest/c/build.sh,
// the ones `make build` uses), once per directory per process. It serves
// plugintest.BuildRust and plugintest.BuildC.
package guestbuild

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// Lang is a guest language with an SDK in sdk-guest/.
type Lang string

// The languages with a build script.
const (
	Rust Lang = "rust"
	C    Lang = "c"
)

// RequireEnv, when set to anything but "" or "0", turns a missing toolchain
// into a failure instead of a skip; .ci/run sets it, and so does CI=true.
const RequireEnv = "APCONNECT_REQUIRE_TOOLCHAINS"

// rustSDKCacheEnv names the directory where sdk-guest/rust/build.sh keeps
// the compiled SDK between builds.
const rustSDKCacheEnv = "APCONNECT_RUST_SDK_CACHE"

// ErrNoToolchain is returned (wrapped, with what to install) when the
// language's toolchain is not on this machine.
var ErrNoToolchain = errors.New("toolchain not installed")

// Required reports whether a missing toolchain must fail the tests: under
// CI, or when RequireEnv is set.
func Required() bool {
	v := os.Getenv(RequireEnv)
	return v != "" && v != "0" || os.Getenv("CI") == "true"
}

type build struct {
	once sync.Once
	wasm []byte
	err  error
}

var (
	mu     sync.Mutex
	builds = map[string]*build{}
	checks = map[Lang]*build{}
)

// Script returns the path of the language's build script, found by walking
// up from the working directory (tests run inside the repository).
func Script(lang Lang) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	rel := filepath.Join("sdk-guest", string(lang), "build.sh")
	for {
		p := filepath.Join(dir, rel)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("guestbuild: no %s above the working directory", rel)
		}
		dir = parent
	}
}

// Check runs the script's --check once per process: nil when the toolchain
// is there, an error wrapping ErrNoToolchain (naming what to install) when
// not.
func Check(lang Lang) error {
	mu.Lock()
	c := checks[lang]
	if c == nil {
		c = &build{}
		checks[lang] = c
	}
	mu.Unlock()
	c.once.Do(func() {
		script, err := Script(lang)
		if err != nil {
			c.err = err
			return
		}
		out, err := exec.Command("bash", script, "--check").CombinedOutput()
		if err != nil {
			c.err = fmt.Errorf("%s plugins: %w: %s", lang, ErrNoToolchain, strings.TrimSpace(string(out)))
		}
	})
	return c.err
}

// Build returns the .wasm bytes of the plugin in dir (or of the one-file
// plugin dir names), building it on the
// first call for that directory. Callers must not modify the result.
func Build(lang Lang, dir string) ([]byte, error) {
	if err := Check(lang); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	key := string(lang) + ":" + abs
	mu.Lock()
	b := builds[key]
	if b == nil {
		b = &build{}
		builds[key] = b
	}
	mu.Unlock()
	b.once.Do(func() { b.wasm, b.err = Run(lang, abs, nil) })
	return b.wasm, b.err
}

// Run builds the plugin in dir with the language's script now (no
// caching), with extra environment variables (CFLAGS, LDFLAGS, …), and
// returns the module.
func Run(lang Lang, dir string, env []string) ([]byte, error) {
	script, err := Script(lang)
	if err != nil {
		return nil, err
	}
	return RunScript(script, dir, env)
}

// RunScript is Run with an explicit script (a copy of the SDK elsewhere).
func RunScript(script, dir string, env []string) ([]byte, error) {
	tmp, err := os.MkdirTemp("", "apconnect-guest-build-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "plugin.wasm")
	cmd := exec.Command("bash", script, dir, out)
	cmd.Env = os.Environ()
	if os.Getenv(rustSDKCacheEnv) == "" {
		// The Rust SDK is compiled once per machine, not once per plugin
		// (about 10 s on a busy 2-core machine); the key covers its sources.
		if base, err := os.UserCacheDir(); err == nil {
			cmd.Env = append(cmd.Env, rustSDKCacheEnv+"="+filepath.Join(base, "apconnect", "rust-sdk"))
		}
	}
	cmd.Env = append(cmd.Env, env...)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("building %s with %s: %v\n%s", dir, script, err, log.String())
	}
	return os.ReadFile(out)
}
