package main

import (
	"context"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"apconnect/host/client"
	"apconnect/host/config"
	"apconnect/host/keystore"
	"apconnect/host/pluginhost"
	"apconnect/host/termsafe"
)

// checkStatus is the outcome of one doctor check.
type checkStatus string

const (
	statusOK   checkStatus = "ok"
	statusWarn checkStatus = "warn"
	statusFail checkStatus = "FAIL"
	statusSkip checkStatus = "skip"
)

type check struct {
	Name   string      `json:"name"`
	Status checkStatus `json:"status"`
	Detail string      `json:"detail"`
	// Origin is set on the "grants …" rows: one origin's effective grants.
	Origin *originReport `json:"origin,omitempty"`
}

type checks []check

func (cs *checks) add(name string, st checkStatus, format string, args ...any) {
	*cs = append(*cs, check{Name: name, Status: st, Detail: fmt.Sprintf(format, args...)})
}

func init() {
	register(&command{
		name:    "doctor",
		summary: "check the config, keys, permissions, every configured host, its grants and plugins",
		usage:   "doctor [--home DIR] [--json] [--timeout D]",
		detail: `Checks the apconnect home: the config file, each identity's key file (present,
mode 0600, readable; decrypted when APCONNECT_PASSPHRASE or the identity's
passphrase_file provides the passphrase), and each configured ADP host and
profile service: reachable over HTTPS with its ca_file, and serving a valid
discovery document for its own origin. A [[hosts]] entry is an origin that
may offer any of the five services: doctor reads /.well-known/agent-discourse,
agent-profile, agent-mail, agent-knowledge and agent-delegation there (a 404
means the service is not offered, not a failure; an origin offering none
fails). It then prints each origin's effective grants (a "grants" row each
in --json, with an "origin" object) and warns when a grant names a protocol
the origin announces no service for. And each configured plugin: loaded as
apconnect mcp loads it (digest pinned, grants, limits, description), with
what it validates, watches and adds, or the reason it is refused. Loading
compiles each enabled plugin into the home's compilation cache
(state/plugin-cache, the one apconnect mcp and serve read), so the next
start is warm; each plugin's line says whether its code was compiled now or
came from the cache. Last, how the agent is woken ([wake]): which process runs
each wake job, and each identity's latest wakes with what became of them.

Prints a table (or JSON with --json) and exits non-zero when any check fails.
Warnings, such as an unencrypted development key, do not fail the run.`,
		example: "apconnect doctor --home ~/.config/apconnect",
		setup: func(fs *flag.FlagSet) func(context.Context, *env, []string) error {
			home := homeFlag(fs)
			asJSON := fs.Bool("json", false, "print the checks as JSON")
			timeout := fs.Duration("timeout", 5*time.Second, "time limit for each network check")
			return func(ctx context.Context, e *env, args []string) error {
				if len(args) > 0 {
					return usageError{"doctor takes no arguments"}
				}
				cs := runDoctor(ctx, *home, *timeout)
				if *asJSON {
					if err := writeSafeJSON(e.stdout, cs); err != nil {
						return err
					}
				} else {
					printChecks(e.stdout, cs)
				}
				for _, c := range cs {
					if c.Status == statusFail {
						return exitError{1}
					}
				}
				return nil
			}
		},
	})
}

func runDoctor(ctx context.Context, homeFlagValue string, timeout time.Duration) checks {
	var cs checks
	dir, err := config.ResolveHome(homeFlagValue)
	if err != nil {
		cs.add("home", statusFail, "%v", err)
		return cs
	}
	st, err := os.Stat(dir)
	switch {
	case err != nil:
		cs.add("home", statusFail, "%s: %v (create it with `apconnect init`)", dir, err)
		return cs
	case st.Mode().Perm()&0o022 != 0:
		cs.add("home", statusWarn, "%s is writable by group or others (mode %04o); chmod 700 it", dir, st.Mode().Perm())
	default:
		cs.add("home", statusOK, "%s", dir)
	}
	cfg, err := config.Load(dir)
	if err != nil {
		cs.add("config", statusFail, "%s", oneLine(err.Error()))
		return cs
	}
	cs.add("config", statusOK, "%s: %d identities, %d hosts, %d plugins", cfg.File(), len(cfg.Identities), len(cfg.Hosts), len(cfg.Plugins))

	for _, id := range cfg.Identities {
		checkIdentity(ctx, &cs, cfg, id, timeout)
	}
	if len(cfg.Hosts) == 0 {
		cs.add("hosts", statusWarn, "no ADP host is configured; add one with `apconnect init --host URL` or in config.toml")
	}
	var hosts []*originReport
	for i := range cfg.Hosts {
		hosts = append(hosts, checkHost(ctx, &cs, cfg, &cfg.Hosts[i], timeout))
	}
	addGrantRows(&cs, cfg, hosts)
	checkPlugins(ctx, &cs, cfg)
	checkWakes(ctx, &cs, cfg, time.Now())
	return cs
}

// checkPlugins loads every configured plugin exactly as `apconnect mcp`
// does (which also fills the compilation cache, so the next start is
// fast) and reports each: loaded with its digest, grants and what it adds,
// refused with the reason (a FAIL), or disabled.
func checkPlugins(ctx context.Context, cs *checks, cfg *config.Config) {
	if len(cfg.Plugins) == 0 {
		return
	}
	defer checkPluginReports(cs, cfg, time.Now())
	// Eager: every plugin compiled and started now, so that doctor
	// reports one that cannot start and leaves the cache filled.
	set := pluginhost.Load(ctx, cfg, pluginhost.Options{Eager: true})
	defer set.Close(context.WithoutCancel(ctx))
	for _, e := range set.Entries {
		name := "plugin " + e.Config.Name
		switch {
		case e.Disabled:
			cs.add(name, statusSkip, "disabled (enabled = false): %s", relTo(cfg.Home(), e.Path))
		case e.Err != nil:
			cs.add(name, statusFail, "%s", oneLine(e.Err.Error()))
		default:
			d := e.Plugin.Description()
			var tools, packs []string
			for _, t := range d.Tools {
				tools = append(tools, t.MCPName)
			}
			for _, p := range d.Packs {
				packs = append(packs, p.ID())
			}
			compiled := "compiled into the cache"
			switch {
			case e.Plugin.FromCache():
				compiled = "compiled code from the cache"
			case set.CacheDir == "":
				compiled = "compiled in memory: no compilation cache"
			}
			cs.add(name, statusOK, "%s %s loaded from %s in %s (%s); sha256 %s matches the config; grants: %s; validates: %s; watches: %s; tools: %s; packs: %s",
				d.Name, d.Version, relTo(cfg.Home(), e.Path), e.Elapsed.Round(time.Millisecond), compiled, e.Plugin.Digest(),
				listOrNone(e.Grants.Strings()), listOrNone(d.Validates), listOrNone(d.Watches), listOrNone(tools), listOrNone(packs))
		}
	}
}

func checkIdentity(ctx context.Context, cs *checks, cfg *config.Config, id config.Identity, timeout time.Duration) {
	name := "identity " + id.Name
	path := cfg.Resolve(id.KeyFile)
	info, err := keystore.ReadInfo(path)
	if err != nil {
		cs.add(name, statusFail, "%s", oneLine(err.Error()))
		return
	}
	if !info.Encrypted {
		cs.add(name, statusWarn, "%s: UNENCRYPTED development key %s; anyone who can read it can sign as this agent", info.AgentID, relTo(cfg.Home(), path))
	} else {
		pf := ""
		if id.PassphraseFile != "" {
			pf = cfg.Resolve(id.PassphraseFile)
		}
		k, err := keystore.Load(path, keystore.Chain(keystore.EnvPassphrase(), keystore.FilePassphrase(pf)))
		switch {
		case keystore.CodeOf(err) == keystore.CodePassphraseUnavailable:
			cs.add(name, statusOK, "%s: encrypted key %s (not decrypted: no passphrase in %s or passphrase_file)", info.AgentID, relTo(cfg.Home(), path), keystore.EnvVar)
		case err != nil:
			cs.add(name, statusFail, "%s", oneLine(err.Error()))
		default:
			k.Wipe()
			cs.add(name, statusOK, "%s: encrypted key %s, passphrase ok", info.AgentID, relTo(cfg.Home(), path))
		}
	}
	checkState(ctx, cs, cfg, &id, info.AgentID)
	for _, svc := range id.ProfileServices {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		hc := client.NewHTTPClient(profilePool(cfg, svc), timeout)
		_, err := client.FetchDiscovery(cctx, hc, svc, "agent-profile", "agent-profile/1.0")
		hc.CloseIdleConnections()
		cancel()
		if err != nil {
			cs.add(name+" profiles", statusFail, "%s: %s", svc, oneLine(err.Error()))
		} else {
			cs.add(name+" profiles", statusOK, "%s: agent-profile/1.0", svc)
		}
		checkProfileGrant(cs, cfg, &id, svc)
	}
}

// profilePool uses the CA file of a configured host on the same origin as a
// profile service (the local hub serves both).
func profilePool(cfg *config.Config, origin string) *x509.CertPool {
	h, err := cfg.Host(origin)
	if err != nil {
		return nil
	}
	pool, err := cfg.CAPool(h)
	if err != nil {
		return nil
	}
	return pool
}

// printChecks prints the table of checks, then the grants table. Names and
// details carry text from the config, the home, plugins and remote hosts,
// escaped for the terminal: a plugin's error message must not paint "All
// checks passed." over its own FAIL row. A "grants" row appears among the
// checks only when it warns; the grants table shows every origin.
func printChecks(w io.Writer, cs checks) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tSTATUS\tDETAIL")
	fails, warns := 0, 0
	for _, c := range cs {
		if c.Origin == nil || c.Status != statusOK {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", termsafe.Escape(c.Name), c.Status, termsafe.Escape(c.Detail))
		}
		switch c.Status {
		case statusFail:
			fails++
		case statusWarn:
			warns++
		}
	}
	tw.Flush()
	printGrants(w, cs)
	switch {
	case fails > 0:
		fmt.Fprintf(w, "\n%d problem(s), %d warning(s).\n", fails, warns)
	case warns > 0:
		fmt.Fprintf(w, "\nNo problems; %d warning(s).\n", warns)
	default:
		fmt.Fprintln(w, "\nAll checks passed.")
	}
}

// oneLine keeps a table row on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// reportMaxAge is how old a running apconnect's plugin health report may be
// for doctor to show it.
const reportMaxAge = 7 * 24 * time.Hour

// checkPluginReports shows the run-time failures that running (or recently
// stopped) apconnect processes reported for their plugins: validators that
// failed closed, watchers that were skipped, tools that trapped.
func checkPluginReports(cs *checks, cfg *config.Config, now time.Time) {
	reports, err := pluginhost.ReadReports(cfg)
	if err != nil {
		cs.add("plugin reports", statusWarn, "%s", oneLine(err.Error()))
		return
	}
	for _, rep := range reports {
		if now.Sub(rep.WrittenAt) > reportMaxAge {
			continue
		}
		for _, h := range rep.Plugins {
			if !h.Loaded || h.Failures == 0 {
				continue
			}
			var codes []string
			for c, n := range h.FailuresByCode {
				codes = append(codes, fmt.Sprintf("%s ×%d", c, n))
			}
			slices.Sort(codes)
			cs.add("plugin "+h.Name+" at run time", statusWarn, "%d of %d calls failed in `apconnect %s` (report of %s; %s); last, at %s: %s",
				h.Failures, h.Calls, rep.Process, rep.WrittenAt.Format(time.RFC3339), strings.Join(codes, ", "),
				h.LastErrorAt.UTC().Format(time.RFC3339), oneLine(h.LastError))
		}
	}
}
