package guestbuild

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestReproducibleBuilds builds the Rust and C hello examples from the
// repository and from a copy of the SDK and the example at another path
// (the Rust SDK compiled anew, not taken from the cache): the two modules of
// each language must have the same SHA-256, which is what an operator pins.
// The builds run one after the other: other tests need the CPU too.
func TestReproducibleBuilds(t *testing.T) {
	for _, tc := range []struct {
		lang    Lang
		example string
	}{{Rust, "hello_rust"}, {C, "hello_c"}} {
		t.Run(string(tc.lang), func(t *testing.T) {
			if err := Check(tc.lang); err != nil {
				if errors.Is(err, ErrNoToolchain) && !Required() {
					t.Skipf("%v (CI installs it)", err)
				}
				t.Fatal(err)
			}
			script, err := Script(tc.lang)
			if err != nil {
				t.Fatal(err)
			}
			sdk := filepath.Dir(script)
			example := filepath.Join(sdk, "..", "..", "examples", "plugins", tc.example)
			here, err := RunScript(script, example, nil)
			if err != nil {
				t.Fatal(err)
			}
			root := filepath.Join(t.TempDir(), "elsewhere", "deeper")
			copyDir(t, sdk, filepath.Join(root, "sdk-guest", string(tc.lang)))
			copyDir(t, example, filepath.Join(root, "plugin", tc.example))
			there, err := RunScript(filepath.Join(root, "sdk-guest", string(tc.lang), "build.sh"),
				filepath.Join(root, "plugin", tc.example), []string{rustSDKCacheEnv + "="})
			if err != nil {
				t.Fatal(err)
			}
			a, b := sha256.Sum256(here), sha256.Sum256(there)
			if a != b {
				t.Errorf("the same sources built in two places: %s and %s", hex.EncodeToString(a[:]), hex.EncodeToString(b[:]))
			}
		})
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-R", from, to).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
}

// TestSDKUnitTests runs the Rust and C SDKs' own unit tests natively (the
// strict JSON parsers, the closed encoders, every operation's envelope):
// `build.sh --test`.
func TestSDKUnitTests(t *testing.T) {
	for _, lang := range []Lang{Rust, C} {
		t.Run(string(lang), func(t *testing.T) {
			t.Parallel()
			if err := Check(lang); err != nil {
				if errors.Is(err, ErrNoToolchain) && !Required() {
					t.Skipf("%v (CI installs it)", err)
				}
				t.Fatal(err)
			}
			script, err := Script(lang)
			if err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("bash", script, "--test").CombinedOutput(); err != nil {
				t.Fatalf("%s --test: %v\n%s", script, err, out)
			}
		})
	}
}
