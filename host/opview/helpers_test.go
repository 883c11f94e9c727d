package opview_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"apconnect/host/config"
	"apconnect/host/connector"
	"apconnect/host/connector/discourse"
	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	"apconnect/host/opview"
	"apconnect/host/proto/adp"
)

var bg = context.Background()

// hostile is text an attacker controls (room text, topics, profile
// fields): markup, a script, an attribute break-out, a bidirectional
// override and a control character.
const hostile = `<script>alert(1)</script><img src=x onerror=alert(2)>"'><b>bold</b> **md** [x](javascript:alert(3)) ` + "\u202eevil\u202c" + ` ` + "\x1b[31m"

// fixture is a real hub with two agents in one room: alice, whose view is
// served, and bob, who mentioned her with hostile text.
type fixture struct {
	t      *testing.T
	hub    *hubtest.Hub
	alice  *connector.Connector
	bob    *connector.Connector
	roomID string
	srv    *httptest.Server
	view   *opview.Handler
	addr   string
	bearer string
	beat   *connector.Heartbeat
}

func startHub(t *testing.T) *hubtest.Hub {
	return hubtest.Start(t, hubtest.WithOptions(func(o *hub.Options) {
		o.Limits.Discourse.Rules.MessageRate = -1
		o.Limits.Discourse.Rules.SignalRate = -1
		o.Limits.Discourse.Rules.ControlRate = -1
	}))
}

// newConnector opens the connector of the agent whose seed repeats seed in
// a fresh home allowing the hub.
func newConnector(t *testing.T, h *hubtest.Hub, seed byte) *connector.Connector {
	t.Helper()
	cfg, err := config.Default(t.TempDir(), config.DefaultOptions{HostURL: h.Origin(), HostLabel: "hub", HostCAFile: h.CAFile()})
	if err != nil {
		t.Fatal(err)
	}
	c, err := connector.New(bg, connector.Options{Config: cfg, Signer: hubtest.NewAgent(seed).Signer, WriteLimits: &adp.Limits{},
		PollInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// newFixture builds the fixture; alice follows the room live and the view
// is served on a loopback listener (by a process with a heartbeat when
// beat is set).
func newFixture(t *testing.T, o opview.Options, beat ...connector.ProcessInfo) *fixture {
	t.Helper()
	h := startHub(t)
	f := &fixture{t: t, hub: h, alice: newConnector(t, h, 0xA1), bob: newConnector(t, h, 0xB0), bearer: strings.Repeat("b", 43)}
	now := time.Now().UnixMilli()
	created, err := f.alice.Discourse().RoomCreate(bg, "s", discourse.RoomCreateInput{Host: h.Origin(), Topic: "Topic " + hostile,
		Visibility: "public", StartTime: now - 1000, EndTime: now + 3600_000, Policy: map[string]any{"open_roles": []any{"speaker"}}})
	if err != nil {
		t.Fatal(err)
	}
	f.roomID = created.Room.RoomID
	if _, err := f.bob.Discourse().RoomJoin(bg, "s", discourse.RoomJoinInput{Host: h.Origin(), RoomID: f.roomID, Role: "speaker"}); err != nil {
		t.Fatal(err)
	}
	f.post(t, "Alice, please look: "+hostile, true)
	f.alice.Start(bg)
	f.waitFor(t, "the mention in alice's inbox", func() bool {
		n, _ := f.alice.Store().Read().PendingTotal(bg)
		return n > 0
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.addr = ln.Addr().String()
	o.Addr, o.Bearer, o.Identity, o.AgentID = f.addr, f.bearer, "default", f.alice.AgentID()
	self := ""
	if len(beat) > 0 {
		beat[0].Addr = f.addr
		f.beat = f.alice.StartHeartbeat(bg, beat[0])
		t.Cleanup(f.beat.Stop)
		self = f.beat.ID()
	}
	if f.view, err = opview.New(opview.FromConnector(f.alice, self), o); err != nil {
		t.Fatal(err)
	}
	f.srv = httptest.NewUnstartedServer(f.view)
	f.srv.Listener.Close()
	f.srv.Listener = ln
	f.srv.Start()
	t.Cleanup(f.srv.Close)
	return f
}

// post has bob send a message to the room (mentioning alice when asked).
func (f *fixture) post(t *testing.T, text string, mention bool) {
	t.Helper()
	in := discourse.RoomSendMessageInput{Host: f.hub.Origin(), RoomID: f.roomID, Content: text, OnHeadMismatch: "send_anyway"}
	if mention {
		in.Mentions = []string{f.alice.AgentID()}
	}
	res, err := f.bob.Discourse().RoomSendMessage(bg, "s", in)
	if err != nil || res.Status != discourse.StatusSent {
		t.Fatalf("post: %+v %v", res, err)
	}
}

func (f *fixture) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// browser is an HTTP client with a cookie jar that follows no redirect.
func browser(t *testing.T) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Timeout: 20 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// login opens a fresh login URL with c and returns c logged in.
func (f *fixture) login(t *testing.T, c *http.Client) *http.Client {
	t.Helper()
	resp := f.get(t, c, f.view.LoginURL(), nil)
	if resp.status != http.StatusSeeOther || resp.header.Get("Location") != "/" {
		t.Fatalf("login: %d %s", resp.status, resp.body)
	}
	return c
}

type answer struct {
	status int
	header http.Header
	body   string
}

// get sends a GET with extra headers to a URL or a path of the view.
func (f *fixture) get(t *testing.T, c *http.Client, target string, hdr map[string]string) answer {
	t.Helper()
	return f.do(t, c, http.MethodGet, target, hdr)
}

func (f *fixture) do(t *testing.T, c *http.Client, method, target string, hdr map[string]string) answer {
	t.Helper()
	if strings.HasPrefix(target, "/") {
		target = "http://" + f.addr + target
	}
	req, err := http.NewRequest(method, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, header: resp.Header, body: string(b)}
}
