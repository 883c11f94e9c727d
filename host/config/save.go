package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"apconnect/host/capability"
	"apconnect/host/internal/atomicfile"
)

// DefaultOptions are what `apconnect init` knows when it writes a fresh
// configuration.
type DefaultOptions struct {
	// IdentityName names the identity; "" means "default".
	IdentityName string
	// KeyFile is the identity's key file; "" means keys/<name>.key (relative
	// to the home).
	KeyFile string
	// PassphraseFile is the identity's optional passphrase file.
	PassphraseFile string
	// ProfileServices are the identity's optional profile service origins.
	ProfileServices []string
	// HostURL optionally allows one ADP host.
	HostURL string
	// HostLabel labels that host; "" derives one from its host name
	// (api.example.com gives api-example-com).
	HostLabel string
	// HostCAFile is the host's optional CA file.
	HostCAFile string
	// HostGrants are the host's grants as written (capability names); nil
	// leaves the key out, which grants every capability.
	HostGrants []string
}

// Default builds a fresh configuration for home: one identity, at most one
// host, defaults for everything else. It validates the result, so a bad
// option is reported like a bad file entry.
func Default(home string, o DefaultOptions) (*Config, error) {
	if home == "" {
		return nil, errors.New("config: empty home directory")
	}
	abs, err := filepath.Abs(home)
	if err != nil {
		return nil, fmt.Errorf("config: home %s: %w", home, err)
	}
	name := o.IdentityName
	if name == "" {
		name = "default"
	}
	keyFile := o.KeyFile
	if keyFile == "" {
		keyFile = filepath.ToSlash(filepath.Join("keys", name+".key"))
	}
	c := &Config{
		Identities: []Identity{{
			Name:            name,
			KeyFile:         keyFile,
			ProfileServices: append([]string{}, o.ProfileServices...),
			Default:         true,
			PassphraseFile:  o.PassphraseFile,
		}},
		Hosts:   []Host{},
		State:   State{Dir: DefaultStateDir, RecordsPerRoom: DefaultRecordsPerRoom},
		HTTP:    HTTP{Listen: DefaultListen, TokenFile: DefaultTokenFile},
		Mail:    DefaultMail(),
		Wake:    DefaultWake(),
		Plugins: []Plugin{},
		home:    abs,
	}
	if o.HostURL != "" {
		label := o.HostLabel
		if label == "" {
			label = labelFor(o.HostURL)
		}
		c.Hosts = append(c.Hosts, Host{URL: o.HostURL, Label: label, CAFile: o.HostCAFile, Grants: slices.Clone(o.HostGrants)})
	}
	c.normalize()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// labelFor derives a host label from a URL's host and port: lowercase, each
// run of characters outside [a-z0-9_] replaced by one '-', at most 32
// characters.
func labelFor(rawURL string) string {
	n, err := NormalizeOrigin(rawURL)
	if err != nil {
		return "host"
	}
	h := strings.TrimPrefix(n, "https://")
	var b strings.Builder
	for _, r := range h {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		case !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	l := strings.Trim(b.String(), "-")
	if len(l) > 32 {
		l = strings.TrimRight(l[:32], "-")
	}
	if l == "" {
		return "host"
	}
	return l
}

const fileHeader = `# apconnect configuration. Every key is described in schemas/config.schema.json.
# Relative paths are relative to the directory of this file (the apconnect home).
# Allow more hosts with [[hosts]] tables (a grants = [...] line limits what the
# agent may do there; without one it may do everything) and enable plugins with
# [[plugins]] tables (apconnect plugin inspect prints a ready one); append them
# below.

`

// Marshal validates c and encodes it as TOML, every setting written out.
// Host and profile service URLs are written in normal form; c itself is
// not modified.
func (c *Config) Marshal() ([]byte, error) {
	cp := c.clone()
	cp.normalize()
	if err := cp.Validate(); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.WriteString(fileHeader)
	if err := toml.NewEncoder(&buf).Encode(cp.encoded()); err != nil {
		return nil, fmt.Errorf("config: encoding: %w", err)
	}
	return buf.Bytes(), nil
}

// encodedConfig is the shape Marshal writes: Config with hosts whose
// grants are written only when set, so an absent list (every capability)
// stays absent and an empty one (none) is written as grants = []; and
// [limits], [mail] and [wake] with only what differs from the defaults, so
// a table that sets nothing is left out.
type encodedConfig struct {
	Identities []Identity    `toml:"identities"`
	Hosts      []encodedHost `toml:"hosts,omitempty"`
	State      State         `toml:"state"`
	HTTP       HTTP          `toml:"http"`
	Limits     *Limits       `toml:"limits,omitempty"`
	Mail       *encodedMail  `toml:"mail,omitempty"`
	Wake       *encodedWake  `toml:"wake,omitempty"`
	Plugins    []Plugin      `toml:"plugins,omitempty"`
}

type encodedHost struct {
	URL    string    `toml:"url"`
	Label  string    `toml:"label"`
	CAFile string    `toml:"ca_file,omitempty"`
	Grants *[]string `toml:"grants,omitempty"`
}

func (c *Config) encoded() *encodedConfig {
	e := &encodedConfig{Identities: c.Identities, State: c.State, HTTP: c.HTTP, Plugins: c.Plugins,
		Mail: c.Mail.encoded(), Wake: c.Wake.encoded()}
	if !c.Limits.IsZero() {
		e.Limits = &c.Limits
	}
	for _, h := range c.Hosts {
		eh := encodedHost{URL: h.URL, Label: h.Label, CAFile: h.CAFile}
		if h.Grants != nil {
			g := h.Grants
			eh.Grants = &g
		}
		e.Hosts = append(e.Hosts, eh)
	}
	return e
}

// clone returns a deep copy. Empty host and plugin lists are left out of
// the file, so an operator can append [[hosts]] and [[plugins]] tables
// (a "plugins = []" line would make a later [[plugins]] table an error).
func (c *Config) clone() *Config {
	cp := *c
	cp.Identities = make([]Identity, len(c.Identities))
	for i, id := range c.Identities {
		id.ProfileServices = append([]string{}, id.ProfileServices...)
		cp.Identities[i] = id
	}
	cp.Hosts = append([]Host(nil), c.Hosts...)
	for i := range cp.Hosts {
		cp.Hosts[i].Grants = slices.Clone(cp.Hosts[i].Grants) // nil stays nil: every capability
	}
	cp.Plugins = nil
	if len(c.Plugins) > 0 {
		cp.Plugins = make([]Plugin, len(c.Plugins))
	}
	for i, p := range c.Plugins {
		p.Grants = append([]string{}, p.Grants...)
		cp.Plugins[i] = p
	}
	cp.Limits = c.Limits.clone()
	cp.Mail.BlockedSenders = slices.Clone(c.Mail.BlockedSenders)
	cp.Wake = c.Wake.clone()
	return &cp
}

// Save validates c and writes it to home/config.toml atomically (a
// temporary file in the home with mode 0600, fsync, rename, fsync of the
// directory), replacing any existing file. The home is created with mode
// 0700 if missing. A failed save leaves the previous file untouched.
func (c *Config) Save() error { return c.save(true) }

// SaveNew is Save for `apconnect init`: it refuses to replace an existing
// config.toml (the error wraps fs.ErrExist).
func (c *Config) SaveNew() error { return c.save(false) }

func (c *Config) save(replace bool) error {
	if c.home == "" {
		return errors.New("config: this Config has no home; build it with Load or Default")
	}
	data, err := c.Marshal()
	if err != nil {
		return err
	}
	return writeFileAtomic(c.File(), data, replace)
}

// writeFileAtomic writes data to path with mode 0600 through
// atomicfile: replacing it (replace) or refusing an existing file (!replace).
func writeFileAtomic(path string, data []byte, replace bool) error {
	write := atomicfile.WriteNew
	if replace {
		write = atomicfile.Write
	}
	if err := write(path, data); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("config: %s: %w: refusing to replace an existing configuration", path, fs.ErrExist)
		}
		return fmt.Errorf("config: writing %s: %w", path, err)
	}
	return nil
}

// AddIdentity appends an identity with the default key file
// (keys/<name>.key) and validates the result. An identity of that name
// already present is an error.
func (c *Config) AddIdentity(name string) error {
	if _, err := c.Identity(name); err == nil {
		return fmt.Errorf("config: identity %q already exists in %s", name, c.File())
	}
	c.Identities = append(c.Identities, Identity{Name: name, KeyFile: filepath.ToSlash(filepath.Join("keys", name+".key"))})
	if err := c.Validate(); err != nil {
		c.Identities = c.Identities[:len(c.Identities)-1]
		return err
	}
	return nil
}

// AddHost allows one more ADP host, labelled from its name (with a numeric
// suffix when the label is taken), with every capability. A host already
// present is left as it is.
func (c *Config) AddHost(url, caFile string) error { return c.AddHostGrants(url, caFile, nil) }

// AddHostGrants is AddHost with the new host's grants as written: nil
// leaves the key out (every capability), an empty list grants none. A host
// already present is left as it is when grants is nil or names the same
// effective grants; other grants for it are an error, since this never
// changes what an existing entry grants.
func (c *Config) AddHostGrants(url, caFile string, grants []string) error {
	if h, err := c.Host(url); err == nil {
		if grants == nil {
			return nil
		}
		want, err := capability.Parse(grants)
		if err != nil {
			return fmt.Errorf("config: grants: %w", err)
		}
		if have := h.GrantSet(); have != want {
			return fmt.Errorf("config: host %s (%s) is already configured and grants %s, not %s; edit its grants in %s",
				h.URL, h.Label, have, want, c.File())
		}
		return nil
	}
	base := labelFor(url)
	label := base
	for i := 2; ; i++ {
		if _, err := c.Host(label); err != nil {
			break
		}
		label = fmt.Sprintf("%s-%d", base, i)
	}
	c.Hosts = append(c.Hosts, Host{URL: url, Label: label, CAFile: caFile, Grants: slices.Clone(grants)})
	c.normalize()
	if err := c.Validate(); err != nil {
		c.Hosts = c.Hosts[:len(c.Hosts)-1]
		return err
	}
	return nil
}
