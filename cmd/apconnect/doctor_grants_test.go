package main

import (
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"apconnect/host/capability"
	"apconnect/host/config"
	"apconnect/host/hub/hubtest"
)

// doctorJSON runs doctor --json and returns its exit code and rows by name.
func doctorJSON(t *testing.T, home string) (int, map[string][]check) {
	t.Helper()
	code, out, errOut := runCLI(t, "doctor", "--home", home, "--json")
	var cs checks
	if err := json.Unmarshal([]byte(out), &cs); err != nil {
		t.Fatalf("doctor --json: %v\n%s%s", err, out, errOut)
	}
	rows := map[string][]check{}
	for _, c := range cs {
		rows[c.Name] = append(rows[c.Name], c)
	}
	return code, rows
}

// grantsTable returns the cells of the grants table's row for origin, and
// every line of the table.
func grantsTable(t *testing.T, out, origin string) (cells []string, lines []string) {
	t.Helper()
	_, table, ok := strings.Cut(out, "\nORIGIN ")
	if !ok {
		t.Fatalf("no grants table:\n%s", out)
	}
	table, _, _ = strings.Cut("ORIGIN "+table, "\n\n")
	lines = strings.Split(table, "\n")
	if got := strings.Fields(lines[0]); !slices.Equal(got, []string{"ORIGIN", "LABEL", "DISCOURSE", "PROFILE", "MAIL", "KNOWLEDGE", "DELEGATION"}) {
		t.Fatalf("table header %q", lines[0])
	}
	for _, l := range lines[1:] {
		if f := strings.Fields(l); len(f) > 0 && f[0] == origin {
			return f, lines
		}
	}
	t.Fatalf("no row for %s in\n%s", origin, table)
	return nil, nil
}

// Against the real hub: doctor reads every discovery document of the
// origin, reports what it serves (a 404 is "not offered", not a failure),
// shows the origin's effective grants in the JSON rows and the table, and
// warns for a grant naming a protocol the hub announces no service for and
// for a profile service whose [[hosts]] entry does not grant profiles.
func TestDoctorGrantsAgainstHub(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	served := map[capability.Protocol]bool{}
	for _, p := range capability.Protocols() {
		switch r := h.Do(http.MethodGet, "/.well-known/"+p.WellKnown(), nil, nil); r.Status {
		case http.StatusOK:
			served[p] = true
		case http.StatusNotFound:
		default:
			t.Fatalf("the hub answers %s with HTTP %d", p.WellKnown(), r.Status)
		}
	}
	if !served[capability.Discourse] || !served[capability.Profile] {
		t.Fatalf("the hub serves %v; it must serve discourse and profiles", served)
	}

	home := filepath.Join(t.TempDir(), "home")
	if code, _, errOut := runCLI(t, "init", "--home", home, "--name", "alice", "--unencrypted-key", "--host", h.Origin(), "--ca", h.CAFile(),
		"--grant", "discourse.write,mail.read", "--grant", "delegation.write"); code != 0 {
		t.Fatal(errOut)
	}
	cfg, err := config.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Identities[0].ProfileServices = []string{h.Origin()}
	if err := cfg.Save(); err != nil {
		t.Fatal(err)
	}
	label := cfg.Hosts[0].Label

	var wantServices, wantUnserved, notOffered []string
	for _, p := range capability.Protocols() {
		switch {
		case served[p]:
			wantServices = append(wantServices, p.ID())
		default:
			notOffered = append(notOffered, p.WellKnown())
			if p == capability.Mail || p == capability.Delegation || p == capability.Discourse {
				wantUnserved = append(wantUnserved, p.String())
			}
		}
	}
	wantGrants := []string{"discourse.read", "discourse.write", "mail.read", "delegation.read", "delegation.write"}

	code, rows := doctorJSON(t, home)
	if code != 0 {
		t.Fatalf("doctor exit %d: %+v", code, rows)
	}
	hostRow := rows["host "+label]
	if len(hostRow) != 1 || hostRow[0].Status != statusOK || !strings.Contains(hostRow[0].Detail, "agent-discourse/1.0, features: ") ||
		!strings.Contains(hostRow[0].Detail, "; agent-profile/1.0") {
		t.Fatalf("host row: %+v", hostRow)
	}
	if len(notOffered) > 0 && !strings.HasSuffix(hostRow[0].Detail, "; not offered: "+strings.Join(notOffered, ", ")) {
		t.Fatalf("host row does not say what is not offered (%v): %s", notOffered, hostRow[0].Detail)
	}
	g := rows["grants "+label]
	if len(g) != 1 || g[0].Origin == nil {
		t.Fatalf("grants row: %+v", g)
	}
	o := g[0].Origin
	if o.URL != h.Origin() || o.Label != label || o.Source != "hosts" || o.AllGranted ||
		!slices.Equal(o.Grants, wantGrants) || !slices.Equal(o.Services, wantServices) || !slices.Equal(o.Unserved, wantUnserved) {
		t.Fatalf("origin %+v; want grants %v services %v unserved %v", o, wantGrants, wantServices, wantUnserved)
	}
	if warn := len(wantUnserved) > 0; (g[0].Status == statusWarn) != warn ||
		(warn && !strings.Contains(g[0].Detail, "serves no "+orList(wellKnownOf(wantUnserved))+" discovery document")) {
		t.Fatalf("grants row %+v, unserved %v", g[0], wantUnserved)
	}
	profiles := rows["identity alice profiles"]
	if len(profiles) != 2 || profiles[0].Status != statusOK || profiles[1].Status != statusWarn ||
		!strings.Contains(profiles[1].Detail, "does not grant agent.profile.read or agent.profile.write") {
		t.Fatalf("profile rows: %+v", profiles)
	}

	// The table: one row per origin, readable in 100 columns.
	_, out, _ := runCLI(t, "doctor", "--home", home)
	cells, lines := grantsTable(t, out, h.Origin())
	want := []string{h.Origin(), label}
	for _, p := range capability.Protocols() {
		c := map[capability.Protocol]string{capability.Discourse: "rw", capability.Mail: "r", capability.Delegation: "rw"}[p]
		switch {
		case c == "":
			c = "-"
		case !served[p]:
			c += "*"
		}
		want = append(want, c)
	}
	if !slices.Equal(cells, want) {
		t.Fatalf("table row %v, want %v\n%s", cells, want, out)
	}
	for _, l := range lines {
		if len(l) > 100 {
			t.Errorf("table line of %d columns: %q", len(l), l)
		}
	}
	if last := strings.TrimSpace(out)[strings.LastIndex(strings.TrimSpace(out), "\n")+1:]; !strings.Contains(last, "warning(s)") {
		t.Fatalf("the summary is not the last line:\n%s", out)
	}
	// A grants row that is fine stays out of the checks table.
	if strings.Contains(out, "grants "+label+"  ok") {
		t.Fatalf("an ok grants row is in the checks table:\n%s", out)
	}
}

// wellKnownServer serves the discovery documents named in docs (by
// protocol; "" marks one whose document names another origin) and 404 for
// everything else.
func wellKnownServer(t *testing.T, docs map[capability.Protocol]string) *httptest.Server {
	var s *httptest.Server
	s = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for p, service := range docs {
			if r.URL.Path == "/.well-known/"+p.WellKnown() {
				if service == "" {
					service = "https://elsewhere.example"
				} else {
					service = s.URL
				}
				json.NewEncoder(w).Encode(map[string]any{"protocol": p.ID(), "service": service})
				return
			}
		}
		http.NotFound(w, r)
	}))
	// Doctor's parallel probes may drop a spare connection mid-handshake.
	s.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

// Origins that are not Discourse hosts: a mail-only origin granted a
// Discourse read warns; an origin serving nothing fails; an unusable
// discovery document fails and names its protocol; an entry without grants
// is granted everything without a warning; a profile service without an
// entry is granted profiles only.
func TestDoctorOriginServices(t *testing.T) {
	t.Parallel()
	mailOnly := wellKnownServer(t, map[capability.Protocol]string{capability.Mail: "self"})
	nothing := wellKnownServer(t, nil)
	broken := wellKnownServer(t, map[capability.Protocol]string{capability.Discourse: "self", capability.Knowledge: ""})
	discourse := wellKnownServer(t, map[capability.Protocol]string{capability.Discourse: "self"})

	home := t.TempDir()
	if code, _, errOut := runCLI(t, "init", "--home", home, "--unencrypted-key"); code != 0 {
		t.Fatal(errOut)
	}
	cfg, err := config.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	const profileOnly = "https://127.0.0.1:1"
	cfg.Identities[0].ProfileServices = []string{profileOnly}
	for _, e := range []struct {
		s      *httptest.Server
		label  string
		grants []string
	}{
		{mailOnly, "mailonly", []string{"mail.write", "discourse.read"}},
		{nothing, "nothing", []string{"discourse.read"}},
		{broken, "broken", []string{"knowledge.read"}},
		{discourse, "all", nil},
	} {
		cfg.Hosts = append(cfg.Hosts, config.Host{URL: e.s.URL, Label: e.label, CAFile: writeCA(t, e.s), Grants: e.grants})
	}
	if err := cfg.Save(); err != nil {
		t.Fatal(err)
	}

	code, rows := doctorJSON(t, home)
	if code != 1 {
		t.Fatalf("doctor exit %d", code)
	}
	one := func(name string) check {
		t.Helper()
		if len(rows[name]) != 1 {
			t.Fatalf("rows %q: %+v", name, rows[name])
		}
		return rows[name][0]
	}
	hostCases := []struct {
		label  string
		status checkStatus
		detail string
	}{
		{"mailonly", statusOK, "agent-mail/1.0; not offered: agent-discourse, agent-profile, agent-knowledge, agent-delegation"},
		{"nothing", statusFail, "serves no discovery document of the five protocols (HTTP 404 for agent-discourse, agent-profile, agent-mail, agent-knowledge, agent-delegation)"},
		{"broken", statusFail, "agent-knowledge discovery: service \"https://elsewhere.example\" is not the configured origin"},
		{"all", statusOK, "agent-discourse/1.0; not offered: agent-profile, agent-mail, agent-knowledge, agent-delegation"},
	}
	for _, hc := range hostCases {
		if c := one("host " + hc.label); c.Status != hc.status || !strings.Contains(c.Detail, hc.detail) {
			t.Errorf("host %s: %+v, want %s containing %q", hc.label, c, hc.status, hc.detail)
		}
	}
	grantCases := []struct {
		name     string
		status   checkStatus
		grants   []string
		unserved []string
		detail   string
	}{
		{"grants mailonly", statusWarn, []string{"discourse.read", "mail.read", "mail.write"}, []string{"discourse"},
			"grants discourse.read, but serves no agent-discourse discovery document"},
		{"grants nothing", statusOK, []string{"discourse.read"}, nil, ": discourse.read"},
		{"grants broken", statusOK, []string{"knowledge.read"}, nil, ": knowledge.read"},
		{"grants all", statusOK, capability.All().Names(), []string{"agent.profile", "mail", "knowledge", "delegation"}, "every capability (no grants key)"},
		{"grants " + profileOnly, statusOK, []string{"agent.profile.read", "agent.profile.write"}, nil, "profile service of default without a [[hosts]] entry"},
	}
	for _, gc := range grantCases {
		c := one(gc.name)
		if c.Status != gc.status || c.Origin == nil || !slices.Equal(c.Origin.Grants, gc.grants) ||
			!slices.Equal(c.Origin.Unserved, gc.unserved) || !strings.Contains(c.Detail, gc.detail) {
			t.Errorf("%s: %+v %+v", gc.name, c, c.Origin)
		}
	}
	if o := one("grants " + profileOnly).Origin; o.Source != "profile_services" || o.Label != "" || o.Services != nil {
		t.Errorf("profile-only origin %+v", o)
	}
	if o := one("grants all").Origin; !o.AllGranted || !slices.Equal(o.Services, []string{"agent-discourse/1.0"}) {
		t.Errorf("all-granted origin %+v", o)
	}

	_, out, _ := runCLI(t, "doctor", "--home", home)
	for origin, want := range map[string][]string{
		mailOnly.URL:  {"mailonly", "r*", "-", "rw", "-", "-"},
		discourse.URL: {"all", "rw", "rw*", "rw*", "rw*", "rw*"},
		profileOnly:   {"(profile", "service)", "-", "rw", "-", "-", "-"},
	} {
		if cells, _ := grantsTable(t, out, origin); !slices.Equal(cells[1:], want) {
			t.Errorf("table row of %s: %v, want %v\n%s", origin, cells[1:], want, out)
		}
	}
	if !strings.Contains(out, "grants mailonly") {
		t.Errorf("the warning is not among the checks:\n%s", out)
	}
}
