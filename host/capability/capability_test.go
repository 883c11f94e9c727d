package capability

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

// vocabulary is the closed list, written out independently of the code.
var vocabulary = []struct {
	name      string
	c         Capability
	protocol  Protocol
	access    Access
	id, known string
}{
	{"discourse.read", DiscourseRead, Discourse, Read, "agent-discourse/1.0", "agent-discourse"},
	{"discourse.write", DiscourseWrite, Discourse, Write, "agent-discourse/1.0", "agent-discourse"},
	{"agent.profile.read", ProfileRead, Profile, Read, "agent-profile/1.0", "agent-profile"},
	{"agent.profile.write", ProfileWrite, Profile, Write, "agent-profile/1.0", "agent-profile"},
	{"mail.read", MailRead, Mail, Read, "agent-mail/1.0", "agent-mail"},
	{"mail.write", MailWrite, Mail, Write, "agent-mail/1.0", "agent-mail"},
	{"knowledge.read", KnowledgeRead, Knowledge, Read, "agent-knowledge/1.0", "agent-knowledge"},
	{"knowledge.write", KnowledgeWrite, Knowledge, Write, "agent-knowledge/1.0", "agent-knowledge"},
	{"delegation.read", DelegationRead, Delegation, Read, "agent-delegation/1.0", "agent-delegation"},
	{"delegation.write", DelegationWrite, Delegation, Write, "agent-delegation/1.0", "agent-delegation"},
}

func TestVocabulary(t *testing.T) {
	var names []string
	for _, v := range vocabulary {
		names = append(names, v.name)
		t.Run(v.name, func(t *testing.T) {
			if !v.c.Valid() || v.c.String() != v.name {
				t.Fatalf("%d: valid %v, name %q", v.c, v.c.Valid(), v.c.String())
			}
			if v.c.Protocol() != v.protocol || v.c.Access() != v.access {
				t.Fatalf("protocol %v access %v, want %v %v", v.c.Protocol(), v.c.Access(), v.protocol, v.access)
			}
			if v.protocol.ID() != v.id || v.protocol.WellKnown() != v.known {
				t.Fatalf("protocol id %q well-known %q", v.protocol.ID(), v.protocol.WellKnown())
			}
			if got, err := Lookup(v.name); err != nil || got != v.c {
				t.Fatalf("Lookup: %v %v", got, err)
			}
			if !strings.HasPrefix(v.name, v.protocol.String()+".") || !strings.HasSuffix(v.name, "."+v.access.String()) {
				t.Fatalf("name %q does not read protocol %q and access %q", v.name, v.protocol, v.access)
			}
			want := []string{v.name}
			if v.access == Write {
				want = []string{v.protocol.Read().String(), v.name}
			}
			if got := v.c.Implies().Names(); !slices.Equal(got, want) {
				t.Fatalf("Implies: %v, want %v", got, want)
			}
			if v.protocol.Read().Access() != Read || v.protocol.Write().Access() != Write ||
				v.protocol.Read().Protocol() != v.protocol || v.protocol.Write().Protocol() != v.protocol {
				t.Fatal("Protocol.Read or Write is not the protocol's")
			}
		})
	}
	if got := All().Names(); !slices.Equal(got, names) {
		t.Fatalf("All().Names() = %v, want %v", got, names)
	}
	if All().Len() != 10 || len(byName) != 10 || len(Protocols()) != 5 {
		t.Fatalf("the vocabulary has %d names, %d protocols", All().Len(), len(Protocols()))
	}
}

func TestInvalidValues(t *testing.T) {
	for _, c := range []Capability{0, lastCapability + 1, 255} {
		if c.Valid() || c.Protocol() != 0 || c.Access() != 0 || !c.Implies().IsEmpty() || All().Has(c) {
			t.Errorf("capability %d is treated as valid", c)
		}
		if !strings.HasPrefix(c.String(), "capability(") {
			t.Errorf("String() = %q", c.String())
		}
		if _, err := c.MarshalText(); err == nil {
			t.Errorf("capability %d marshals", c)
		}
		if NewSet(c) != (Set{}) {
			t.Errorf("NewSet(%d) grants something", c)
		}
	}
	for _, p := range []Protocol{0, lastProtocol + 1} {
		if p.Valid() || p.Read() != 0 || p.Write() != 0 || p.ID() != "" || p.WellKnown() != "" {
			t.Errorf("protocol %d is treated as valid", p)
		}
	}
	if Access(0).String() != "access(0)" {
		t.Errorf("Access(0) = %q", Access(0).String())
	}
}

func TestParse(t *testing.T) {
	cases := []struct {
		name  string
		in    []string
		want  []string // effective names in vocabulary order
		has   []Capability
		hasnt []Capability
	}{
		{name: "nil grants nothing", in: nil, want: []string{}, hasnt: []Capability{DiscourseRead, ProfileRead}},
		{name: "empty grants nothing", in: []string{}, want: []string{}},
		{name: "one read", in: []string{"mail.read"}, want: []string{"mail.read"}, has: []Capability{MailRead}, hasnt: []Capability{MailWrite, KnowledgeRead}},
		{name: "a write implies its read", in: []string{"discourse.write"}, want: []string{"discourse.read", "discourse.write"},
			has: []Capability{DiscourseRead, DiscourseWrite}, hasnt: []Capability{ProfileRead, ProfileWrite}},
		{name: "a write and its read", in: []string{"knowledge.read", "knowledge.write"}, want: []string{"knowledge.read", "knowledge.write"}},
		{name: "the read of another protocol is not implied", in: []string{"delegation.write", "agent.profile.read"},
			want: []string{"agent.profile.read", "delegation.read", "delegation.write"}, hasnt: []Capability{ProfileWrite, DiscourseRead}},
		{name: "vocabulary order whatever the input order", in: []string{"delegation.read", "mail.write", "discourse.read", "agent.profile.write"},
			want: []string{"discourse.read", "agent.profile.read", "agent.profile.write", "mail.read", "mail.write", "delegation.read"}},
		{name: "all ten", in: All().Names(), want: All().Names()},
		{name: "all writes are all ten", in: []string{"discourse.write", "agent.profile.write", "mail.write", "knowledge.write", "delegation.write"}, want: All().Names()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Names(); !slices.Equal(got, tc.want) || got == nil {
				t.Fatalf("Names() = %#v, want %v", got, tc.want)
			}
			if s.Len() != len(tc.want) || s.IsEmpty() != (len(tc.want) == 0) {
				t.Fatalf("Len %d IsEmpty %v", s.Len(), s.IsEmpty())
			}
			for _, c := range tc.has {
				if !s.Has(c) {
					t.Errorf("Has(%s) = false", c)
				}
			}
			for _, c := range tc.hasnt {
				if s.Has(c) {
					t.Errorf("Has(%s) = true", c)
				}
			}
			// Has agrees with Names for every capability.
			for c := DiscourseRead; c <= lastCapability; c++ {
				if s.Has(c) != slices.Contains(tc.want, c.String()) {
					t.Errorf("Has(%s) = %v disagrees with Names %v", c, s.Has(c), tc.want)
				}
			}
			// The same set from the capabilities and from its own names.
			var cs []Capability
			for _, n := range tc.in {
				c, _ := Lookup(n)
				cs = append(cs, c)
			}
			if NewSet(cs...) != s {
				t.Error("NewSet differs from Parse")
			}
			if again, err := Parse(s.Names()); err != nil || again != s {
				t.Errorf("Parse(Names()) = %v, %v", again, err)
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	cases := []struct {
		name      string
		in        []string
		bad       string
		index     int
		duplicate bool
		first     int
		hint      string
	}{
		{name: "unknown", in: []string{"discourse.read", "rooms.write"}, bad: "rooms.write", index: 1},
		{name: "profile without agent", in: []string{"profile.read"}, bad: "profile.read", hint: `did you mean "agent.profile.read"?`},
		{name: "uppercase", in: []string{"mail.read", "Mail.Write"}, bad: "Mail.Write", index: 1, hint: `did you mean "mail.write"?`},
		{name: "wildcard", in: []string{"mail.*"}, bad: "mail.*", hint: `did you mean "mail.read" and "mail.write"?`},
		{name: "protocol alone", in: []string{"delegation"}, bad: "delegation", hint: `did you mean "delegation.read" and "delegation.write"?`},
		{name: "underscore", in: []string{"knowledge_read"}, bad: "knowledge_read", hint: `did you mean "knowledge.read"?`},
		{name: "padded", in: []string{" mail.read"}, bad: " mail.read", hint: `did you mean "mail.read"?`},
		{name: "empty name", in: []string{""}, bad: ""},
		{name: "plugin grant", in: []string{"tools"}, bad: "tools"},
		{name: "duplicate", in: []string{"mail.read", "discourse.read", "mail.read"}, bad: "mail.read", index: 2, duplicate: true, first: 0},
		{name: "duplicate write", in: []string{"knowledge.write", "knowledge.write"}, bad: "knowledge.write", index: 1, duplicate: true},
		{name: "first problem wins", in: []string{"x", "mail.read", "mail.read"}, bad: "x"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(tc.in)
			var ne *NameError
			if !errors.As(err, &ne) {
				t.Fatalf("Parse(%q) = %v, %v; want a *NameError", tc.in, s, err)
			}
			if s != (Set{}) {
				t.Fatalf("a refused list grants %v", s)
			}
			if ne.Name != tc.bad || ne.Index != tc.index || ne.Duplicate != tc.duplicate || ne.First != tc.first {
				t.Fatalf("NameError %+v", ne)
			}
			msg := err.Error()
			if !strings.Contains(msg, `"`+tc.bad+`"`) {
				t.Fatalf("message %q does not name %q", msg, tc.bad)
			}
			if tc.hint != "" && !strings.Contains(msg, tc.hint) {
				t.Fatalf("message %q lacks %q", msg, tc.hint)
			}
			if !tc.duplicate && !strings.Contains(msg, strings.Join(All().Names(), ", ")) {
				t.Fatalf("message %q does not list the vocabulary", msg)
			}
			if tc.duplicate && !strings.Contains(msg, "listed twice") {
				t.Fatalf("message %q", msg)
			}
		})
	}
}

func TestSetOperations(t *testing.T) {
	a := NewSet(DiscourseWrite)
	b := NewSet(MailRead, DiscourseRead)
	u := a.Union(b)
	if got := u.Names(); !slices.Equal(got, []string{"discourse.read", "discourse.write", "mail.read"}) {
		t.Fatalf("Union: %v", got)
	}
	if a.Union(Set{}) != a || (Set{}).Union(a) != a {
		t.Fatal("the empty set is not the identity of Union")
	}
	if (Set{}).String() != "none" || a.String() != "discourse.read, discourse.write" {
		t.Fatalf("String: %q %q", Set{}.String(), a.String())
	}
	if !slices.Equal(a.Capabilities(), []Capability{DiscourseRead, DiscourseWrite}) || (Set{}).Capabilities() == nil {
		t.Fatalf("Capabilities: %v", a.Capabilities())
	}
	if NewSet(DiscourseRead, DiscourseWrite) != NewSet(DiscourseWrite) {
		t.Fatal("a write and a write with its read differ")
	}
}

func TestJSON(t *testing.T) {
	for _, s := range []Set{{}, NewSet(ProfileWrite), All()} {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(s.Names())
		if string(b) != string(want) {
			t.Fatalf("Marshal: %s, want %s", b, want)
		}
		var back Set
		if err := json.Unmarshal(b, &back); err != nil || back != s {
			t.Fatalf("round trip: %v %v", back, err)
		}
	}
	var s Set
	if err := json.Unmarshal([]byte(`["mail.write"]`), &s); err != nil || !s.Has(MailRead) {
		t.Fatalf("a written write: %v %v", s, err)
	}
	for _, bad := range []string{`["mail.send"]`, `["mail.read","mail.read"]`, `"mail.read"`, `[1]`} {
		if err := json.Unmarshal([]byte(bad), &s); err == nil {
			t.Errorf("Unmarshal(%s) accepted", bad)
		}
	}
	var c struct {
		C Capability `json:"c"`
	}
	if err := json.Unmarshal([]byte(`{"c":"knowledge.write"}`), &c); err != nil || c.C != KnowledgeWrite {
		t.Fatalf("Capability text: %v %v", c.C, err)
	}
	if b, _ := json.Marshal(c); string(b) != `{"c":"knowledge.write"}` {
		t.Fatalf("Capability marshal: %s", b)
	}
	if err := json.Unmarshal([]byte(`{"c":"knowledge"}`), &c); err == nil {
		t.Fatal("an unknown capability unmarshals")
	}
}
