package plugin

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Grants are the capabilities the operator gives a plugin in the config.
// Anything the plugin describes beyond them refuses the plugin at load.
type Grants struct {
	Validate bool     // "validate": check proposed events of its types
	Watch    bool     // "watch": see verified records of its watched types
	Tools    bool     // "tools": add MCP tools
	Packs    bool     // "packs": provide type packs
	Propose  []string // "propose:<event type>": tools may propose events of these types
}

// AllGrants returns every grant except propose, which always names types.
func AllGrants() Grants { return Grants{Validate: true, Watch: true, Tools: true, Packs: true} }

var eventTypePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)+$`)

// ParseGrants reads the config form of grants: "validate", "watch",
// "tools", "packs" and "propose:<event type>". Unknown or repeated entries
// are errors.
func ParseGrants(list []string) (Grants, error) {
	var g Grants
	seen := map[string]bool{}
	for _, s := range list {
		if seen[s] {
			return Grants{}, fmt.Errorf("grant %q is listed twice", s)
		}
		seen[s] = true
		switch {
		case s == "validate":
			g.Validate = true
		case s == "watch":
			g.Watch = true
		case s == "tools":
			g.Tools = true
		case s == "packs":
			g.Packs = true
		case strings.HasPrefix(s, "propose:"):
			t := strings.TrimPrefix(s, "propose:")
			if !eventTypePattern.MatchString(t) {
				return Grants{}, fmt.Errorf("grant %q: %q is not an event type name", s, t)
			}
			g.Propose = append(g.Propose, t)
		default:
			return Grants{}, fmt.Errorf("unknown grant %q (want validate, watch, tools, packs or propose:<event type>)", s)
		}
	}
	slices.Sort(g.Propose)
	return g, nil
}

// Strings returns the config form of g, in canonical order.
func (g Grants) Strings() []string {
	var out []string
	if g.Validate {
		out = append(out, "validate")
	}
	if g.Watch {
		out = append(out, "watch")
	}
	if g.Tools {
		out = append(out, "tools")
	}
	if g.Packs {
		out = append(out, "packs")
	}
	p := slices.Clone(g.Propose)
	slices.Sort(p)
	for _, t := range slices.Compact(p) {
		out = append(out, "propose:"+t)
	}
	return out
}

// CanPropose reports whether g holds propose:<typ>.
func (g Grants) CanPropose(typ string) bool { return slices.Contains(g.Propose, typ) }

// ProposesAny reports whether g holds at least one propose grant, which
// makes the plugin's tools not read-only.
func (g Grants) ProposesAny() bool { return len(g.Propose) > 0 }
