package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"apconnect/host/capability"
	"apconnect/host/client"
	"apconnect/host/config"
	"apconnect/host/termsafe"
)

// originReport is what doctor says about one origin's grants, in the
// "grants …" rows of --json and in the grants table.
type originReport struct {
	// URL is the normalized origin.
	URL string `json:"url"`
	// Label is its [[hosts]] label; empty for a profile service without an
	// entry.
	Label string `json:"label,omitempty"`
	// Source says where the grants come from: "hosts" (its [[hosts]]
	// entry) or "profile_services" (an identity's profile service without
	// one, granted agent.profile.read and agent.profile.write only).
	Source string `json:"source"`
	// Grants are the effective grants in vocabulary order (a write brings
	// its read).
	Grants []string `json:"grants"`
	// AllGranted is set when the entry has no grants key.
	AllGranted bool `json:"all_granted,omitempty"`
	// Services are the protocols whose discovery document the origin
	// serves; omitted when doctor did not probe it.
	Services []string `json:"services,omitempty"`
	// Unserved are the granted protocols the origin announces no service
	// for (their discovery document is a 404). Grants written in the
	// config that name one make the row a warning; the implicit grants of
	// an entry without a grants key do not.
	Unserved []string `json:"granted_without_service,omitempty"`

	set capability.Set
}

// serviceProbe is the outcome of reading one protocol's discovery document
// on an origin.
type serviceProbe struct {
	proto  capability.Protocol
	doc    *client.Discovery
	status int  // the HTTP status; 0 when no response came
	absent bool // HTTP 404: the origin does not offer the service
	err    error
}

// statusRecorder remembers the status of the response it passes on, so
// that doctor tells a 404 (no such service) from a failure.
type statusRecorder struct {
	rt     http.RoundTripper
	status int
}

func (s *statusRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.rt.RoundTrip(r)
	if resp != nil {
		s.status = resp.StatusCode
	}
	return resp, err
}

// probeServices reads the five discovery documents of origin in parallel,
// each bounded by timeout.
func probeServices(ctx context.Context, hc *http.Client, origin string, timeout time.Duration) []serviceProbe {
	protos := capability.Protocols()
	out := make([]serviceProbe, len(protos))
	var wg sync.WaitGroup
	for i, p := range protos {
		wg.Go(func() {
			rec := &statusRecorder{rt: hc.Transport}
			c := *hc
			c.Transport = rec
			cctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			d, err := client.FetchDiscovery(cctx, &c, origin, p.WellKnown(), p.ID())
			out[i] = serviceProbe{proto: p, doc: d, err: err, status: rec.status, absent: err != nil && rec.status == http.StatusNotFound}
		})
	}
	wg.Wait()
	return out
}

// checkHost probes every service of a [[hosts]] origin and adds its row:
// FAIL when a discovery document is unusable or when the origin serves
// none of the five; a 404 only means the service is not offered. It
// returns the origin's grants report with what it serves.
func checkHost(ctx context.Context, cs *checks, cfg *config.Config, h *config.Host, timeout time.Duration) *originReport {
	rep := newOriginReport(h.URL, h, h.GrantSet())
	name := "host " + h.Label
	pool, err := cfg.CAPool(h)
	if err != nil {
		cs.add(name, statusFail, "%v", err)
		return rep
	}
	hc := client.NewHTTPClient(pool, timeout)
	defer hc.CloseIdleConnections()
	probes := probeServices(ctx, hc, h.URL, timeout)
	if unreachable(probes) {
		cs.add(name, statusFail, "%s: %s", h.URL, oneLine(probes[0].err.Error()))
		return rep
	}
	var served, absent, failed []string
	for _, p := range probes {
		switch {
		case p.err == nil:
			rep.Services = append(rep.Services, p.proto.ID())
			s := p.proto.ID()
			if len(p.doc.Features) > 0 {
				s += ", features: " + strings.Join(p.doc.Features, ", ")
			}
			served = append(served, s)
		case p.absent:
			absent = append(absent, p.proto.WellKnown())
		default:
			failed = append(failed, oneLine(p.err.Error()))
		}
	}
	switch {
	case len(failed) > 0:
		cs.add(name, statusFail, "%s: %s", h.URL, strings.Join(failed, "; "))
	case len(served) == 0:
		cs.add(name, statusFail, "%s serves no discovery document of the five protocols (HTTP 404 for %s); is the URL right?", h.URL, strings.Join(absent, ", "))
	case len(absent) > 0:
		cs.add(name, statusOK, "%s: %s; not offered: %s", h.URL, strings.Join(served, "; "), strings.Join(absent, ", "))
	default:
		cs.add(name, statusOK, "%s: %s", h.URL, strings.Join(served, "; "))
	}
	if len(failed) == 0 && len(served) > 0 {
		for _, p := range probes {
			if p.absent && rep.set.Has(p.proto.Read()) {
				rep.Unserved = append(rep.Unserved, p.proto.String())
			}
		}
	}
	return rep
}

// unreachable reports whether no probe got any HTTP response (connection
// refused, TLS failure, timeout): one failure to report, not five.
func unreachable(probes []serviceProbe) bool {
	for _, p := range probes {
		if p.err == nil || p.status != 0 {
			return false
		}
	}
	return true
}

func newOriginReport(url string, h *config.Host, set capability.Set) *originReport {
	r := &originReport{URL: url, Source: "profile_services", Grants: set.Names(), set: set}
	if h != nil {
		r.Label, r.Source, r.AllGranted = h.Label, "hosts", h.Grants == nil
	}
	return r
}

// addGrantRows adds one "grants …" row per origin (warn when a grant names
// a protocol the origin announces no service for) and returns the reports
// in order: the [[hosts]] entries, then the identities' profile services
// that have none.
func addGrantRows(cs *checks, cfg *config.Config, hosts []*originReport) []*originReport {
	reports := append([]*originReport{}, hosts...)
	byIdentity := map[string][]string{}
	var order []string
	for i := range cfg.Identities {
		id := &cfg.Identities[i]
		for _, o := range cfg.Origins(id) {
			if o.Host != nil {
				continue
			}
			if _, seen := byIdentity[o.URL]; !seen {
				order = append(order, o.URL)
			}
			byIdentity[o.URL] = append(byIdentity[o.URL], id.Name)
		}
	}
	for _, u := range order {
		reports = append(reports, newOriginReport(u, nil, config.ProfileServiceGrants()))
	}
	for _, r := range reports {
		c := check{Name: "grants " + r.URL, Status: statusOK, Origin: r}
		if r.Label != "" {
			c.Name = "grants " + r.Label
		}
		switch {
		case len(r.Unserved) > 0 && !r.AllGranted:
			c.Status = statusWarn
			c.Detail = fmt.Sprintf("%s grants %s, but serves no %s discovery document: those calls will fail there",
				r.URL, strings.Join(grantedOf(r.set, r.Unserved), ", "), orList(wellKnownOf(r.Unserved)))
		case r.Source == "profile_services":
			c.Detail = fmt.Sprintf("%s: %s (profile service of %s without a [[hosts]] entry)", r.URL, r.set, strings.Join(byIdentity[r.URL], ", "))
		case r.AllGranted:
			c.Detail = fmt.Sprintf("%s: every capability (no grants key)", r.URL)
		default:
			c.Detail = fmt.Sprintf("%s: %s", r.URL, r.set)
		}
		*cs = append(*cs, c)
	}
	return reports
}

// grantedOf lists the granted capabilities of the named protocols.
func grantedOf(s capability.Set, protocols []string) []string {
	var out []string
	for _, c := range s.Capabilities() {
		for _, p := range protocols {
			if c.Protocol().String() == p {
				out = append(out, c.String())
			}
		}
	}
	return out
}

// wellKnownOf maps protocol names ("mail") to their discovery document
// names ("agent-mail").
func wellKnownOf(protocols []string) []string {
	var out []string
	for _, p := range capability.Protocols() {
		if slices.Contains(protocols, p.String()) {
			out = append(out, p.WellKnown())
		}
	}
	return out
}

// orList joins "a", "a or b", "a, b or c".
func orList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// checkProfileGrant warns when an identity's profile service has a
// [[hosts]] entry that does not grant what publishing and reading the
// identity's profile there needs.
func checkProfileGrant(cs *checks, cfg *config.Config, id *config.Identity, svc string) {
	g, _ := cfg.Grants(id, svc)
	var missing []string
	for _, c := range []capability.Capability{capability.ProfileRead, capability.ProfileWrite} {
		if !g.Has(c) {
			missing = append(missing, c.String())
		}
	}
	if len(missing) > 0 {
		cs.add("identity "+id.Name+" profiles", statusWarn, "%s is a profile service of %s, but its [[hosts]] entry does not grant %s: the agent cannot use the identity's profile there",
			svc, id.Name, strings.Join(missing, " or "))
	}
}

// printGrants prints the grants table: one row per origin, one column per
// protocol, "rw" (read and write), "r" (read only) or "-" (nothing); a
// "*" marks a grant the origin announces no service for.
func printGrants(w io.Writer, cs checks) {
	var reports []*originReport
	for _, c := range cs {
		if c.Origin != nil {
			reports = append(reports, c.Origin)
		}
	}
	if len(reports) == 0 {
		return
	}
	fmt.Fprintln(w, "\nGrants: what the agent may do on each origin (rw read and write, r read, - nothing;")
	fmt.Fprintln(w, "* granted, but the origin announces no such service):")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ORIGIN\tLABEL\tDISCOURSE\tPROFILE\tMAIL\tKNOWLEDGE\tDELEGATION")
	for _, r := range reports {
		label := r.Label
		if label == "" {
			label = "(profile service)"
		}
		cells := []string{termsafe.Escape(r.URL), termsafe.Escape(label)}
		for _, p := range capability.Protocols() {
			cells = append(cells, grantCell(r, p))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
}

func grantCell(r *originReport, p capability.Protocol) string {
	var cell string
	switch {
	case r.set.Has(p.Write()):
		cell = "rw"
	case r.set.Has(p.Read()):
		cell = "r"
	default:
		return "-"
	}
	if slices.Contains(r.Unserved, p.String()) {
		cell += "*"
	}
	return cell
}
