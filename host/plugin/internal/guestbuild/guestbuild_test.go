package guestbuild

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// TestReproducibleBuilds builds the Rust and C hello examples from two
// copies of the SDK and the example at different paths (the Rust SDK not
// cached) and from the repository: the three modules of each language must
// have the same SHA-256, which is what an operator pins.
func TestReproducibleBuilds(t *testing.T) {
	for _, tc := range []struct {
		lang    Lang
		example string
	}{{Rust, "hello_rust"}, {C, "hello_c"}} {
		t.Run(string(tc.lang), func(t *testing.T) {
			t.Parallel()
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
			var wg sync.WaitGroup
			sums := make([]string, 3)
			errs := make([]error, 3)
			for i := range sums {
				wg.Add(1)
				go func() {
					defer wg.Done()
					s, dir := script, example
					if i > 0 { // a copy of both, at a path of its own
						root := filepath.Join(t.TempDir(), "tree"+string(rune('a'+i)), "deeper")
						copyDir(t, sdk, filepath.Join(root, "sdk-guest", string(tc.lang)))
						copyDir(t, example, filepath.Join(root, "plugin", tc.example))
						s, dir = filepath.Join(root, "sdk-guest", string(tc.lang), "build.sh"), filepath.Join(root, "plugin", tc.example)
					}
					env := []string{rustSDKCacheEnv + "="} // compile the SDK too
					wasm, err := RunScript(s, dir, env)
					sum := sha256.Sum256(wasm)
					sums[i], errs[i] = hex.EncodeToString(sum[:]), err
				}()
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			if sums[0] != sums[1] || sums[1] != sums[2] {
				t.Errorf("three builds of the same sources, three digests: %v", sums)
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
