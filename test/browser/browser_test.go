//go:build browser

package browser

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"apconnect/host/config"
	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	"apconnect/host/plugin"
	"apconnect/host/plugin/plugintest"
)

// screenshotDir is where the pages' screenshots go (docs/opview/ of the
// repository).
const screenshotDir = "../../docs/opview"

// lockedBuffer collects a process's output.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// build compiles apconnect.
func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "apconnect")
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	cmd := exec.Command(goTool, "build", "-o", bin, "apconnect/cmd/apconnect")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building apconnect: %v\n%s", err, out)
	}
	return bin
}

// agent is one identity in a home of its own.
type agent struct {
	bin, home, name string
}

func (a *agent) run(t *testing.T, args ...string) (string, string) {
	t.Helper()
	cmd := exec.Command(a.bin, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("apconnect %v: %v\n%s\n%s", args, err, out.String(), errOut.String())
	}
	return out.String(), errOut.String()
}

// call calls one tool as the agent and returns its result.
func (a *agent) call(t *testing.T, tool string, args map[string]any) map[string]any {
	t.Helper()
	var b []byte
	if args == nil {
		args = map[string]any{}
	}
	b, _ = json.Marshal(args)
	out, _ := a.run(t, "call", "--home", a.home, "--agent", a.name, tool, string(b))
	var res map[string]any
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%s: %v: %s", tool, err, out)
	}
	return res
}

func newAgent(t *testing.T, bin string, h *hubtest.Hub, name string) *agent {
	t.Helper()
	a := &agent{bin: bin, home: filepath.Join(t.TempDir(), "home"), name: name}
	a.run(t, "init", "--home", a.home, "--name", name, "--unencrypted-key", "--host", h.Origin(), "--ca", h.CAFile())
	return a
}

// addPlugin builds a first-party plugin and enables it in the agent's
// config, with exactly the grants it asks for.
func (a *agent) addPlugin(t *testing.T, name string) {
	t.Helper()
	wasm := plugintest.Build(t, "../../plugins/"+name)
	ins, err := plugintest.Runtime(t).Inspect(context.Background(), wasm, plugin.Limits{LoadTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(a.home)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Plugins = append(cfg.Plugins, config.Plugin{Name: name, Path: wasm, SHA256: ins.Digest, Grants: ins.Grants.Strings(),
		Limits: config.DefaultPluginLimits(), Enabled: true})
	if err := cfg.Save(); err != nil {
		t.Fatal(err)
	}
}

var viewLine = regexp.MustCompile(`operator view: (http://(\S+)/login\?token=\S+)`)

// serve starts `apconnect serve` for the agent and returns its login URL
// and host:port, and the process.
func (a *agent) serve(t *testing.T) (string, string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(a.bin, "serve", "--home", a.home, "--agent", a.name, "--listen", "127.0.0.1:0")
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
		}
	}()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if m := viewLine.FindStringSubmatch(stderr.String()); m != nil {
			return m[1], m[2], cmd
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("serve printed no operator view line:\n%s", stderr.String())
	return "", "", nil
}

// jsString quotes s for a script.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// The operator's view in headless Chromium: a hub, two agents (alice,
// whose serve is viewed, with a plugin and a wake command; bob, who
// mentions her, writes her a letter and grants her a delegation), the
// login through the printed URL, every page, a message that appears
// without a reload within two seconds, the plain "disconnected" once serve
// stops, and a screenshot of each page in docs/opview/.
func TestOperatorViewInChromium(t *testing.T) {
	bin := build(t)
	h := hubtest.Start(t, hubtest.WithOptions(func(o *hub.Options) {
		o.Limits.Discourse.Rules.MessageRate = -1
	}))
	alice := newAgent(t, bin, h, "alice")
	bob := newAgent(t, bin, h, "bob")
	alice.addPlugin(t, "reactions")
	aliceID, _ := alice.call(t, "identity_current", nil)["agent_id"].(string)
	now := time.Now().UnixMilli()
	created := alice.call(t, "room_create", map[string]any{"host": h.Origin(), "topic": "Release review <v0.9>", "visibility": "public",
		"start_time": now - 1000, "end_time": now + 3600_000, "policy": map[string]any{"open_roles": []any{"speaker"}}})
	room, _ := created["room"].(map[string]any)
	roomID, _ := room["room_id"].(string)
	if aliceID == "" || roomID == "" {
		t.Fatalf("identity %q, room %v", aliceID, created)
	}
	bob.call(t, "room_join", map[string]any{"host": h.Origin(), "room_id": roomID, "role": "speaker"})
	mention := "Alice, can you review <b>the release notes</b> before Friday?"
	bob.call(t, "room_send_message", map[string]any{"host": h.Origin(), "room_id": roomID, "content": mention, "mentions": []any{aliceID}})
	bobID, _ := bob.call(t, "identity_current", nil)["agent_id"].(string)
	protocolState(t, h, alice, bob, aliceID, bobID)

	login, hostport, serve := alice.serve(t)
	d := startDriver(t)
	d.open(login)
	if got := d.url(); got != "http://"+hostport+"/" {
		t.Fatalf("after login the address bar says %q: the token must be gone", got)
	}
	d.waitFor("the stream to go live", `document.getElementById("conn").textContent === "live"`, 10*time.Second)

	// Status: the plugin list, the processes, the pending mention.
	d.waitFor("the plugin list", `document.querySelector('#plugins tr[data-plugin="reactions"]') &&
		document.querySelector('#plugins tr[data-plugin="reactions"]').innerText.includes("loaded")`, 5*time.Second)
	d.waitFor("serve online", `Array.from(document.querySelectorAll('#processes tr[data-state="online"]')).some(r => r.innerText.includes("serve"))`, 5*time.Second)
	d.waitFor("the pending count", `Number(document.getElementById("count-pending").textContent) >= 1`, 10*time.Second)
	d.waitFor("the hub's grants", `document.getElementById("origins").innerText.includes("discourse.write")`, time.Second)
	d.screenshot(filepath.Join(screenshotDir, "status.png"))

	// Rooms.
	d.open("http://" + hostport + "/rooms")
	row := `document.querySelector('tr[data-room-id=` + jsString(roomID) + `]')`
	d.waitFor("the room row", row+` && `+row+`.innerText.includes("verified")`, 10*time.Second)
	var href string
	d.eval("return "+row+".querySelector('a').getAttribute('href');", &href)
	d.screenshot(filepath.Join(screenshotDir, "rooms.png"))

	// Inbox: the pending mention, its markup shown as text.
	d.open("http://" + hostport + "/inbox")
	d.waitFor("the pending mention", `Array.from(document.querySelectorAll('#inbox-pending tr.mention')).some(r => r.innerText.includes("<b>the release notes</b>"))`, 10*time.Second)
	if d.truthy(`document.querySelector('#inbox-pending b') && document.querySelector('#inbox-pending b').textContent === "the release notes"`) {
		t.Fatal("the mention's markup became an element")
	}
	d.screenshot(filepath.Join(screenshotDir, "inbox.png"))

	// Outbox.
	d.open("http://" + hostport + "/outbox")
	d.waitFor("the outbox page", `document.getElementById("outbox-done") && document.getElementById("outbox-done").innerText.includes("room_")`, 5*time.Second)
	d.screenshot(filepath.Join(screenshotDir, "outbox.png"))

	// The protocol modules' pages: wake, mail and a letter, knowledge,
	// delegations.
	visitProtocolPages(t, d, hostport)

	// The room, and a new message that appears without a reload.
	d.open("http://" + hostport + href)
	d.waitFor("the marked mention", `Array.from(document.querySelectorAll('#timeline li.mention')).some(li => li.innerText.includes("<b>the release notes</b>"))`, 10*time.Second)
	d.waitFor("the stream to go live", `document.getElementById("conn").textContent === "live"`, 10*time.Second)
	d.eval(`window.__sameDocument = "yes"; return true;`, nil)
	live := fmt.Sprintf("Live update check %d: the signatures section is done.", time.Now().UnixNano())
	bob.call(t, "room_send_message", map[string]any{"host": h.Origin(), "room_id": roomID, "content": live})
	took := d.waitFor("the new message on the page", `document.getElementById("timeline").innerText.includes(`+jsString(live)+`)`, 2*time.Second)
	if !d.truthy(`window.__sameDocument === "yes"`) {
		t.Fatal("the page was reloaded")
	}
	t.Logf("the new message appeared %s after bob's write returned", took.Round(time.Millisecond))
	d.screenshot(filepath.Join(screenshotDir, "room.png"))

	// The used login URL opens nothing a second time.
	d.open(login)
	d.waitFor("the used token refused", `document.body.innerText.includes("already used")`, 5*time.Second)
	d.open("http://" + hostport + href)
	d.waitFor("the stream to go live again", `document.getElementById("conn").textContent === "live"`, 10*time.Second)

	// serve stops: the page says so plainly.
	if err := serve.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	d.waitFor("disconnected", `document.getElementById("conn").textContent.startsWith("disconnected")`, 10*time.Second)
	if !strings.HasPrefix(login, "http://127.0.0.1:") {
		t.Fatalf("login URL %q", login)
	}
}
