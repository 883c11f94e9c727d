// Package atomicfile writes small private files (keys, configuration, tokens)
// so that a crash or a concurrent writer never leaves a half-written or
// clobbered file: temporary file in the same directory, mode 0600, fsync,
// then rename (or link, when the file must not exist yet), then fsync of the
// directory.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// Write atomically replaces (or creates) path with data, mode 0600.
func Write(path string, data []byte) error { return write(path, data, true) }

// WriteNew atomically creates path with data, mode 0600, and fails with an
// error wrapping fs.ErrExist if path already exists — also when another
// process creates it concurrently: the file is published with link(2), which
// never replaces. Where the file system has no hard links it falls back to a
// rename after a last existence check.
func WriteNew(path string, data []byte) error { return write(path, data, false) }

func write(path string, data []byte, replace bool) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create directory %s: %w", dir, err)
	}
	if !replace {
		if _, err := os.Lstat(path); err == nil {
			return fmt.Errorf("%s: %w", path, fs.ErrExist)
		}
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("create temporary file in %s: %w", dir, err)
	}
	tmpName := tmp.Name()
	defer func() {
		if tmp != nil {
			tmp.Close()
		}
		os.Remove(tmpName) // gone already after success; garbage after a failure
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return fmt.Errorf("set mode 0600 on %s: %w", tmpName, err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", tmpName, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", tmpName, err)
	}
	cerr := tmp.Close()
	tmp = nil
	if cerr != nil {
		return fmt.Errorf("close %s: %w", tmpName, cerr)
	}
	if replace {
		if err := os.Rename(tmpName, path); err != nil {
			return fmt.Errorf("rename into %s: %w", path, err)
		}
	} else if lerr := os.Link(tmpName, path); lerr != nil {
		if errors.Is(lerr, fs.ErrExist) {
			return fmt.Errorf("%s: %w", path, fs.ErrExist)
		}
		if _, serr := os.Lstat(path); serr == nil {
			return fmt.Errorf("%s: %w", path, fs.ErrExist)
		}
		if err := os.Rename(tmpName, path); err != nil {
			return fmt.Errorf("rename into %s: %w", path, err)
		}
	}
	if err := SyncDir(dir); err != nil {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	return nil
}

// SyncDir fsyncs a directory so a rename or link in it is durable. Windows
// cannot open directories for sync; there it is a no-op.
func SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
