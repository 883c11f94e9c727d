package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Raw JSON-RPC against the real binary over stdio: every malformed line
// gets an answer with a standard code (and the line's id when it has one),
// the process never exits, calls in flight survive, and a cancelled call is
// not answered.

// rawProc is `apconnect mcp` driven line by line.
type rawProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan map[string]any
	stderr *lockedBuffer
	exited chan error
}

func startRaw(t *testing.T, home, agent string) *rawProc {
	t.Helper()
	p := &rawProc{t: t, stderr: &lockedBuffer{}, lines: make(chan map[string]any, 64), exited: make(chan error, 1)}
	p.cmd = exec.Command(bin, "mcp", "--home", home, "--agent", agent)
	p.cmd.Stderr = p.stderr
	p.stdin, _ = p.cmd.StdinPipe()
	stdout, _ := p.cmd.StdoutPipe()
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = map[string]any{"unparseable": sc.Text()}
			}
			p.lines <- m
		}
		close(p.lines)
	}()
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		p.stdin.Close()
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
		}
	})
	return p
}

func (p *rawProc) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.t.Fatalf("write: %v\n%s", err, p.stderr.String())
	}
}

// next returns the next message on stdout, failing after d.
func (p *rawProc) next(d time.Duration) map[string]any {
	p.t.Helper()
	select {
	case m, ok := <-p.lines:
		if !ok {
			p.t.Fatalf("apconnect mcp closed stdout (exit: %v)\n%s", p.exitStatus(), p.stderr.String())
		}
		return m
	case <-time.After(d):
		p.t.Fatalf("no answer within %s\n%s", d, p.stderr.String())
	}
	return nil
}

func (p *rawProc) exitStatus() error {
	select {
	case err := <-p.exited:
		return err
	case <-time.After(time.Second):
		return fmt.Errorf("still running")
	}
}

// expectError reads the next message and checks it is an error with code
// and id (nil for a null id).
func (p *rawProc) expectError(what string, code float64, id any) map[string]any {
	p.t.Helper()
	m := p.next(20 * time.Second)
	e, _ := m["error"].(map[string]any)
	if e == nil || e["code"] != code || m["id"] != id || m["jsonrpc"] != "2.0" {
		p.t.Errorf("%s: got %v, want error %v with id %v", what, m, code, id)
	}
	if e != nil {
		if msg, _ := e["message"].(string); msg == "" {
			p.t.Errorf("%s: error without a message: %v", what, m)
		}
	}
	return e
}

// expectResult reads the next message and checks it is a result for id.
func (p *rawProc) expectResult(what string, id any) map[string]any {
	p.t.Helper()
	m := p.next(20 * time.Second)
	r, _ := m["result"].(map[string]any)
	if r == nil || m["id"] != id {
		p.t.Fatalf("%s: got %v, want a result with id %v", what, m, id)
	}
	return r
}

const rawInit = `{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`

func TestStdioMalformedInput(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	home := newHome(t, h, "alice")
	p := startRaw(t, home, "alice")

	// Before initialize: a standard code, not 0.
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	p.expectError("tools/list before initialize", -32600, float64(1))

	p.send(`hello`)
	p.expectError("not JSON", -32700, nil)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"ping",}`)
	p.expectError("trailing comma", -32700, float64(2)) // the id is read from the line's beginning
	p.send(`42`)
	p.expectError("a bare number", -32600, nil)
	p.send(`"ping"`)
	p.expectError("a bare string", -32600, nil)
	p.send(`{"jsonrpc":"1.0","id":3,"method":"ping"}`)
	p.expectError("jsonrpc 1.0", -32600, float64(3))
	p.send(`{"id":7,"method":"ping"}`)
	p.expectError("no jsonrpc member", -32600, float64(7))
	p.send(`{"jsonrpc":"2.0","id":4}`)
	p.expectError("neither method nor result", -32600, float64(4))
	p.send(`{"jsonrpc":"2.0","id":"s-5","method":42}`)
	p.expectError("method not a string", -32600, "s-5")
	p.send(`{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`)
	p.expectError("id an object", -32600, nil)
	p.send(`{"jsonrpc":"2.0","id":8,"method":"ping","params":"x"}`)
	p.expectError("params a string", -32600, float64(8))
	p.send(`[{"jsonrpc":"2.0","id":5,"method":"ping"}]`)
	p.expectError("a batch", -32600, nil)
	p.send(`[]`)
	p.expectError("an empty batch", -32600, nil)

	deep := `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"agent_protocols_rooms_list","arguments":{"x":` +
		strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}}}`
	p.send(deep)
	if e := p.expectError("1000 levels deep", -32600, float64(6)); e != nil && !strings.Contains(fmt.Sprint(e["message"]), "deep") {
		t.Errorf("depth error message %v", e["message"])
	}

	big := `{"jsonrpc":"2.0","id":9,"method":"ping","params":{"pad":"` + strings.Repeat("x", 40<<20) + `"}}`
	p.send(big)
	if e := p.expectError("a 40 MB line", -32600, float64(9)); e != nil && !strings.Contains(fmt.Sprint(e["message"]), "bytes") {
		t.Errorf("size error message %v", e["message"])
	}
	p.send("   ") // blank lines are skipped, not answered

	// Still serving: the handshake and a tool call work.
	p.send(fmt.Sprintf(rawInit, 10))
	p.expectResult("initialize", float64(10))
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send(`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"agent_protocols_identity_current","arguments":{}}}`)
	if r := p.expectResult("identity_current", float64(11)); r["isError"] == true {
		t.Fatalf("identity_current failed: %v", r)
	}
	// A second initialize is refused with a code.
	p.send(fmt.Sprintf(rawInit, 12))
	p.expectError("second initialize", -32600, float64(12))
	p.send(`{"jsonrpc":"2.0","id":13,"method":"no/such/method"}`)
	p.expectError("unknown method", -32601, float64(13))
	p.send(`{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":42}}`)
	p.expectError("bad params", -32602, float64(14))
	p.send(`{"jsonrpc":"2.0","id":15,"method":"prompts/list"}`)
	p.expectError("prompts are not offered", -32601, float64(15))
	p.send(`{"jsonrpc":"2.0","id":16,"method":"resources/read","params":{"uri":"agent-protocols://nothing/here"}}`)
	if e := p.expectError("unknown resource at 2025-11-25", -32002, float64(16)); e != nil && get(e, "data", "uri") != "agent-protocols://nothing/here" {
		t.Errorf("resource error data %v", e["data"])
	}

	if s := p.stderr.String(); strings.Contains(s, "panic") {
		t.Fatalf("apconnect mcp panicked:\n%s", s)
	}
}

// A call in flight survives a malformed line, and a cancelled call gets no
// answer (MCP: the receiver SHOULD NOT respond to a cancelled request).
func TestStdioCancellation(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	home := newHome(t, h, "alice")
	p := startRaw(t, home, "alice")
	p.send(fmt.Sprintf(rawInit, 1))
	p.expectResult("initialize", float64(1))
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	// A long poll in flight, then garbage: the poll still answers.
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"agent_protocols_inbox_next","arguments":{"wait_ms":1500}}}`)
	p.send(`{not json`)
	p.expectError("garbage while a call is in flight", -32700, nil)
	if r := p.expectResult("the long poll", float64(2)); r["isError"] == true {
		t.Fatalf("inbox_next: %v", r)
	}

	// A cancelled long poll is never answered; the process keeps serving.
	p.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"agent_protocols_inbox_next","arguments":{"wait_ms":3000}}}`)
	time.Sleep(200 * time.Millisecond)
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"the user gave up"}}`)
	p.send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	p.expectResult("ping after cancel", float64(4))
	deadline := time.After(4 * time.Second)
	for {
		select {
		case m, ok := <-p.lines:
			if !ok {
				t.Fatalf("stdout closed\n%s", p.stderr.String())
			}
			t.Fatalf("the cancelled call was answered: %v", m)
		case <-deadline:
			p.send(`{"jsonrpc":"2.0","id":5,"method":"ping"}`)
			p.expectResult("ping", float64(5))
			return
		}
	}
}

// 2026-07-28 over stdio: server/discover answers an unknown or a
// pre-2026 version with -32022 and the supported list, and a request at
// 2026-07-28 is served without initialize.
func TestStdioDiscover(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	home := newHome(t, h, "alice")
	p := startRaw(t, home, "alice")
	meta := func(v string) string {
		return `{"io.modelcontextprotocol/protocolVersion":"` + v + `","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"0"}}`
	}
	for i, v := range []string{"1999-01-01", "2025-11-25", "v999.0.0", "2099-01-01"} {
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"server/discover","params":{"_meta":%s}}`, i+1, meta(v)))
		e := p.expectError("discover at "+v, -32022, float64(i+1))
		sup, _ := get(e, "data", "supported").([]any)
		if len(sup) == 0 || get(e, "data", "requested") != v || !strings.Contains(fmt.Sprint(sup), "2026-07-28") {
			t.Errorf("discover at %s: data %v", v, e["data"])
		}
	}
	p.send(`{"jsonrpc":"2.0","id":10,"method":"server/discover","params":{}}`)
	p.expectError("discover without _meta", -32602, float64(10))
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":11,"method":"server/discover","params":{"_meta":%s}}`, meta("2026-07-28")))
	r := p.expectResult("discover at 2026-07-28", float64(11))
	if !strings.Contains(fmt.Sprint(r["supportedVersions"]), "2026-07-28") {
		t.Fatalf("discover result %v", r)
	}
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"agent_protocols_identity_current","arguments":{},"_meta":%s}}`, meta("2026-07-28")))
	if r := p.expectResult("tools/call at 2026-07-28", float64(12)); r["isError"] == true {
		t.Fatalf("identity_current: %v", r)
	}
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":13,"method":"resources/read","params":{"uri":"agent-protocols://nothing/here","_meta":%s}}`, meta("2026-07-28")))
	if e := p.expectError("unknown resource at 2026-07-28", -32602, float64(13)); e != nil && get(e, "data", "uri") != "agent-protocols://nothing/here" {
		t.Errorf("resource error data %v", e["data"])
	}
}
