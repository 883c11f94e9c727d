package plugintest

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/tetratelabs/wazero"
)

// The compilation cache of the test harness. Compiling a Go plugin takes
// about 1.5 s, and over 15 s under the race detector, so compiled code is
// kept on disk under the user cache directory and shared by every test
// binary and run on the machine (wazero keys entries by module content and
// its own version, and writes them atomically). Entries not written for a
// week, and the oldest beyond 1 GiB, are removed when a test binary starts.
// Without a usable directory the cache lives in memory, one per binary.

const (
	cacheMaxAge   = 7 * 24 * time.Hour
	cacheMaxBytes = 1 << 30
)

// sharedDir is the directory of the shared cache, "" when it is in memory.
var sharedDir string

// CacheDir returns the directory of the compilation cache every Runtime of
// this package uses, "" when it lives in memory. A plugin.Runtime (or
// "apconnect plugin inspect --cache") given this directory reuses the code
// compiled here.
func CacheDir() string { return sharedDir }

func newSharedCache() wazero.CompilationCache {
	if base, err := os.UserCacheDir(); err == nil {
		dir := filepath.Join(base, "apconnect", "plugintest")
		trimCache(dir, time.Now())
		if c, err := wazero.NewCompilationCacheWithDir(dir); err == nil {
			sharedDir = dir
			return c
		}
	}
	return wazero.NewCompilationCache()
}

// trimCache removes old entries and leftover temporary files, then the
// oldest entries while the cache is larger than cacheMaxBytes. Errors are
// ignored: the cache is an optimisation.
func trimCache(dir string, now time.Time) {
	type entry struct {
		path string
		mod  time.Time
		size int64
	}
	var entries []entry
	var total int64
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		age := now.Sub(info.ModTime())
		if age > cacheMaxAge || filepath.Ext(path) == ".tmp" && age > time.Hour {
			_ = os.Remove(path)
			return nil
		}
		entries = append(entries, entry{path, info.ModTime(), info.Size()})
		total += info.Size()
		return nil
	})
	slices.SortFunc(entries, func(a, b entry) int { return a.mod.Compare(b.mod) })
	for _, e := range entries {
		if total <= cacheMaxBytes {
			break
		}
		if os.Remove(e.path) == nil {
			total -= e.size
		}
	}
}
