package plugintest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// WatTool is the assembler BuildWat runs: wat2wasm from WABT (Debian and
// Ubuntu package "wabt"; .ci/run installs it).
const WatTool = "wat2wasm"

// BuildWat assembles the WebAssembly text file at path with wat2wasm and
// returns the path of the .wasm file, in t.TempDir(). flags go to wat2wasm
// before the file ("--no-check" writes a module that breaks validation on
// purpose). A missing wat2wasm fails the test with how to install it: the
// hostile-plugin corpus is part of the test suite and is never skipped.
func BuildWat(t testing.TB, path string, flags ...string) string {
	t.Helper()
	tool, err := exec.LookPath(WatTool)
	if err != nil {
		t.Fatalf("plugintest: %s is needed to assemble %s and is not installed: "+
			"install WABT (Debian/Ubuntu: apt-get install wabt; macOS: brew install wabt)", WatTool, path)
	}
	out := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))+".wasm")
	args := append(append([]string{}, flags...), "-o", out, path)
	var stderr bytes.Buffer
	cmd := exec.Command(tool, args...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("plugintest: %s %s: %v\n%s", WatTool, strings.Join(args, " "), err, stderr.String())
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatalf("plugintest: %s wrote no module: %v", WatTool, err)
	}
	return out
}
