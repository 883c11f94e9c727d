package e2e

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	"apconnect/host/identity"
)

// Issue 21, proof 5: `kill -9` of the real binary at each step of a
// mailbox publication, a letter's sending and a sync, then a restart: no
// key is lost, no letter is lost or received twice, no nonce is used for two
// different envelopes.

// crashRelay is a TLS proxy in front of a hub that takes the proxy's origin
// as its own (card routes and JWT audiences name the proxy). It records
// every signed envelope POSTed through it, and can hold one request — before
// forwarding it, or after the hub answered — until the test has killed the
// client.
type crashRelay struct {
	t      *testing.T
	hub    *hubtest.Hub
	srv    *httptest.Server
	origin string
	caFile string

	mu      sync.Mutex
	posted  []identity.Envelope
	bodies  map[string][][]byte // by path
	hold    func(r *http.Request) bool
	after   bool // hold after forwarding
	holding chan struct{}
	release chan struct{}
}

func newCrashRelay(t *testing.T) *crashRelay {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &crashRelay{t: t, origin: "https://" + ln.Addr().String(), bodies: map[string][][]byte{}}
	c.hub = hubtest.Start(t, hubtest.WithOptions(func(o *hub.Options) { o.Origin = c.origin }))
	target, _ := url.Parse("https://" + c.hub.Addr().String())
	rp := &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(target); r.Out.Host = target.Host },
		Transport: c.hub.Client.Transport,
	}
	c.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { c.serve(rp, w, r) }))
	c.srv.Listener = ln
	c.srv.StartTLS()
	t.Cleanup(c.srv.Close)
	c.caFile = filepath.Join(t.TempDir(), "relay-ca.pem")
	pemCert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.srv.Certificate().Raw})
	if err := os.WriteFile(c.caFile, pemCert, 0o600); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *crashRelay) serve(rp *httputil.ReverseProxy, w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	c.mu.Lock()
	if r.Method == http.MethodPost {
		var env identity.Envelope
		if json.Unmarshal(body, &env) == nil {
			c.posted = append(c.posted, env)
		}
		c.bodies[r.URL.Path] = append(c.bodies[r.URL.Path], body)
	}
	hold := c.hold != nil && c.hold(r)
	after, holding, release := c.after, c.holding, c.release
	if hold {
		c.hold = nil
	}
	c.mu.Unlock()
	if !hold {
		rp.ServeHTTP(w, r)
		return
	}
	if after {
		rec := httptest.NewRecorder()
		rp.ServeHTTP(rec, r)
	}
	close(holding)
	<-release
	panic(http.ErrAbortHandler)
}

// killDuring runs `apconnect call` and SIGKILLs it while the relay holds the
// first request match picks (before forwarding it, or after the hub
// answered with after).
func (c *crashRelay) killDuring(home, agent, tool string, args any, after bool, match func(r *http.Request) bool) {
	c.t.Helper()
	c.mu.Lock()
	c.hold, c.after, c.holding, c.release = match, after, make(chan struct{}), make(chan struct{})
	holding, release := c.holding, c.release
	c.mu.Unlock()
	in, _ := json.Marshal(args)
	cmd := exec.Command(bin, "call", "--home", home, "--agent", agent, tool, "-")
	cmd.Stdin = bytes.NewReader(in)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	select {
	case <-holding:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		c.t.Fatalf("%s never reached the held request:\n%s", tool, out.String())
	}
	if err := cmd.Process.Kill(); err != nil {
		c.t.Fatal(err)
	}
	_ = cmd.Wait()
	close(release)
	if st := cmd.ProcessState; st == nil || st.ExitCode() != -1 {
		c.t.Fatalf("%s was not killed: %v\n%s", tool, st, out.String())
	}
}

// noNonceReused checks that no actor signed two different envelopes with
// one nonce, among everything POSTed through the relay.
func (c *crashRelay) noNonceReused() {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := map[[2]string]string{}
	for _, env := range c.posted {
		k := [2]string{env.Event.Actor, json.Number(itoa(env.Event.Nonce)).String()}
		if h, ok := seen[k]; ok && h != env.Hash {
			c.t.Errorf("nonce %s of %s signed two envelopes: %s and %s", k[1], k[0], h, env.Hash)
		}
		seen[k] = env.Hash
	}
	if len(seen) == 0 {
		c.t.Error("no envelope went through the relay")
	}
}

func itoa(n int64) string {
	b, _ := identity.AppendCanonicalInt(nil, n)
	return string(b)
}

// packetBodies returns the packet deliveries seen, of every mailbox.
func (c *crashRelay) packetBodies() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out [][]byte
	for p, bs := range c.bodies {
		if strings.HasSuffix(p, "/packets") {
			out = append(out, bs...)
		}
	}
	return out
}

// callTool runs `apconnect call` to completion and decodes its result.
func callTool(t *testing.T, home, agent, tool string, args any) map[string]any {
	t.Helper()
	in, _ := json.Marshal(args)
	cmd := exec.Command(bin, "call", "--home", home, "--agent", agent, tool, "-")
	cmd.Stdin = bytes.NewReader(in)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s %s: %v\n%s\n%s", agent, tool, in, err, out.String(), errOut.String())
	}
	var res map[string]any
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("%s: %v: %s", tool, err, out.String())
	}
	return res
}

func field(v any, path ...string) any {
	for _, p := range path {
		switch m := v.(type) {
		case map[string]any:
			v = m[p]
		case []any:
			i := 0
			for _, c := range p {
				i = i*10 + int(c-'0')
			}
			if i >= len(m) {
				return nil
			}
			v = m[i]
		default:
			return nil
		}
	}
	return v
}

func items(v any, path ...string) []any { l, _ := field(v, path...).([]any); return l }

// newMailbox is the mailbox of list whose ID is not one of known.
func newMailbox(list []any, known []string) any {
	for _, m := range list {
		id, _ := field(m, "mailbox_id").(string)
		if !slices.Contains(known, id) {
			return m
		}
	}
	return nil
}

func TestMailSurvivesKill9(t *testing.T) {
	t.Parallel()
	relay := newCrashRelay(t)
	home := filepath.Join(t.TempDir(), "home")
	for _, n := range []string{"alice", "bob"} {
		if code, out, errOut := apconnect(t, "init", "--home", home, "--name", n, "--unencrypted-key", "--host", relay.origin, "--ca", relay.caFile); code != 0 {
			t.Fatalf("init %s: %s %s", n, out, errOut)
		}
	}
	isPath := func(method, suffix string) func(r *http.Request) bool {
		return func(r *http.Request) bool { return r.Method == method && strings.HasSuffix(r.URL.Path, suffix) }
	}
	routes := map[string]any{"routes": []any{relay.origin}}

	// Publication, killed before the relay saw the card, and after it
	// accepted it: the key and the card are there after the restart, and
	// the sync publishes what is pending.
	var boxes []string
	for _, after := range []bool{false, true} {
		relay.killDuring(home, "bob", "mail_mailbox_publish", routes, after, isPath(http.MethodPost, "/v1/mailboxes"))
		list := callTool(t, home, "bob", "mail_mailboxes_list", map[string]any{})
		fresh := newMailbox(items(list, "mailboxes"), boxes)
		if len(items(list, "mailboxes")) != len(boxes)+1 || fresh == nil || field(fresh, "key_available") != true {
			t.Fatalf("after a kill during publication (after=%v): %v", after, list)
		}
		id := field(fresh, "mailbox_id").(string)
		if len(items(fresh, "pending_routes")) != 1 {
			t.Fatalf("the interrupted publication is not pending: %v", fresh)
		}
		if sync := callTool(t, home, "bob", "mail_sync", map[string]any{}); len(items(sync, "errors")) != 0 {
			t.Fatalf("sync: %v", sync)
		}
		list = callTool(t, home, "bob", "mail_mailboxes_list", map[string]any{})
		if fresh = newMailbox(items(list, "mailboxes"), boxes); len(items(fresh, "pending_routes")) != 0 {
			t.Fatalf("still pending after the sync: %v", fresh)
		}
		boxes = append(boxes, id)
	}
	addr := field(callTool(t, home, "bob", "mail_mailboxes_list", map[string]any{}), "mailboxes", "0", "address").(string)

	// Sending, killed before the relay saw the packet and after it took it:
	// the letter is kept queued and the sync resends the same bytes.
	for i, after := range []bool{false, true} {
		relay.killDuring(home, "alice", "mail_send", map[string]any{"to": addr, "text": "letter " + itoa(int64(i))}, after,
			isPath(http.MethodPost, "/packets"))
		sent := callTool(t, home, "alice", "mail_list", map[string]any{"direction": "sent"})
		if n := len(items(sent, "messages")); n != i+1 || field(sent, "messages", itoa(int64(i)), "delivery", "status") != "queued" {
			t.Fatalf("after a kill during sending (after=%v): %v", after, sent)
		}
		sync := callTool(t, home, "alice", "mail_sync", map[string]any{})
		if len(items(sync, "delivered")) != 1 || field(sync, "queued") != float64(0) {
			t.Fatalf("alice's sync: %v", sync)
		}
	}
	bodies := relay.packetBodies()
	if len(bodies) != 4 || !bytes.Equal(bodies[0], bodies[1]) || !bytes.Equal(bodies[2], bodies[3]) {
		t.Fatalf("the resent packets differ from the first sends (%d deliveries)", len(bodies))
	}

	// Syncing, killed while listing and while deleting a stored letter's
	// relay copy: each letter is received once.
	relay.killDuring(home, "bob", "mail_sync", map[string]any{}, false, isPath(http.MethodGet, "/packets"))
	relay.killDuring(home, "bob", "mail_sync", map[string]any{}, false, isPath(http.MethodDelete, ""))
	got := callTool(t, home, "bob", "mail_list", map[string]any{"direction": "received"})
	if n := len(items(got, "messages")); n < 1 || n > 2 {
		t.Fatalf("letters after the kills: %v", got)
	}
	callTool(t, home, "bob", "mail_sync", map[string]any{})
	callTool(t, home, "bob", "mail_sync", map[string]any{})
	got = callTool(t, home, "bob", "mail_list", map[string]any{"direction": "received"})
	texts := map[string]int{}
	for _, m := range items(got, "messages") {
		texts[field(m, "parts", "0", "text").(string)]++
	}
	if len(texts) != 2 || texts["letter 0"] != 1 || texts["letter 1"] != 1 {
		t.Fatalf("letters: %v", texts)
	}
	inbox := callTool(t, home, "bob", "inbox_next", map[string]any{"kinds": []any{"mail.received"}, "limit": 10})
	if n := len(items(inbox, "items")); n != 2 {
		t.Fatalf("%d inbox items, want one per letter: %v", n, inbox)
	}
	relay.noNonceReused()
}
