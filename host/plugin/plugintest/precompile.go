package plugintest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
)

// Under the race detector wazero's compiler is instrumented too, and
// compiling a Go plugin takes over 15 s instead of about 1.5 s. Build
// therefore has a helper built without the race detector
// (internal/precompile) compile each new module into the shared on-disk
// cache first; the test binary then only reads it. Any failure (no disk
// cache, no go command, no helper source) leaves the compilation to the
// test binary, as without the helper.

var (
	helperOnce sync.Once
	helperPath string

	precompileMu   sync.Mutex
	precompileDone = map[string]*sync.Once{}
)

// precompile compiles the module at path into the shared cache with the
// helper, once per module per test binary, when it is worth it.
func precompile(path, digest string) {
	if !raceEnabled || sharedDir == "" {
		return
	}
	precompileMu.Lock()
	once := precompileDone[digest]
	if once == nil {
		once = &sync.Once{}
		precompileDone[digest] = once
	}
	precompileMu.Unlock()
	once.Do(func() {
		if helper := buildHelper(); helper != "" {
			// A failure is a cache miss: the test binary compiles the module.
			_ = exec.Command(helper, "-cache", sharedDir, path).Run()
		}
	})
}

// wazeroVersion is the version this binary's wazero keys its disk cache
// with: the rule of wazero's internal/version.GetWazeroVersion, which reads
// the build information (test binaries of non-main packages carry none of
// their dependencies, so there it is "dev").
func wazeroVersion() string {
	v := ""
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if strings.Contains(dep.Path, "github.com/tetratelabs/wazero") {
				v = dep.Version
			}
		}
		if v == "" || v == "(devel)" {
			v = info.Main.Version
		}
	}
	if v == "" || v == "(devel)" {
		v = "dev"
	}
	return v
}

// buildHelper builds internal/precompile without the race detector, with
// this binary's wazero version, into the cache directory, once per test
// binary, and returns its path ("" when it cannot).
func buildHelper() string {
	helperOnce.Do(func() {
		_, file, _, ok := runtime.Caller(0)
		if !ok {
			return
		}
		src := filepath.Join(filepath.Dir(file), "..", "internal", "precompile")
		if _, err := os.Stat(filepath.Join(src, "main.go")); err != nil {
			return
		}
		goTool, err := exec.LookPath("go")
		if err != nil {
			return
		}
		bin := filepath.Join(sharedDir, "bin")
		if err := os.MkdirAll(bin, 0o700); err != nil {
			return
		}
		version := wazeroVersion()
		tmp, err := os.CreateTemp(bin, "precompile-*.tmp")
		if err != nil {
			return
		}
		tmp.Close()
		cmd := exec.Command(goTool, "build", "-o", tmp.Name(),
			"-ldflags=-X github.com/tetratelabs/wazero/internal/version.version="+version, ".")
		cmd.Dir = src
		if err := cmd.Run(); err != nil {
			os.Remove(tmp.Name())
			return
		}
		// Concurrent test binaries each build their own copy and rename
		// it into place; a running copy is never overwritten in place.
		final := filepath.Join(bin, "precompile-"+strings.Map(safeRune, version))
		if runtime.GOOS == "windows" {
			final += ".exe"
		}
		if err := os.Rename(tmp.Name(), final); err != nil {
			os.Remove(tmp.Name())
			return
		}
		helperPath = final
	})
	return helperPath
}

// safeRune keeps version strings usable in file names.
func safeRune(r rune) rune {
	if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' {
		return r
	}
	return '_'
}
