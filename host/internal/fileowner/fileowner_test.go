package fileowner_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"apconnect/host/internal/fileowner"
)

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if uid, ok := fileowner.UID(fi); !ok || uid != os.Getuid() {
		t.Fatalf("UID = %d, %v; want %d", uid, ok, os.Getuid())
	}
	if err := fileowner.Check(fi); err != nil {
		t.Fatalf("own file: %v", err)
	}
	defer func(old func() int) { fileowner.CurrentUID = old }(fileowner.CurrentUID)
	fileowner.CurrentUID = func() int { return os.Getuid() + 1 }
	var e *fileowner.Error
	if err := fileowner.Check(fi); !errors.As(err, &e) || e.Owner != os.Getuid() || e.User != os.Getuid()+1 {
		t.Fatalf("foreign file: %v", err)
	}
}
