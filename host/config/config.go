package config

import (
	"crypto/x509"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// FileName is the name of the configuration file inside the home.
const FileName = "config.toml"

// Defaults applied by Load to settings the file leaves out.
const (
	// DefaultStateDir is the state directory, relative to the home.
	DefaultStateDir = "state"
	// DefaultRecordsPerRoom is how many accepted records are kept per room.
	DefaultRecordsPerRoom = 1000
	// DefaultListen is the loopback address of the HTTP MCP listener.
	DefaultListen = "127.0.0.1:8765"
	// DefaultTokenFile holds the listener's bearer token, relative to the
	// home.
	DefaultTokenFile = "http.token"
	// DefaultPluginMemoryMiB is a plugin instance's memory cap.
	DefaultPluginMemoryMiB = 64
	// DefaultPluginValidateMS is the deadline of one validate call.
	DefaultPluginValidateMS = 250
	// DefaultPluginWatchMS is the deadline of one watch call (one sync page).
	DefaultPluginWatchMS = 250
	// DefaultPluginToolMS is the deadline of one plugin tool call.
	DefaultPluginToolMS = 2000
)

// Bounds checked by Validate.
const (
	// MinRecordsPerRoom is the smallest accepted state.records_per_room.
	MinRecordsPerRoom = 10
	// MaxRecordsPerRoom is the largest accepted state.records_per_room.
	MaxRecordsPerRoom = 100000
	// MaxPluginMemoryMiB is the largest accepted plugin memory_mib.
	MaxPluginMemoryMiB = 1024
	// MaxPluginCallMS is the largest accepted plugin call deadline
	// (validate_ms, watch_ms, tool_ms).
	MaxPluginCallMS = 60000
	// maxPathLen bounds every path setting, in bytes.
	maxPathLen = 4096
)

// Config is a loaded configuration. Load fills in defaults, so every field
// holds the effective value; paths keep the form written in the file
// (relative paths are relative to the home; use Resolve).
type Config struct {
	// Identities are the agent identities this connector can act as. With
	// more than one, exactly one has Default set.
	Identities []Identity `toml:"identities"`
	// Hosts is the allowlist of origins and their grants. apconnect talks
	// to no other host (the identities' profile services aside); no tool
	// can add one.
	Hosts []Host `toml:"hosts,omitempty"`
	// State configures the local SQLite state.
	State State `toml:"state"`
	// HTTP configures the loopback HTTP MCP listener.
	HTTP HTTP `toml:"http"`
	// Limits are the local write budgets ([limits]), as written; read the
	// effective budgets with its methods.
	Limits Limits `toml:"limits"`
	// Mail configures Agent Mail for every identity ([mail]).
	Mail Mail `toml:"mail"`
	// Wake configures how the agent is woken by inbox items ([wake]).
	Wake Wake `toml:"wake"`
	// Plugins are the WebAssembly plugins and what each may do.
	Plugins []Plugin `toml:"plugins,omitempty"`

	home string
}

// Identity is one agent identity: a name, a key file and where its Agent
// Profile is published.
type Identity struct {
	// Name selects the identity (--identity); lowercase [a-z0-9_-], 1 to 32
	// characters, unique.
	Name string `toml:"name"`
	// KeyFile is the keystore file holding the identity's Ed25519 key,
	// absolute or relative to the home. Required.
	KeyFile string `toml:"key_file"`
	// ProfileServices are the https origins of the Agent Profile services
	// the identity's profile is published to and read from.
	ProfileServices []string `toml:"profile_services"`
	// Default marks the identity used when none is named. A single identity
	// is the default even when this is false.
	Default bool `toml:"default"`
	// PassphraseFile optionally holds the key's passphrase (mode 0600,
	// trailing newline ignored), absolute or relative to the home. The
	// APCONNECT_PASSPHRASE environment variable takes precedence.
	PassphraseFile string `toml:"passphrase_file,omitempty"`
}

// Host is one allowed origin: an ADP host, or any service of the five
// protocols (profile, mail, knowledge, delegation) the operator lets the
// agent use there, with what it may do on it.
type Host struct {
	// URL is the host's API origin: https, no path, query, fragment or user
	// info. Load normalizes it (lowercase scheme and host, no :443, no
	// trailing slash).
	URL string `toml:"url"`
	// Label names the host in tools and logs; lowercase [a-z0-9_-], 1 to 32
	// characters, unique.
	Label string `toml:"label"`
	// CAFile optionally names a PEM file of CA certificates that replaces
	// the system roots for this host, absolute or relative to the home.
	CAFile string `toml:"ca_file,omitempty"`
	// Grants are the capabilities granted on this origin (package
	// capability), as written. Nil — the key absent from the file — grants
	// every capability; an empty list grants none. They apply to this
	// origin only. Read the effective grants with GrantSet or
	// Config.Grants.
	Grants []string `toml:"grants"`
}

// State configures local state.
type State struct {
	// Dir is the state directory, absolute or relative to the home.
	// Default "state".
	Dir string `toml:"dir"`
	// RecordsPerRoom is how many accepted records are kept per room, from
	// MinRecordsPerRoom to MaxRecordsPerRoom. Default 1000.
	RecordsPerRoom int `toml:"records_per_room"`
}

// HTTP configures the loopback HTTP MCP listener (apconnect serve).
type HTTP struct {
	// Listen is the address to bind: 127.0.0.1:<port> or [::1]:<port>
	// only. Default "127.0.0.1:8765".
	Listen string `toml:"listen"`
	// TokenFile holds the bearer token clients must present, absolute or
	// relative to the home. Default "http.token".
	TokenFile string `toml:"token_file"`
}

// Plugin is one WebAssembly plugin the operator has installed.
type Plugin struct {
	// Name is the plugin's name, the prefix of its tools
	// (<name>_<tool>): lowercase [a-z][a-z0-9_]*, at most 32 characters,
	// not starting with "agent_protocols", unique.
	Name string `toml:"name"`
	// Path is the .wasm file, absolute or relative to the home.
	Path string `toml:"path"`
	// SHA256 is the lowercase hex SHA-256 of the .wasm file; a plugin whose
	// file does not match is refused.
	SHA256 string `toml:"sha256"`
	// Grants are the capabilities the plugin may use: "validate", "watch",
	// "tools", "packs", or "propose:<event type>" per event type it may
	// propose. Anything it claims beyond these is refused.
	Grants []string `toml:"grants"`
	// Limits bound each plugin call.
	Limits PluginLimits `toml:"limits"`
	// Enabled turns the plugin on or off without removing it. Default true.
	Enabled bool `toml:"enabled"`
}

// PluginLimits bound a plugin's resources. Zero is not allowed; a limit
// left out of the file takes its default.
type PluginLimits struct {
	// MemoryMiB caps an instance's linear memory, 1 to 1024. Default 64.
	MemoryMiB int `toml:"memory_mib"`
	// ValidateMS is the deadline of one validate call, 1 to 60000. Default
	// 250.
	ValidateMS int `toml:"validate_ms"`
	// WatchMS is the deadline of one watch call, 1 to 60000. Default 250.
	WatchMS int `toml:"watch_ms"`
	// ToolMS is the deadline of one tool call, 1 to 60000. Default 2000.
	ToolMS int `toml:"tool_ms"`
}

// Home returns the apconnect home the configuration belongs to ("" for a
// Config built as a literal).
func (c *Config) Home() string { return c.home }

// File returns the path of config.toml in the home.
func (c *Config) File() string { return filepath.Join(c.home, FileName) }

// Resolve returns p as an absolute path: unchanged (cleaned) when absolute,
// joined to the home when relative, "" when empty.
func (c *Config) Resolve(p string) string { return ResolvePath(c.home, p) }

// StateDir returns the absolute state directory.
func (c *Config) StateDir() string { return c.Resolve(c.State.Dir) }

// TokenFile returns the absolute path of the HTTP bearer token file.
func (c *Config) TokenFile() string { return c.Resolve(c.HTTP.TokenFile) }

// ResolvePath returns p resolved against home: cleaned when absolute,
// joined to home when relative, "" when empty.
func ResolvePath(home, p string) string {
	if p == "" {
		return ""
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(home, p)
}

// MaxCAFileSize bounds what CAPool reads.
const MaxCAFileSize = 1 << 20

// CAPool returns the trust roots for h: nil when h has no ca_file (use the
// system roots), otherwise a pool of the certificates in its PEM file, which
// replace the system roots for that host. A file without any certificate is
// an error.
func (c *Config) CAPool(h *Host) (*x509.CertPool, error) {
	if h.CAFile == "" {
		return nil, nil
	}
	path := c.Resolve(h.CAFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: host %s: ca_file: %w", h.Label, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxCAFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("config: host %s: ca_file: %w", h.Label, err)
	}
	if len(data) > MaxCAFileSize {
		return nil, fmt.Errorf("config: host %s: ca_file %s is larger than %d bytes", h.Label, path, MaxCAFileSize)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("config: host %s: ca_file %s holds no PEM certificate", h.Label, path)
	}
	return pool, nil
}
