package config

import (
	"fmt"
	"net"
	"regexp"
	"strings"

	"apconnect/host/identity"
)

// Patterns shared with schemas/config.schema.json; a test checks that the
// schema uses exactly these strings. They are written in the common subset
// of RE2 and ECMA-262 regular expressions.
const (
	// NamePattern is the syntax of identity names and host labels.
	NamePattern = `^[a-z0-9_-]{1,32}$`
	// PluginNamePattern is the syntax of plugin names (their tools are
	// named <plugin>_<tool> in [a-z0-9_]).
	PluginNamePattern = `^[a-z][a-z0-9_]{0,31}$`
	// PortPattern is a decimal port 1..65535 without leading zeros (no
	// anchors; used inside OriginPattern and ListenPattern).
	PortPattern = `([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])`
	// OriginPattern is the shape of an https origin as written in the file;
	// NormalizeOrigin also checks that a bracketed IPv6 address parses, and
	// normalizes the origin.
	OriginPattern = `^[Hh][Tt][Tt][Pp][Ss]://([A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(:` + PortPattern + `)?/?$`
	// SHA256Pattern is a lowercase hex SHA-256 digest.
	SHA256Pattern = `^[0-9a-f]{64}$`
	// GrantPattern is the syntax of a plugin grant; the event type of a
	// propose grant follows ADP's event type name syntax.
	GrantPattern = `^(validate|watch|tools|packs|propose:[a-z0-9][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)+)$`
	// ReservedProposePattern matches propose grants for ADP's reserved
	// room.* and type.* event types, which no plugin may propose.
	ReservedProposePattern = `^propose:(room|type)\.`
	// ListenPattern is the shape of http.listen: loopback only.
	ListenPattern = `^(127\.0\.0\.1|\[::1\]):` + PortPattern + `$`
	// ReservedPluginPrefix is the prefix of the connector's own tools, which
	// no plugin name may start with.
	ReservedPluginPrefix = "agent_protocols"
	// MaxGrantLen bounds a grant string.
	MaxGrantLen = 136
)

var (
	nameRE            = regexp.MustCompile(NamePattern)
	pluginNameRE      = regexp.MustCompile(PluginNamePattern)
	originRE          = regexp.MustCompile(OriginPattern)
	sha256RE          = regexp.MustCompile(SHA256Pattern)
	grantRE           = regexp.MustCompile(GrantPattern)
	reservedProposeRE = regexp.MustCompile(ReservedProposePattern)
	listenRE          = regexp.MustCompile(ListenPattern)
	portRE            = regexp.MustCompile(`^` + PortPattern + `$`)
)

// NormalizeOrigin checks that raw is an https origin — scheme and host, an
// optional port, nothing else (no path, query, fragment or user info; a
// single trailing "/" is tolerated) — and returns its normal form: lowercase
// scheme and host, no default port :443, no trailing slash.
func NormalizeOrigin(raw string) (string, error) {
	switch {
	case raw == "":
		return "", fmt.Errorf("must be an https origin such as https://adp.example.com, got an empty string")
	case !strings.HasPrefix(strings.ToLower(raw), "https://"):
		if i := strings.Index(raw, "://"); i > 0 {
			return "", fmt.Errorf("must be an https origin: scheme %q is not allowed, only https", raw[:i])
		}
		return "", fmt.Errorf("must be an https origin such as https://adp.example.com")
	case strings.ContainsAny(raw, "@"):
		return "", fmt.Errorf("must be an https origin without user info")
	case strings.Contains(raw, "?"):
		return "", fmt.Errorf("must be an https origin without a query")
	case strings.Contains(raw, "#"):
		return "", fmt.Errorf("must be an https origin without a fragment")
	}
	rest := raw[len("https://"):]
	if rest == "" || rest == "/" || strings.HasPrefix(rest, ":") || strings.HasPrefix(rest, "/") {
		return "", fmt.Errorf("must be an https origin with a host")
	}
	if i := strings.Index(rest, "/"); i >= 0 && i != len(rest)-1 {
		return "", fmt.Errorf("must be an https origin without a path")
	}
	if p, ok := portOf(rest); ok && !portRE.MatchString(p) {
		return "", fmt.Errorf("must be an https origin: port %q is not a number from 1 to 65535 without leading zeros", p)
	}
	if !originRE.MatchString(raw) {
		return "", fmt.Errorf("must be an https origin (https://host or https://host:port); the host must be a DNS name of [A-Za-z0-9.-] (internationalized names in their xn-- form), an IPv4 address or a bracketed IPv6 address")
	}
	if strings.HasPrefix(rest, "[") {
		if end := strings.Index(rest, "]"); end > 0 && net.ParseIP(rest[1:end]) == nil {
			return "", fmt.Errorf("must be an https origin: %q is not an IPv6 address", rest[1:end])
		}
	}
	// The normal form is identity's: the same string the connector uses as
	// the request JWT audience and the hub as its service origin.
	n, err := identity.NormalizeOrigin(raw)
	if err != nil {
		return "", fmt.Errorf("must be an https origin: %v", err)
	}
	return n, nil
}

// portOf returns the text after the port colon of "host[:port][/]" and
// whether there is a port colon at all.
func portOf(hostPort string) (string, bool) {
	hp := strings.TrimSuffix(hostPort, "/")
	if i := strings.LastIndex(hp, "]"); i >= 0 {
		hp = hp[i+1:]
	}
	if i := strings.LastIndex(hp, ":"); i >= 0 {
		return hp[i+1:], true
	}
	return "", false
}

// normalize rewrites host and profile service URLs to their normal form
// where they are valid; invalid ones are left for Validate to report.
func (c *Config) normalize() {
	for i := range c.Hosts {
		if n, err := NormalizeOrigin(c.Hosts[i].URL); err == nil {
			c.Hosts[i].URL = n
		}
	}
	for i := range c.Identities {
		for j, s := range c.Identities[i].ProfileServices {
			if n, err := NormalizeOrigin(s); err == nil {
				c.Identities[i].ProfileServices[j] = n
			}
		}
	}
}

// Validate checks every rule of the configuration and returns an *Error
// listing all problems, or nil. Load, Default and Save call it; call it
// after changing a Config in memory.
func (c *Config) Validate() error {
	ps := c.problems()
	if len(ps) == 0 {
		return nil
	}
	return &Error{File: c.fileOrEmpty(), Problems: ps}
}

// problems checks every rule, section by section in file order.
func (c *Config) problems() problems {
	var ps problems
	c.validateIdentities(&ps)
	c.validateHosts(&ps)
	c.validateState(&ps)
	c.validateHTTP(&ps)
	c.validateLimits(&ps)
	c.validateMail(&ps)
	c.validateWake(&ps)
	c.validatePlugins(&ps)
	return ps
}

// validateIdentities checks [[identities]]: names, paths, profile services
// and the default.
func (c *Config) validateIdentities(ps *problems) {
	names := map[string]int{}
	var defaults []string
	for i, id := range c.Identities {
		at := fmt.Sprintf("identities[%d]", i)
		if !nameRE.MatchString(id.Name) {
			ps.add(at+".name", "%q must be 1 to 32 characters of lowercase a-z, 0-9, '_' or '-'", id.Name)
		} else if j, dup := names[id.Name]; dup {
			ps.add(at+".name", "%q is already used by identities[%d]", id.Name, j)
		} else {
			names[id.Name] = i
		}
		checkPath(ps, at+".key_file", id.KeyFile, true)
		checkPath(ps, at+".passphrase_file", id.PassphraseFile, false)
		checkProfileServices(ps, at, id.ProfileServices)
		if id.Default {
			defaults = append(defaults, at)
		}
	}
	if len(c.Identities) > 1 && len(defaults) != 1 {
		if len(defaults) == 0 {
			ps.add("identities", "with more than one identity exactly one must have default = true; none has")
		} else {
			ps.add("identities", "with more than one identity exactly one must have default = true; %s all have", strings.Join(defaults, ", "))
		}
	}
}

// checkProfileServices checks an identity's profile services: https
// origins, none listed twice after normalization.
func checkProfileServices(ps *problems, at string, services []string) {
	seen := map[string]int{}
	for j, s := range services {
		f := fmt.Sprintf("%s.profile_services[%d]", at, j)
		n, err := NormalizeOrigin(s)
		if err != nil {
			ps.add(f, "%v", err)
			continue
		}
		if k, dup := seen[n]; dup {
			ps.add(f, "%s is listed twice (also profile_services[%d])", n, k)
			continue
		}
		seen[n] = j
	}
}

// validateHosts checks [[hosts]]: URLs and labels unique, CA files and
// grants.
func (c *Config) validateHosts(ps *problems) {
	labels := map[string]int{}
	urls := map[string]int{}
	for i, h := range c.Hosts {
		at := fmt.Sprintf("hosts[%d]", i)
		if n, err := NormalizeOrigin(h.URL); err != nil {
			ps.add(at+".url", "%v", err)
		} else if j, dup := urls[n]; dup {
			ps.add(at+".url", "%s is already listed as hosts[%d]", n, j)
		} else {
			urls[n] = i
		}
		if !nameRE.MatchString(h.Label) {
			ps.add(at+".label", "%q must be 1 to 32 characters of lowercase a-z, 0-9, '_' or '-'", h.Label)
		} else if j, dup := labels[h.Label]; dup {
			ps.add(at+".label", "%q is already used by hosts[%d]", h.Label, j)
		} else {
			labels[h.Label] = i
		}
		checkPath(ps, at+".ca_file", h.CAFile, false)
		checkGrants(ps, at, h.Grants)
	}
}

// validateState checks [state].
func (c *Config) validateState(ps *problems) {
	checkPath(ps, "state.dir", c.State.Dir, true)
	if r := c.State.RecordsPerRoom; r < MinRecordsPerRoom || r > MaxRecordsPerRoom {
		ps.add("state.records_per_room", "%d is outside %d..%d", r, MinRecordsPerRoom, MaxRecordsPerRoom)
	}
}

// validateHTTP checks [http].
func (c *Config) validateHTTP(ps *problems) {
	if !listenRE.MatchString(c.HTTP.Listen) {
		ps.add("http.listen", "%q must be 127.0.0.1:<port> or [::1]:<port> with a port from 1 to 65535; the MCP listener binds loopback only", c.HTTP.Listen)
	}
	checkPath(ps, "http.token_file", c.HTTP.TokenFile, true)
}

// validatePlugins checks [[plugins]]: names unique and not reserved, paths,
// digests, grants and limits.
func (c *Config) validatePlugins(ps *problems) {
	pnames := map[string]int{}
	for i, p := range c.Plugins {
		at := fmt.Sprintf("plugins[%d]", i)
		switch {
		case !pluginNameRE.MatchString(p.Name):
			ps.add(at+".name", "%q must start with a-z and have at most 32 characters of lowercase a-z, 0-9 or '_'", p.Name)
		case strings.HasPrefix(p.Name, ReservedPluginPrefix):
			ps.add(at+".name", "%q must not start with %q, the prefix of the connector's own tools", p.Name, ReservedPluginPrefix)
		default:
			if j, dup := pnames[p.Name]; dup {
				ps.add(at+".name", "%q is already used by plugins[%d]", p.Name, j)
			} else {
				pnames[p.Name] = i
			}
		}
		checkPath(ps, at+".path", p.Path, true)
		if !sha256RE.MatchString(p.SHA256) {
			ps.add(at+".sha256", "must be the SHA-256 of the .wasm file as 64 lowercase hexadecimal digits")
		}
		checkPluginGrants(ps, at, p.Grants)
		checkRange(ps, at+".limits.memory_mib", p.Limits.MemoryMiB, 1, MaxPluginMemoryMiB)
		checkRange(ps, at+".limits.validate_ms", p.Limits.ValidateMS, 1, MaxPluginCallMS)
		checkRange(ps, at+".limits.watch_ms", p.Limits.WatchMS, 1, MaxPluginCallMS)
		checkRange(ps, at+".limits.tool_ms", p.Limits.ToolMS, 1, MaxPluginCallMS)
	}
}

// checkPluginGrants checks a plugin's grants: each a grant, none reserved,
// none twice.
func checkPluginGrants(ps *problems, at string, grants []string) {
	first := map[string]int{}
	for j, g := range grants {
		f := fmt.Sprintf("%s.grants[%d]", at, j)
		switch {
		case len(g) > MaxGrantLen:
			ps.add(f, "longer than %d characters", MaxGrantLen)
		case !grantRE.MatchString(g):
			ps.add(f, "%q is not a grant: use validate, watch, tools, packs or propose:<event type> (a dotted lowercase event type name such as propose:poll.create)", g)
		case reservedProposeRE.MatchString(g):
			ps.add(f, "%q: room.* and type.* event types are reserved by ADP and cannot be granted to a plugin", g)
		default:
			if k, dup := first[g]; dup {
				ps.add(f, "%q is already granted by grants[%d]", g, k)
			} else {
				first[g] = j
			}
		}
	}
}

func (c *Config) fileOrEmpty() string {
	if c.home == "" {
		return ""
	}
	return c.File()
}

// checkPath checks a path setting: required ones must not be empty; none
// may start with "~" (not expanded: write an absolute path or one relative
// to the home) or be longer than 4096 bytes. An optional path that is empty
// is not set.
func checkPath(ps *problems, field, p string, required bool) {
	switch {
	case p == "":
		if required {
			ps.add(field, "is required: a path, absolute or relative to the apconnect home")
		}
	case strings.HasPrefix(p, "~"):
		ps.add(field, "%q: '~' is not expanded; write an absolute path or one relative to the apconnect home", p)
	case len(p) > maxPathLen:
		ps.add(field, "longer than %d bytes", maxPathLen)
	}
}

func checkRange(ps *problems, field string, v, lo, hi int) {
	if v < lo || v > hi {
		ps.add(field, "%d is outside %d..%d", v, lo, hi)
	}
}
