package config

import (
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"apconnect/host/capability"
)

// hostsDoc is an identity with one profile service and three origins: one
// with every capability (no grants key), one with none, one narrowed.
const hostsDoc = okIdentity + `profile_services = ["https://profiles.example", "https://hub.example"]

[[hosts]]
url = "https://all.example"
label = "all"

[[hosts]]
url = "https://none.example"
label = "none"
grants = []

[[hosts]]
url = "https://hub.example"
label = "hub"
grants = ["discourse.write", "agent.profile.read"]
`

func TestHostGrantsDecoded(t *testing.T) {
	c, err := Parse([]byte(hostsDoc))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		label  string
		raw    []string
		isNil  bool
		grants []string
	}{
		{"all", nil, true, capability.All().Names()},
		{"none", []string{}, false, []string{}},
		{"hub", []string{"discourse.write", "agent.profile.read"}, false, []string{"discourse.read", "discourse.write", "agent.profile.read"}},
	}
	for _, tc := range cases {
		h, err := c.Host(tc.label)
		if err != nil {
			t.Fatal(err)
		}
		if (h.Grants == nil) != tc.isNil || !slices.Equal(h.Grants, tc.raw) {
			t.Errorf("%s: Grants %#v, want %#v", tc.label, h.Grants, tc.raw)
		}
		if got := h.GrantSet().Names(); !slices.Equal(got, tc.grants) {
			t.Errorf("%s: GrantSet %v, want %v", tc.label, got, tc.grants)
		}
	}
	// A list Validate refuses grants nothing, never everything.
	bad := Host{URL: "https://x.example", Label: "x", Grants: []string{"mail.read", "bogus"}}
	if !bad.GrantSet().IsEmpty() {
		t.Fatalf("an invalid list grants %v", bad.GrantSet())
	}
}

// TestGrants covers every rule of Config.Grants.
func TestGrants(t *testing.T) {
	c, err := Parse([]byte(strings.Replace(hostsDoc, `key_file = "a.key"`, "key_file = \"a.key\"\ndefault = true", 1) + `
[[identities]]
name = "b"
key_file = "b.key"
profile_services = ["https://other-profiles.example"]
`))
	if err != nil {
		t.Fatal(err)
	}
	a, b := &c.Identities[0], &c.Identities[1]
	profile := []string{"agent.profile.read", "agent.profile.write"}
	cases := []struct {
		name   string
		ident  *Identity
		origin string
		ok     bool
		want   []string
	}{
		{"no grants key: every capability", a, "https://all.example", true, capability.All().Names()},
		{"grants = []: none", a, "https://none.example", true, []string{}},
		{"narrowed, a write bringing its read", a, "https://hub.example", true, []string{"discourse.read", "discourse.write", "agent.profile.read"}},
		{"the origin is normalized", a, "HTTPS://All.Example:443/", true, capability.All().Names()},
		{"a host's grants whichever identity asks", b, "https://none.example", true, []string{}},
		{"a host's grants with no identity", nil, "https://hub.example", true, []string{"discourse.read", "discourse.write", "agent.profile.read"}},
		{"a profile service without an entry: profiles only", a, "https://profiles.example", true, profile},
		{"a profile service normalized", a, "https://PROFILES.example/", true, profile},
		{"a profile service with an entry: the entry decides (narrower)", a, "https://hub.example", true, []string{"discourse.read", "discourse.write", "agent.profile.read"}},
		{"another identity's profile service", b, "https://profiles.example", false, []string{}},
		{"the other identity's own profile service", b, "https://other-profiles.example", true, profile},
		{"profile services need an identity", nil, "https://profiles.example", false, []string{}},
		{"an origin nobody configured", a, "https://elsewhere.example", false, []string{}},
		{"another port is another origin", a, "https://all.example:8443", false, []string{}},
		{"not https", a, "http://all.example", false, []string{}},
		{"not an origin", a, "https://all.example/v1", false, []string{}},
		{"empty", a, "", false, []string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := c.Grants(tc.ident, tc.origin)
			if ok != tc.ok || !slices.Equal(got.Names(), tc.want) {
				t.Fatalf("Grants(%v, %q) = %v, %v; want %v, %v", tc.ident != nil, tc.origin, got.Names(), ok, tc.want, tc.ok)
			}
		})
	}

	// A [[hosts]] entry can also widen a profile service.
	c.Hosts = append(c.Hosts, Host{URL: "https://profiles.example", Label: "profiles"})
	if got, ok := c.Grants(a, "https://profiles.example"); !ok || got != capability.All() {
		t.Fatalf("widened profile service: %v %v", got, ok)
	}
	// A Config built in memory with an origin not yet normalized.
	lit := &Config{Hosts: []Host{{URL: "HTTPS://Lit.Example/", Label: "lit", Grants: []string{"mail.read"}}}}
	if got, ok := lit.Grants(nil, "https://lit.example"); !ok || !slices.Equal(got.Names(), []string{"mail.read"}) {
		t.Fatalf("literal config: %v %v", got, ok)
	}
}

func TestOrigins(t *testing.T) {
	c, err := Parse([]byte(hostsDoc))
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		url, label string
		grants     string
	}
	var got []row
	for _, o := range c.Origins(&c.Identities[0]) {
		label := ""
		if o.Host != nil {
			label = o.Host.Label
		}
		got = append(got, row{o.URL, label, o.Grants.String()})
		if g, ok := c.Grants(&c.Identities[0], o.URL); !ok || g != o.Grants {
			t.Errorf("Origins and Grants disagree on %s: %v, %v", o.URL, o.Grants, g)
		}
	}
	want := []row{
		{"https://all.example", "all", capability.All().String()},
		{"https://none.example", "none", "none"},
		{"https://hub.example", "hub", "discourse.read, discourse.write, agent.profile.read"},
		{"https://profiles.example", "", "agent.profile.read, agent.profile.write"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Origins:\n%v\nwant\n%v", got, want)
	}
	if n := len(c.Origins(nil)); n != 3 {
		t.Fatalf("Origins(nil) has %d entries, want the 3 hosts", n)
	}
}

// lineCol returns the 1-based line and column of the nth (0-based)
// occurrence of s in doc.
func lineCol(t *testing.T, doc, s string, nth int) (int, int) {
	t.Helper()
	off := -1
	for range nth + 1 {
		i := strings.Index(doc[off+1:], s)
		if i < 0 {
			t.Fatalf("%q occurs fewer than %d times", s, nth+1)
		}
		off += 1 + i
	}
	line := strings.Count(doc[:off], "\n") + 1
	return line, off - strings.LastIndex(doc[:off], "\n")
}

// TestGrantProblemsNameTheirLine: an unknown or repeated name is a problem
// that names the item, the name and its line and column, in a one-line
// array, a multi-line one (with comments), a later [[hosts]] table and the
// inline form.
func TestGrantProblemsNameTheirLine(t *testing.T) {
	host := func(url, grants string) string {
		return "[[hosts]]\nurl = \"" + url + "\"\nlabel = \"" + strings.Split(url, ".")[0][8:] + "\"\n" + grants
	}
	cases := []struct {
		name  string
		doc   string
		field string
		bad   string // the quoted name the problem is about
		nth   int    // which occurrence of it in the document
		inMsg string
	}{
		{"unknown, one line", okIdentity + host("https://a.example", `grants = ["discourse.read", "rooms.write"]`+"\n"),
			"hosts[0].grants[1]", `"rooms.write"`, 0, "unknown capability"},
		{"unknown, multi-line", okIdentity + host("https://a.example", "grants = [\n  \"discourse.read\",   # rooms\n  # profiles:\n  \"agent.profile.read\",\n\n  \"profile.write\",\n]\n"),
			"hosts[0].grants[2]", `"profile.write"`, 0, `did you mean "agent.profile.write"?`},
		{"duplicate, multi-line", okIdentity + host("https://a.example", "grants = [\n\"mail.read\",\n\"mail.write\",\n\"mail.read\"\n]\n"),
			"hosts[0].grants[2]", `"mail.read"`, 1, "already granted by grants[0]"},
		{"second host", okIdentity + host("https://a.example", `grants = ["mail.read"]`+"\n") + "\n[state]\nrecords_per_room = 10\n\n" +
			host("https://b.example", "grants = [\n  'mail.read',\n  'Mail.Write',\n]\n"),
			"hosts[1].grants[1]", `'Mail.Write'`, 0, `"Mail.Write"`},
		{"after a host without grants", okIdentity + host("https://a.example", "") + host("https://b.example", `grants = ["knowledge.*"]`+"\n"),
			"hosts[1].grants[0]", `"knowledge.*"`, 0, `did you mean "knowledge.read" and "knowledge.write"?`},
		{"inline hosts", okIdentity[:0] + "hosts = [\n  { url = \"https://a.example\", label = \"a\" },\n  { url = \"https://b.example\", label = \"b\", grants = [\n    \"mail.read\",\n    \"tools\",\n  ] },\n]\n" + okIdentity,
			"hosts[1].grants[1]", `"tools"`, 0, "unknown capability"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ce, msg := loadProblems(t, tc.doc)
			p, ok := ce.Field(tc.field)
			if !ok {
				t.Fatalf("no problem for %s in %+v", tc.field, ce.Problems)
			}
			line, col := lineCol(t, tc.doc, tc.bad, tc.nth)
			if p.Line != line || p.Column != col {
				t.Fatalf("%s at line %d, column %d; want line %d, column %d\n%s", tc.field, p.Line, p.Column, line, col, tc.doc)
			}
			name := strings.Trim(tc.bad, `"'`)
			if !strings.Contains(p.Message, `"`+name+`"`) || !strings.Contains(p.Message, tc.inMsg) {
				t.Fatalf("message %q does not name %q or lacks %q", p.Message, name, tc.inMsg)
			}
			if want := p.String(); !strings.Contains(msg, want) || !strings.HasPrefix(want, "line ") {
				t.Fatalf("error text %q lacks %q", msg, want)
			}
			if len(ce.Problems) != 1 {
				t.Fatalf("problems: %+v", ce.Problems)
			}
		})
	}
}

func TestGrantsSaveRoundTrip(t *testing.T) {
	home := t.TempDir()
	c, err := Default(home, DefaultOptions{HostURL: "https://all.example"})
	if err != nil {
		t.Fatal(err)
	}
	c.Hosts = append(c.Hosts,
		Host{URL: "https://none.example", Label: "none", Grants: []string{}},
		Host{URL: "https://some.example", Label: "some", Grants: []string{"mail.write", "discourse.read"}})
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(c.File())
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	if strings.Count(text, "\ngrants = ") != 2 || !strings.Contains(text, "grants = []") ||
		!strings.Contains(text, `grants = ['mail.write', 'discourse.read']`) {
		t.Fatalf("saved file:\n%s", text)
	}
	back, err := Load(home)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Hosts, c.Hosts) {
		t.Fatalf("reloaded %#v, saved %#v", back.Hosts, c.Hosts)
	}
	if back.Hosts[0].Grants != nil || back.Hosts[1].Grants == nil {
		t.Fatal("absent and empty grants did not survive a save")
	}
	// Marshal leaves the Config alone, nil included.
	if _, err := c.Marshal(); err != nil || c.Hosts[0].Grants != nil {
		t.Fatalf("Marshal: %v, grants %#v", err, c.Hosts[0].Grants)
	}
	// A refused name is refused on save as well.
	c.Hosts[2].Grants = []string{"mail.send"}
	var ce *Error
	if err := c.Save(); !errors.As(err, &ce) {
		t.Fatalf("saved an unknown capability: %v", err)
	} else if p, ok := ce.Field("hosts[2].grants[0]"); !ok || p.Line != 0 || !strings.Contains(p.Message, `"mail.send"`) {
		t.Fatalf("problems %+v", ce.Problems)
	}
}

func TestDefaultAndAddHostGrants(t *testing.T) {
	home := t.TempDir()
	c, err := Default(home, DefaultOptions{HostURL: "https://a.example", HostGrants: []string{"discourse.write"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Hosts[0].Grants; !slices.Equal(got, []string{"discourse.write"}) {
		t.Fatalf("Default grants %v", got)
	}
	if _, err := Default(home, DefaultOptions{HostURL: "https://a.example", HostGrants: []string{"discourse.post"}}); err == nil ||
		!strings.Contains(err.Error(), `hosts[0].grants[0]: unknown capability "discourse.post"`) {
		t.Fatalf("Default with an unknown grant: %v", err)
	}
	if c, err := Default(home, DefaultOptions{HostURL: "https://a.example"}); err != nil || c.Hosts[0].Grants != nil {
		t.Fatalf("Default without grants: %v %#v", err, c.Hosts[0].Grants)
	}

	cases := []struct {
		name    string
		url     string
		grants  []string
		errPart string
		want    []string // the entry's grants as written afterwards; nil: absent
		hosts   int
	}{
		{"new host with grants", "https://b.example", []string{"mail.read"}, "", []string{"mail.read"}, 2},
		{"new host with none", "https://c.example", []string{}, "", []string{}, 3},
		{"new host with every capability", "https://d.example", nil, "", nil, 4},
		{"new host with an unknown grant", "https://e.example", []string{"mail.read", "mail.peek"}, `hosts[4].grants[1]: unknown capability "mail.peek"`, nil, 4},
		{"existing host, no grants given", "https://b.example", nil, "", []string{"mail.read"}, 4},
		{"existing host, same grants", "HTTPS://B.example", []string{"mail.read"}, "", []string{"mail.read"}, 4},
		{"existing host, other grants", "https://b.example", []string{"mail.write"}, "already configured and grants mail.read, not mail.read, mail.write", []string{"mail.read"}, 4},
		{"existing host, an unknown grant", "https://b.example", []string{"x"}, `unknown capability "x"`, []string{"mail.read"}, 4},
	}
	for _, tc := range cases {
		err := c.AddHostGrants(tc.url, "", tc.grants)
		if (err != nil) != (tc.errPart != "") || (err != nil && !strings.Contains(err.Error(), tc.errPart)) {
			t.Fatalf("%s: %v, want an error containing %q", tc.name, err, tc.errPart)
		}
		if len(c.Hosts) != tc.hosts {
			t.Fatalf("%s: %d hosts, want %d", tc.name, len(c.Hosts), tc.hosts)
		}
		if err == nil {
			h, herr := c.Host(tc.url)
			if herr != nil || (h.Grants == nil) != (tc.want == nil) || !slices.Equal(h.Grants, tc.want) {
				t.Fatalf("%s: entry %+v %v, want grants %#v", tc.name, h, herr, tc.want)
			}
		}
	}
	if err := c.AddHost("https://b.example", ""); err != nil {
		t.Fatalf("AddHost on an existing host: %v", err)
	}
}
