package plugin

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/tetratelabs/wazero"

	"apconnect/host/internal/fileowner"
)

// The on-disk compilation cache (Options.CacheDir) holds native code that
// runs in apconnect's process while the agent's key is decrypted, so it is
// never trusted as found. wazero's own directory cache names entries by a
// hash of the module and checks them with a CRC only: copying one module's
// entry over another's name runs the first module's machine code for the
// second, past the digest pin and the sandbox. Here every entry is sealed:
//
//   - It is bound to the SHA-256 of the module it was compiled from (the
//     module as the host compiles it, after wasmguard), to the module's
//     pinned digest, and to wazero's version, architecture and OS (the name
//     of wazero's cache directory), and
//   - authenticated with HMAC-SHA-256 under a key of 32 random bytes kept
//     beside the entries in a file of mode 0600 owned by the current user,
//     so that only a process that can read that key can make an entry the
//     host accepts; a copied, altered, truncated or foreign entry fails the
//     check.
//
// wazero only reads entries from a directory, so a load unseals the entry
// into a fresh private directory (mode 0700, removed right after
// compilation) and points a per-plugin wazero cache at it; after a miss,
// the entry wazero wrote there is sealed into the cache. Any doubt — no
// entry, a bad one, a key that is missing, foreign or too open, an entry
// wazero refuses — means compiling afresh, never a refused plugin.

// sealedDirName is the cache's directory inside Options.CacheDir.
const sealedDirName = "apconnect-sealed-v1"

// sealedKeyFile holds the HMAC key.
const sealedKeyFile = "key"

const sealedMagic = "apconnect sealed wazero cache entry v1\n"

// maxSealedEntry bounds what a load reads of one entry.
const maxSealedEntry = 1 << 30

// sealedMaxAge is how long an entry no load used is kept.
const sealedMaxAge = 30 * 24 * time.Hour

var wazeroEntryName = regexp.MustCompile(`^[0-9a-f]{64}$`)

// sealedCache is an open on-disk cache.
type sealedCache struct {
	dir string
	key []byte
	log *slog.Logger
}

// openSealedCache opens (creating when needed) the sealed cache under
// base. An unusable key is an error: the caller compiles in memory.
func openSealedCache(base string, log *slog.Logger) (*sealedCache, error) {
	dir := filepath.Join(base, sealedDirName)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	key, err := readOrCreateKey(filepath.Join(dir, sealedKeyFile))
	if err != nil {
		return nil, err
	}
	c := &sealedCache{dir: dir, key: key, log: log}
	c.tidy(time.Now())
	return c, nil
}

// readOrCreateKey reads the HMAC key, creating it (exclusively, mode 0600)
// when it does not exist. A key that is not a regular file of exactly 32
// bytes, owned by this user and readable by nobody else, is refused: an
// attacker who could write it could seal entries.
func readOrCreateKey(path string) ([]byte, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		_, werr := f.Write(key)
		cerr := f.Close()
		if werr != nil || cerr != nil {
			_ = os.Remove(path)
			return nil, errors.Join(werr, cerr)
		}
		return key, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	f, err = os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := privateFile(st); err != nil {
		return nil, fmt.Errorf("cache key %s: %w", path, err)
	}
	data, err := io.ReadAll(io.LimitReader(f, 64))
	if err != nil {
		return nil, err
	}
	if len(data) != 32 {
		return nil, fmt.Errorf("cache key %s is %d bytes, not 32", path, len(data))
	}
	return data, nil
}

// privateFile fails unless st is a regular file owned by this process's
// user that no one else may read or write.
func privateFile(st fs.FileInfo) error {
	if !st.Mode().IsRegular() {
		return errors.New("not a regular file")
	}
	if runtime.GOOS == "windows" {
		return nil
	}
	if st.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("mode %04o lets others read or write it", st.Mode().Perm())
	}
	return fileowner.Check(st)
}

// tidy removes the private directories and half-written entries a crashed
// process left (after an hour), and entries no load used for sealedMaxAge
// (a load that uses an entry touches it).
func (c *sealedCache) tidy(now time.Time) {
	entries, _ := os.ReadDir(c.dir)
	for _, e := range entries {
		var maxAge time.Duration
		switch name := e.Name(); {
		case strings.HasPrefix(name, ".tmp-"), strings.HasPrefix(name, ".entry-"):
			maxAge = time.Hour
		case strings.HasSuffix(name, ".entry"), strings.HasSuffix(name, sealedBlobSuffix):
			maxAge = sealedMaxAge
		default:
			continue
		}
		if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) > maxAge {
			_ = os.RemoveAll(filepath.Join(c.dir, e.Name()))
		}
	}
}

// sealedLoad is one compilation through the sealed cache.
type sealedLoad struct {
	c        *sealedCache
	tmp      string // the private directory wazero reads and writes
	wazDir   string // wazero's versioned subdirectory name
	cache    wazero.CompilationCache
	entry    string // the sealed entry's path
	compiled [32]byte
	digest   string
	placed   bool   // a sealed entry was unsealed for wazero
	name     string // wazero's name of the placed entry
}

// begin prepares a wazero cache for compiling module (whose pinned digest
// is digest): a private directory holding the module's entry when the
// sealed cache has a valid one. noEntry skips the lookup (a retry after
// wazero refused an entry).
func (c *sealedCache) begin(module []byte, digest string, noEntry bool) (*sealedLoad, error) {
	tmp, err := os.MkdirTemp(c.dir, ".tmp-")
	if err != nil {
		return nil, err
	}
	wc, err := wazero.NewCompilationCacheWithDir(tmp)
	if err != nil {
		_ = os.RemoveAll(tmp)
		return nil, err
	}
	// wazero creates its versioned subdirectory at once; its name carries
	// the version, architecture and OS the entries are valid for.
	subs, err := os.ReadDir(tmp)
	if err != nil || len(subs) != 1 || !subs[0].IsDir() {
		_ = wc.Close(context.Background())
		_ = os.RemoveAll(tmp)
		return nil, fmt.Errorf("unexpected layout of wazero's cache directory %s", tmp)
	}
	l := &sealedLoad{c: c, tmp: tmp, wazDir: subs[0].Name(), cache: wc, digest: digest, compiled: sha256.Sum256(module)}
	l.entry = filepath.Join(c.dir, hex.EncodeToString(l.compiled[:])+"."+l.wazDir+".entry")
	if !noEntry {
		l.placed = l.unseal()
	}
	return l, nil
}

// unseal checks the sealed entry and writes wazero's entry into the
// private directory; false on a miss or a bad entry (which is removed).
func (l *sealedLoad) unseal() bool {
	data, err := readBounded(l.entry, maxSealedEntry)
	if err != nil {
		return false
	}
	name, payload, err := l.open(data)
	if err != nil {
		l.c.log.Warn("plugin compilation cache: discarding an entry that fails its check; recompiling", "entry", l.entry, "err", err)
		_ = os.Remove(l.entry)
		return false
	}
	if err := os.WriteFile(filepath.Join(l.tmp, l.wazDir, name), payload, 0o600); err != nil {
		return false
	}
	l.name = name
	now := time.Now()
	_ = os.Chtimes(l.entry, now, now) // in use: kept by tidy
	return true
}

// seal builds a sealed entry: magic, the bound fields, wazero's entry name
// and bytes, and the HMAC of everything before it.
func (l *sealedLoad) seal(name string, payload []byte) []byte {
	var b bytes.Buffer
	b.WriteString(sealedMagic)
	b.Write(l.compiled[:])
	writeField(&b, []byte(l.digest))
	writeField(&b, []byte(l.wazDir))
	writeField(&b, []byte(name))
	writeField(&b, payload)
	mac := hmac.New(sha256.New, l.c.key)
	mac.Write(b.Bytes())
	b.Write(mac.Sum(nil))
	return b.Bytes()
}

// open checks a sealed entry and returns wazero's entry name and bytes.
func (l *sealedLoad) open(data []byte) (string, []byte, error) {
	if len(data) > maxSealedEntry || len(data) < len(sealedMagic)+32+sha256.Size {
		return "", nil, errors.New("wrong size")
	}
	body, sum := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	mac := hmac.New(sha256.New, l.c.key)
	mac.Write(body)
	if !hmac.Equal(sum, mac.Sum(nil)) {
		return "", nil, errors.New("the HMAC does not match: not sealed with this cache's key, or altered")
	}
	if string(body[:len(sealedMagic)]) != sealedMagic {
		return "", nil, errors.New("not a sealed entry")
	}
	rest := body[len(sealedMagic):]
	if !bytes.Equal(rest[:32], l.compiled[:]) {
		return "", nil, errors.New("sealed for another module")
	}
	rest = rest[32:]
	var fields [4][]byte
	for i := range fields {
		var ok bool
		if fields[i], rest, ok = cutField(rest); !ok {
			return "", nil, errors.New("malformed")
		}
	}
	if len(rest) != 0 {
		return "", nil, errors.New("malformed")
	}
	digest, wazDir, name, payload := fields[0], fields[1], fields[2], fields[3]
	switch {
	case string(digest) != l.digest:
		return "", nil, errors.New("sealed for a module of another digest")
	case string(wazDir) != l.wazDir:
		return "", nil, errors.New("sealed for another wazero version or platform")
	case !wazeroEntryName.Match(name):
		return "", nil, errors.New("bad entry name")
	}
	return string(name), payload, nil
}

func writeField(b *bytes.Buffer, v []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(v)))
	b.Write(n[:])
	b.Write(v)
}

// cutField splits a length-prefixed field off b, without copying.
func cutField(b []byte) (field, rest []byte, ok bool) {
	if len(b) < 8 {
		return nil, nil, false
	}
	size := binary.BigEndian.Uint64(b[:8])
	if size > uint64(len(b)-8) {
		return nil, nil, false
	}
	return b[8 : 8+size], b[8+size:], true
}

// readBounded reads a whole file of at most max bytes in one allocation.
func readBounded(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || st.Size() > max {
		return nil, errors.New("not a regular file of a sensible size")
	}
	data := make([]byte, st.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, err
	}
	return data, nil
}

// used reports, after a successful compilation, whether wazero took the
// code from the placed entry: on a miss (no entry, or one under a key
// wazero no longer computes for this module) it writes its own beside it.
func (l *sealedLoad) used() bool {
	if !l.placed {
		return false
	}
	files, err := os.ReadDir(filepath.Join(l.tmp, l.wazDir))
	return err == nil && len(files) == 1 && files[0].Name() == l.name
}

// finish runs after a successful compilation: after a miss it seals the
// entry wazero wrote. The private directory is removed either way (the
// compiled code lives in memory from now on).
func (l *sealedLoad) finish() {
	defer l.discard()
	if l.placed {
		return
	}
	files, err := os.ReadDir(filepath.Join(l.tmp, l.wazDir))
	if err != nil || len(files) != 1 || !wazeroEntryName.MatchString(files[0].Name()) {
		return // nothing (or something unexpected) to keep
	}
	payload, err := readBounded(filepath.Join(l.tmp, l.wazDir, files[0].Name()), maxSealedEntry)
	if err != nil {
		return
	}
	if err := writeAtomic(l.entry, l.seal(files[0].Name(), payload)); err != nil {
		l.c.log.Warn("plugin compilation cache: cannot store an entry", "entry", l.entry, "err", err)
	}
}

// discard removes the private directory.
func (l *sealedLoad) discard() { _ = os.RemoveAll(l.tmp) }

// writeAtomic writes data to path through a temporary file and a rename.
func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".entry-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// Sealed blobs: what a start needs besides compiled code, kept beside it
// under the same key and the same rules. A blob is bound to a kind, to
// the pinned digest of the module it was made from and to a binding
// string naming the host rules it was made under (the ABI version, the
// wasmguard rewrite's version, the description rules' version), all of
// them inside the HMAC: a blob copied under another module's name, or
// made by a host whose rules differ, fails its check and is never used.
//
//   - the description blob holds the describe output of the module's
//     first instance, which a later start checks again under the current
//     grants instead of instantiating the module (Runtime.Load);
//   - the guarded blob holds the module as wasmguard rewrote it, so that a
//     compilation from the cache does not rewrite it again.

const sealedBlobMagic = "apconnect sealed plugin blob v1\n"

// sealedBlobSuffix ends the names of blob files.
const sealedBlobSuffix = ".sealed"

// Blob kinds.
const (
	blobDescription = "description"
	blobGuarded     = "guarded"
)

// blobPath is where the blob of kind for digest under binding is kept.
// The name only finds the file: the check is on the sealed content.
func (c *sealedCache) blobPath(kind, digest, binding string) string {
	return filepath.Join(c.dir, digest+"."+kind+"."+binding+sealedBlobSuffix)
}

// putBlob seals data as the blob of kind for digest under binding.
func (c *sealedCache) putBlob(kind, digest, binding string, data []byte) error {
	var b bytes.Buffer
	b.Grow(len(sealedBlobMagic) + len(data) + 200)
	b.WriteString(sealedBlobMagic)
	writeField(&b, []byte(kind))
	writeField(&b, []byte(digest))
	writeField(&b, []byte(binding))
	writeField(&b, data)
	mac := hmac.New(sha256.New, c.key)
	mac.Write(b.Bytes())
	b.Write(mac.Sum(nil))
	return writeAtomic(c.blobPath(kind, digest, binding), b.Bytes())
}

// getBlob returns the blob of kind for digest under binding: false when
// there is none, or when the file fails its check (it is then removed).
func (c *sealedCache) getBlob(kind, digest, binding string) ([]byte, bool) {
	path := c.blobPath(kind, digest, binding)
	data, err := readBounded(path, maxSealedEntry)
	if err != nil {
		return nil, false
	}
	payload, err := c.openBlob(data, kind, digest, binding)
	if err != nil {
		c.log.Warn("plugin cache: discarding a sealed entry that fails its check", "entry", path, "err", err)
		_ = os.Remove(path)
		return nil, false
	}
	now := time.Now()
	_ = os.Chtimes(path, now, now) // in use: kept by tidy
	return payload, true
}

// dropBlob removes the blob of kind for digest under binding.
func (c *sealedCache) dropBlob(kind, digest, binding string) {
	_ = os.Remove(c.blobPath(kind, digest, binding))
}

// openBlob checks a sealed blob against what the caller asked for.
func (c *sealedCache) openBlob(data []byte, kind, digest, binding string) ([]byte, error) {
	if len(data) < len(sealedBlobMagic)+sha256.Size {
		return nil, errors.New("wrong size")
	}
	body, sum := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	mac := hmac.New(sha256.New, c.key)
	mac.Write(body)
	if !hmac.Equal(sum, mac.Sum(nil)) {
		return nil, errors.New("the HMAC does not match: not sealed with this cache's key, or altered")
	}
	if string(body[:len(sealedBlobMagic)]) != sealedBlobMagic {
		return nil, errors.New("not a sealed blob")
	}
	rest := body[len(sealedBlobMagic):]
	var fields [4][]byte
	for i := range fields {
		var ok bool
		if fields[i], rest, ok = cutField(rest); !ok {
			return nil, errors.New("malformed")
		}
	}
	switch {
	case len(rest) != 0:
		return nil, errors.New("malformed")
	case string(fields[0]) != kind:
		return nil, fmt.Errorf("a %s blob, not a %s blob", fields[0], kind)
	case string(fields[1]) != digest:
		return nil, errors.New("sealed for a module of another digest")
	case string(fields[2]) != binding:
		return nil, fmt.Errorf("sealed under other host rules (%s, not %s)", fields[2], binding)
	}
	return fields[3], nil
}
