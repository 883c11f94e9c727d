package config

import (
	"fmt"

	"apconnect/host/capability"
)

// ProfileServiceGrants returns what an identity's profile service that has
// no [[hosts]] entry of its own is granted: agent.profile.read and
// agent.profile.write, nothing else.
func ProfileServiceGrants() capability.Set {
	return capability.NewSet(capability.ProfileRead, capability.ProfileWrite)
}

// GrantSet returns the host's effective grants: every capability when its
// Grants are nil (the key absent), none for an empty list, otherwise the
// listed capabilities with the reads their writes imply. A list Validate
// would refuse grants nothing.
func (h *Host) GrantSet() capability.Set {
	if h.Grants == nil {
		return capability.All()
	}
	s, err := capability.Parse(h.Grants)
	if err != nil {
		return capability.Set{}
	}
	return s
}

// Grants returns the effective grants of origin for the identity ident,
// and whether the origin is configured at all. The origin is normalized as
// NormalizeOrigin does, so "HTTPS://Adp.Example.com:443/" finds the entry
// for "https://adp.example.com".
//
//   - An origin with a [[hosts]] entry has that entry's grants (GrantSet),
//     whichever identity asks, and only that origin has them: granting a
//     room host grants nothing on the profile service it names.
//   - Otherwise, an origin among ident's profile_services has
//     ProfileServiceGrants.
//   - Any other origin, or one that is not an https origin, is not
//     configured: ok is false and the set is empty.
//
// ident may be nil: then only [[hosts]] entries count.
func (c *Config) Grants(ident *Identity, origin string) (grants capability.Set, ok bool) {
	norm, err := NormalizeOrigin(origin)
	if err != nil {
		return capability.Set{}, false
	}
	if h := c.hostByOrigin(norm); h != nil {
		return h.GrantSet(), true
	}
	if ident != nil {
		for _, s := range ident.ProfileServices {
			if n, err := NormalizeOrigin(s); err == nil && n == norm {
				return ProfileServiceGrants(), true
			}
		}
	}
	return capability.Set{}, false
}

// hostByOrigin returns the [[hosts]] entry of a normalized origin, or nil.
func (c *Config) hostByOrigin(norm string) *Host {
	for i := range c.Hosts {
		if n, err := NormalizeOrigin(c.Hosts[i].URL); err == nil && n == norm {
			return &c.Hosts[i]
		}
	}
	return nil
}

// Origin is one origin an identity may reach, with its effective grants.
type Origin struct {
	// URL is the normalized origin.
	URL string
	// Host is the origin's [[hosts]] entry, nil for a profile service of
	// the identity that has none.
	Host *Host
	// Grants are the effective grants, as Config.Grants answers them.
	Grants capability.Set
}

// Origins lists every origin ident may reach: the [[hosts]] entries in
// file order, then ident's profile services that have no entry, in the
// order the identity lists them. With a nil ident, only the [[hosts]]
// entries.
func (c *Config) Origins(ident *Identity) []Origin {
	out := make([]Origin, 0, len(c.Hosts))
	seen := map[string]bool{}
	for i := range c.Hosts {
		h := &c.Hosts[i]
		n, err := NormalizeOrigin(h.URL)
		if err != nil || seen[n] {
			continue
		}
		seen[n] = true
		out = append(out, Origin{URL: n, Host: h, Grants: h.GrantSet()})
	}
	if ident == nil {
		return out
	}
	for _, s := range ident.ProfileServices {
		n, err := NormalizeOrigin(s)
		if err != nil || seen[n] {
			continue
		}
		seen[n] = true
		out = append(out, Origin{URL: n, Grants: ProfileServiceGrants()})
	}
	return out
}

// checkGrants validates a host's grants: every name is in the vocabulary
// and none is listed twice. An absent list (nil) grants everything and an
// empty one nothing; both are valid.
func checkGrants(ps *problems, at string, grants []string) {
	first := map[string]int{}
	for j, g := range grants {
		f := fmt.Sprintf("%s.grants[%d]", at, j)
		if _, err := capability.Lookup(g); err != nil {
			ps.add(f, "%v", err)
			continue
		}
		if k, dup := first[g]; dup {
			ps.add(f, "%q is already granted by grants[%d]", g, k)
			continue
		}
		first[g] = j
	}
}
