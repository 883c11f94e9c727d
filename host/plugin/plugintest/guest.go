package plugintest

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"apconnect/host/plugin"
	"apconnect/host/plugin/internal/guestbuild"
)

// BuildRust compiles the Rust plugin crate in dir (dir/src/lib.rs, with
// the SDK of sdk-guest/rust) with sdk-guest/rust/build.sh, the script
// `make build` uses, and returns the path of the .wasm file, a copy in
// t.TempDir(). The build runs once per directory per test binary.
//
// Without the toolchain (Debian's rustc and libstd-rust-dev-wasm32) the
// test is skipped with a message naming the packages, except under CI or
// with APCONNECT_REQUIRE_TOOLCHAINS=1, where it fails: CI always builds
// and runs the Rust and C plugins.
func BuildRust(t testing.TB, dir string) string {
	t.Helper()
	return buildGuest(t, guestbuild.Rust, dir)
}

// BuildC is BuildRust for a C plugin: every .c file of dir and the SDK of
// sdk-guest/c, built with sdk-guest/c/build.sh (Debian's clang, lld,
// wasi-libc and libclang-rt-14-dev-wasm32).
func BuildC(t testing.TB, dir string) string {
	t.Helper()
	return buildGuest(t, guestbuild.C, dir)
}

// RequireToolchain skips (or, under CI, fails) the test unless the
// language's toolchain is installed.
func RequireToolchain(t testing.TB, lang string) {
	t.Helper()
	if err := guestbuild.Check(guestbuild.Lang(lang)); err != nil {
		missing(t, err)
	}
}

func missing(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, guestbuild.ErrNoToolchain) && !guestbuild.Required() {
		t.Skipf("plugintest: %v (CI installs it; set %s=1 to make this a failure)", err, guestbuild.RequireEnv)
	}
	t.Fatalf("plugintest: %v", err)
}

func buildGuest(t testing.TB, lang guestbuild.Lang, dir string) string {
	t.Helper()
	wasm, err := guestbuild.Build(lang, dir)
	if err != nil {
		missing(t, err)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(filepath.Clean(dir))+".wasm")
	if err := os.WriteFile(out, wasm, 0o600); err != nil {
		t.Fatalf("plugintest: %v", err)
	}
	precompile(out, plugin.Digest(wasm))
	return out
}
