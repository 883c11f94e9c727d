// Package gobuild compiles Go plugin modules for the apconnect plugin ABI
// (GOOS=wasip1 GOARCH=wasm -buildmode=c-shared), once per directory per
// process. It serves plugintest and the plugin package's own tests.
package gobuild

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

type build struct {
	once sync.Once
	wasm []byte
	err  error
}

var (
	mu     sync.Mutex
	builds = map[string]*build{}
)

// Error is a failed build with the compiler's output.
type Error struct {
	Dir string
	Log string
	Err error
}

// Error includes the build log.
func (e *Error) Error() string { return "building " + e.Dir + ": " + e.Err.Error() + "\n" + e.Log }

// Unwrap returns the command's error.
func (e *Error) Unwrap() error { return e.Err }

// Build returns the .wasm bytes of the Go module in dir, building it on the
// first call for that directory. Callers must not modify the result.
func Build(dir string) ([]byte, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	mu.Lock()
	b := builds[abs]
	if b == nil {
		b = &build{}
		builds[abs] = b
	}
	mu.Unlock()
	b.once.Do(func() { b.wasm, b.err = compile(abs) })
	return b.wasm, b.err
}

func compile(dir string) ([]byte, error) {
	tmp, err := os.MkdirTemp("", "apconnect-plugin-build-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	goTool, err := exec.LookPath("go")
	if err != nil {
		return nil, &Error{Dir: dir, Err: err, Log: "the go command is not on PATH"}
	}
	out := filepath.Join(tmp, "plugin.wasm")
	cmd := exec.Command(goTool, "build", "-buildmode=c-shared", "-trimpath", "-buildvcs=false",
		"-ldflags=-s -w", "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0", "GOWORK=off")
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Run(); err != nil {
		return nil, &Error{Dir: dir, Err: err, Log: log.String()}
	}
	return os.ReadFile(out)
}
