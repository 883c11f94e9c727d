package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFindsWhatABuildConstraintBreaks: a file without a build constraint
// that uses a unix-only function type-checks for linux and fails for
// windows, naming the file and the symbol, as a cross build would.
func TestFindsWhatABuildConstraintBreaks(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.test/m\n\ngo 1.26\n")
	write("kill.go", "package m\n\nimport \"syscall\"\n\nvar Kill = syscall.Kill\n")
	write("other_windows.go", "package m\n\nvar OnWindows = 1\n")
	t.Chdir(dir)

	n, errs, err := check([]string{"./..."}, "linux", "amd64")
	if err != nil || len(errs) != 0 || n < 2 {
		t.Fatalf("linux: %d packages, errors %v, %v", n, errs, err)
	}
	_, errs, err = check([]string{"./..."}, "windows", "amd64")
	if err != nil {
		t.Fatal(err)
	}
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "kill.go:5") || !strings.Contains(errs[0].Error(), "syscall.Kill") {
		t.Fatalf("windows: want one error at kill.go:5 naming syscall.Kill, got %v", errs)
	}
}
