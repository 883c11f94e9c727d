package plugin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
)

// maxModuleBytes caps the size of a plugin file.
const maxModuleBytes = 64 << 20

// Options configure a Runtime.
type Options struct {
	// CacheDir, when set, keeps compiled plugins on disk so that later
	// starts skip compilation (about 1.3 s for a Go plugin). The directory
	// is created if needed. Entries are sealed (cache.go): bound to the
	// module's SHA-256 and wazero's version and authenticated with a key
	// kept in the directory, so that an entry the host did not write is
	// recompiled, never run.
	CacheDir string
	// Cache, when set, is used instead of CacheDir: a wazero compilation
	// cache shared with other Runtimes, trusted as it is (tests and tools
	// that own it; a directory cache here is not sealed). Close does not
	// close it.
	Cache wazero.CompilationCache
	// Now is the clock for now_ms and health timestamps; time.Now when nil.
	Now func() time.Time
	// Logger receives host-side events (loads, discarded instances);
	// nothing when nil. Plugin output never goes here, only to each
	// plugin's ring log.
	Logger *slog.Logger
	// CheckWatchInputs validates watch envelopes against their schema too.
	// Every other input envelope is always validated before it is sent;
	// watch batches are not by default because the check costs about 11 µs
	// per record, as much as the plugin call itself. The records come from
	// verified state, so a failure is an integration bug: tests (and
	// plugintest) turn the check on.
	CheckWatchInputs bool
}

// Runtime loads and runs plugins. It owns a compilation cache shared by all
// its plugins; each plugin gets its own wazero runtime (its own memory cap,
// host module and instances). A Runtime is safe for concurrent use.
type Runtime struct {
	opts      Options
	cache     wazero.CompilationCache // nil with a sealed cache
	ownsCache bool
	sealed    *sealedCache // Options.CacheDir
	schemas   *envelopeSchemas

	mu      sync.Mutex
	closed  bool
	plugins []*Plugin
}

// NewRuntime prepares a Runtime.
func NewRuntime(ctx context.Context, opts Options) (*Runtime, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	schemas, err := compileEnvelopeSchemas()
	if err != nil {
		return nil, fmt.Errorf("plugin ABI schemas: %w", err)
	}
	r := &Runtime{opts: opts, schemas: schemas}
	switch {
	case opts.Cache != nil:
		r.cache = opts.Cache
	case opts.CacheDir != "":
		if r.sealed, err = openSealedCache(opts.CacheDir, opts.Logger); err != nil {
			return nil, fmt.Errorf("plugin compilation cache: %w", err)
		}
	default:
		r.cache, r.ownsCache = wazero.NewCompilationCache(), true
	}
	return r, nil
}

// Close closes every plugin loaded by r and the compilation cache.
func (r *Runtime) Close(ctx context.Context) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	plugins := r.plugins
	r.plugins = nil
	r.mu.Unlock()
	var errs []error
	for _, p := range plugins {
		errs = append(errs, p.Close(ctx))
	}
	if r.ownsCache {
		errs = append(errs, r.cache.Close(ctx))
	}
	return errors.Join(errs...)
}

// Plugins returns the plugins loaded by r and not closed, in load order.
func (r *Runtime) Plugins() []*Plugin {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*Plugin(nil), r.plugins...)
}

func (r *Runtime) forget(p *Plugin) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, q := range r.plugins {
		if q == p {
			r.plugins = append(r.plugins[:i], r.plugins[i+1:]...)
			return
		}
	}
}

// Digest returns the lowercase hex SHA-256 of data, the form the config
// pins plugins with.
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// normalizeDigest accepts "<64 hex>" or "sha256:<64 hex>", any case.
func normalizeDigest(s string) (string, error) {
	d := strings.ToLower(strings.TrimPrefix(strings.TrimSpace(s), "sha256:"))
	if len(d) != 64 {
		return "", fmt.Errorf("digest %q is not 64 hexadecimal digits of SHA-256", s)
	}
	if _, err := hex.DecodeString(d); err != nil {
		return "", fmt.Errorf("digest %q is not hexadecimal", s)
	}
	return d, nil
}

// ReadModule reads a plugin file, bounded to 64 MiB, in one allocation.
func ReadModule(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{Code: CodeUnreadable, Plugin: path, Op: "load", Message: err.Error(), Err: err}
	}
	defer f.Close()
	size := int64(0)
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size = st.Size()
	}
	if size > maxModuleBytes {
		return nil, errorf(CodeUnreadable, path, "load", "file is larger than %d bytes", maxModuleBytes)
	}
	data, err := readAllSized(io.LimitReader(f, maxModuleBytes+1), size)
	if err != nil {
		return nil, &Error{Code: CodeUnreadable, Plugin: path, Op: "load", Message: err.Error(), Err: err}
	}
	if len(data) > maxModuleBytes {
		return nil, errorf(CodeUnreadable, path, "load", "file is larger than %d bytes", maxModuleBytes)
	}
	return data, nil
}

// readAllSized reads r to its end into a buffer sized for size bytes (and
// grown only if r has more).
func readAllSized(r io.Reader, size int64) ([]byte, error) {
	buf := make([]byte, 0, size+512)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// Load reads the plugin at path, checks it against the pinned SHA-256
// digest (hex, optionally prefixed "sha256:"), compiles and instantiates it,
// asks it to describe itself and checks the description against grants and
// the ABI rules. Any mismatch refuses the plugin with an *Error naming the
// offending item.
func (r *Runtime) Load(ctx context.Context, path, expectedSHA256 string, grants Grants, limits Limits) (*Plugin, error) {
	want, err := normalizeDigest(expectedSHA256)
	if err != nil {
		return nil, errorf(CodeInvalidConfig, path, "load", "%v", err)
	}
	data, err := ReadModule(path)
	if err != nil {
		return nil, err
	}
	if got := Digest(data); got != want {
		return nil, errorf(CodeDigestMismatch, path, "load", "SHA-256 of the file is %s, the config pins %s", got, want)
	}
	return r.load(ctx, path, data, want, grants, limits)
}

// LoadBytes is Load for a module already in memory; source names it in
// errors and health reports.
func (r *Runtime) LoadBytes(ctx context.Context, source string, wasm []byte, expectedSHA256 string, grants Grants, limits Limits) (*Plugin, error) {
	want, err := normalizeDigest(expectedSHA256)
	if err != nil {
		return nil, errorf(CodeInvalidConfig, source, "load", "%v", err)
	}
	if got := Digest(wasm); got != want {
		return nil, errorf(CodeDigestMismatch, source, "load", "SHA-256 of the module is %s, the config pins %s", got, want)
	}
	return r.load(ctx, source, wasm, want, grants, limits)
}

// Inspection is what Inspect learns about a plugin file.
type Inspection struct {
	Path        string
	Size        int
	Digest      string // lowercase hex SHA-256
	Description *Description
	// Grants is what the description needs: the grants for a config entry.
	Grants Grants
}

// Inspect loads a plugin file without a pinned digest and with every grant
// its description asks for, describes it, compiles and starts it (Ready)
// and closes it. It backs
// "apconnect plugin inspect"; the description is still checked by every
// other rule.
func (r *Runtime) Inspect(ctx context.Context, path string, limits Limits) (*Inspection, error) {
	data, err := ReadModule(path)
	if err != nil {
		return nil, err
	}
	digest := Digest(data)
	p, err := r.load(ctx, path, data, digest, inspectGrants, limits)
	if err != nil {
		return nil, err
	}
	defer p.Close(ctx)
	// Compiled and started now: a module that cannot start is refused
	// here, and the cache keeps its compiled code and description for
	// the starts that will load it.
	if err := p.Ready(ctx); err != nil {
		return nil, err
	}
	d := p.Description()
	return &Inspection{Path: path, Size: len(data), Digest: digest, Description: d, Grants: d.RequiredGrants()}, nil
}

// inspectGrants marks an Inspect load: every claim is allowed.
var inspectGrants = Grants{Validate: true, Watch: true, Tools: true, Packs: true, Propose: []string{"*"}}

func (r *Runtime) load(ctx context.Context, source string, wasm []byte, digest string, grants Grants, limits Limits) (*Plugin, error) {
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return nil, errorf(CodeClosed, source, "load", "the plugin runtime is closed")
	}
	limits = limits.WithDefaults()
	if err := limits.check(); err != nil {
		return nil, errorf(CodeInvalidConfig, source, "load", "%v", err)
	}
	start := time.Now()
	p, err := newPlugin(ctx, r, source, wasm, digest, grants, limits)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		_ = p.Close(ctx)
		return nil, errorf(CodeClosed, source, "load", "the plugin runtime is closed")
	}
	r.plugins = append(r.plugins, p)
	r.mu.Unlock()
	r.opts.Logger.Info("plugin loaded", "plugin", p.Name(), "version", p.desc.Version, "source", source,
		"sha256", digest, "elapsed", time.Since(start))
	return p, nil
}
