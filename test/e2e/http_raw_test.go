package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Raw JSON-RPC against `apconnect serve`: HTTP status codes and JSON-RPC
// error codes as the Streamable HTTP transport says, 2026-07-28 served
// statelessly next to 2025-11-25 sessions, presented heads per client, and
// cancellation.

// served is a running `apconnect serve`.
type served struct {
	url, hostport, token string
	stderr               *lockedBuffer
	cmd                  *exec.Cmd
}

// startServe starts `apconnect serve` for agent; shell, when set, wraps the
// command line (for limits).
func startServe(t *testing.T, home, agent string, shell string, extra ...string) *served {
	t.Helper()
	args := append([]string{"serve", "--home", home, "--agent", agent, "--listen", "127.0.0.1:0"}, extra...)
	var cmd *exec.Cmd
	if shell != "" {
		cmd = exec.Command("bash", append([]string{"-c", shell + ` && exec "$0" "$@"`, bin}, args...)...)
	} else {
		cmd = exec.Command(bin, args...)
	}
	stdout, _ := cmd.StdoutPipe()
	s := &served{stderr: &lockedBuffer{}, cmd: cmd}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	sc := bufio.NewScanner(stdout)
	for s.url == "" && sc.Scan() {
		if m := serveURL.FindStringSubmatch(sc.Text()); m != nil {
			s.url, s.hostport = m[1], m[2]
		}
	}
	if s.url == "" {
		t.Fatalf("serve printed no address\n%s", s.stderr.String())
	}
	go func() {
		for sc.Scan() {
		}
	}()
	raw, err := os.ReadFile(filepath.Join(home, "http.token"))
	if err != nil {
		t.Fatal(err)
	}
	s.token = strings.TrimSpace(string(raw))
	return s
}

// rpcReply is one HTTP answer: its status and the JSON-RPC messages in its
// body (one for a JSON body, every event of an event stream).
type rpcReply struct {
	status int
	header http.Header
	msgs   []map[string]any
	body   string
}

// last returns the last JSON-RPC message of the answer.
func (r rpcReply) last() map[string]any {
	if len(r.msgs) == 0 {
		return nil
	}
	return r.msgs[len(r.msgs)-1]
}

func (s *served) post(t *testing.T, body string, hdr map[string]string) rpcReply {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+s.token)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	r := rpcReply{status: resp.StatusCode, header: resp.Header, body: string(b)}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for _, line := range strings.Split(string(b), "\n") {
			if d, ok := strings.CutPrefix(line, "data:"); ok && strings.TrimSpace(d) != "" {
				var m map[string]any
				if json.Unmarshal([]byte(d), &m) == nil {
					r.msgs = append(r.msgs, m)
				}
			}
		}
	} else {
		var m map[string]any
		if json.Unmarshal(b, &m) == nil {
			r.msgs = append(r.msgs, m)
		}
	}
	return r
}

// expect checks an answer's HTTP status and its JSON-RPC error code and id
// (code 0: a result).
func expect(t *testing.T, what string, r rpcReply, status int, code float64, id any) map[string]any {
	t.Helper()
	m := r.last()
	if r.status != status {
		t.Errorf("%s: HTTP %d, want %d (%s)", what, r.status, status, r.body)
	}
	if m == nil {
		t.Errorf("%s: no JSON-RPC message in the body %q", what, r.body)
		return nil
	}
	if m["id"] != id || m["jsonrpc"] != "2.0" {
		t.Errorf("%s: id %v, want %v (%s)", what, m["id"], id, r.body)
	}
	if code == 0 {
		if m["result"] == nil {
			t.Errorf("%s: no result: %s", what, r.body)
		}
		res, _ := m["result"].(map[string]any)
		return res
	}
	e, _ := m["error"].(map[string]any)
	if e == nil || e["code"] != code {
		t.Errorf("%s: error %v, want code %v", what, m["error"], code)
	}
	return e
}

const v2026 = "2026-07-28"

// meta26 is the _meta of a 2026-07-28 request from client name.
func meta26(version, name string) string {
	return fmt.Sprintf(`{"io.modelcontextprotocol/protocolVersion":%q,"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":%q,"version":"1"}}`, version, name)
}

func call26(id int, tool, args, client string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"agent_protocols_%s","arguments":%s,"_meta":%s}}`, id, tool, args, meta26(v2026, client))
}

func hdr26(method, name string) map[string]string {
	h := map[string]string{"MCP-Protocol-Version": v2026, "Mcp-Method": method}
	if name != "" {
		h["Mcp-Name"] = name
	}
	return h
}

func TestServeRawJSONRPC(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	home := newHome(t, h, "alice")
	s := startServe(t, home, "alice", "")

	// Malformed bodies: 400 with a JSON-RPC error, never a plain-text page.
	expect(t, "not JSON", s.post(t, `hello`, nil), 400, -32700, nil)
	expect(t, "trailing comma", s.post(t, `{"jsonrpc":"2.0","id":1,"method":"ping",}`, nil), 400, -32700, float64(1)) // the id is read from the beginning
	expect(t, "a bare number", s.post(t, `42`, nil), 400, -32600, nil)
	expect(t, "jsonrpc 1.0", s.post(t, `{"jsonrpc":"1.0","id":3,"method":"ping"}`, nil), 400, -32600, float64(3))
	expect(t, "neither method nor result", s.post(t, `{"jsonrpc":"2.0","id":4}`, nil), 400, -32600, float64(4))
	expect(t, "a batch", s.post(t, `[{"jsonrpc":"2.0","id":5,"method":"ping"}]`, nil), 400, -32600, nil)
	deep := `{"jsonrpc":"2.0","id":6,"method":"ping","params":{"x":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}}`
	expect(t, "1000 levels deep", s.post(t, deep, nil), 400, -32600, float64(6))

	// A request without a session that is not initialize: 400, -32600.
	expect(t, "tools/list without a session", s.post(t, `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`, nil), 400, -32600, float64(7))
	expect(t, "tools/list without a session at 2025-11-25",
		s.post(t, `{"jsonrpc":"2.0","id":8,"method":"tools/list"}`, map[string]string{"MCP-Protocol-Version": "2025-11-25"}), 400, -32600, float64(8))

	// 2026-07-28 is served, statelessly.
	discover := func(id int, version string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"server/discover","params":{"_meta":%s}}`, id, meta26(version, "raw"))
	}
	res := expect(t, "discover", s.post(t, discover(10, v2026), hdr26("server/discover", "")), 200, 0, float64(10))
	if !strings.Contains(fmt.Sprint(res["supportedVersions"]), v2026) {
		t.Errorf("discover result %v", res)
	}
	for i, v := range []string{"v999.0.0", "2025-11-25"} {
		e := expect(t, "discover at "+v, s.post(t, discover(11+i, v), map[string]string{"MCP-Protocol-Version": v, "Mcp-Method": "server/discover"}), 400, -32022, float64(11+i))
		if sup, _ := get(e, "data", "supported").([]any); len(sup) == 0 || get(e, "data", "requested") != v {
			t.Errorf("discover at %s: data %v", v, e)
		}
	}
	expect(t, "discover with a header that does not match _meta", s.post(t, discover(13, "v999.0.0"), hdr26("server/discover", "")), 400, -32020, float64(13))
	r := s.post(t, call26(20, "identity_current", `{}`, "raw"), hdr26("tools/call", "agent_protocols_identity_current"))
	if res := expect(t, "identity_current at 2026-07-28", r, 200, 0, float64(20)); res["isError"] == true {
		t.Errorf("identity_current: %v", res)
	}
	if r.header.Get("Mcp-Session-Id") != "" {
		t.Errorf("a 2026-07-28 answer carries a session: %v", r.header)
	}
	expect(t, "ping at 2026-07-28 (removed)", s.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":21,"method":"ping","params":{"_meta":%s}}`, meta26(v2026, "raw")), hdr26("ping", "")), 404, -32601, float64(21))
	expect(t, "unknown method at 2026-07-28", s.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":22,"method":"no/such","params":{"_meta":%s}}`, meta26(v2026, "raw")), hdr26("no/such", "")), 404, -32601, float64(22))

	// Presented heads per 2026-07-28 client: a room alice creates; client
	// "one" reads its state, client "two" has not, and one keeps it across
	// requests.
	now := time.Now().UnixMilli()
	cr := expect(t, "room_create", s.post(t, call26(30, "room_create", fmt.Sprintf(`{"host":%q,"topic":"t","visibility":"public","start_time":%d,"end_time":%d}`, h.Origin(), now-1000, now+3600_000), "one"),
		hdr26("tools/call", "agent_protocols_room_create")), 200, 0, float64(30))
	roomID, _ := get(cr, "structuredContent", "room", "room_id").(string)
	if roomID == "" {
		t.Fatalf("room_create: %v", cr)
	}
	roomArgs := fmt.Sprintf(`{"room_id":%q}`, roomID)
	st := expect(t, "room_state (one)", s.post(t, call26(31, "room_state", roomArgs, "one"), hdr26("tools/call", "agent_protocols_room_state")), 200, 0, float64(31))
	if get(st, "structuredContent", "sync", "presented_seq") != float64(1) {
		t.Fatalf("room_state (one): %v", st)
	}
	ml := expect(t, "members (two)", s.post(t, call26(32, "room_members_list", roomArgs, "two"), hdr26("tools/call", "agent_protocols_room_members_list")), 200, 0, float64(32))
	if p := get(ml, "structuredContent", "sync", "presented_seq"); p != nil {
		t.Errorf("client two sees client one's presented head: %v", p)
	}
	ml = expect(t, "members (one)", s.post(t, call26(33, "room_members_list", roomArgs, "one"), hdr26("tools/call", "agent_protocols_room_members_list")), 200, 0, float64(33))
	if p := get(ml, "structuredContent", "sync", "presented_seq"); p != float64(1) {
		t.Errorf("client one lost its presented head across requests: %v", p)
	}
}

// A 2025-11-25 session over HTTP: a cancelled call is not answered, and
// the session goes on.
func TestServeCancellation(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	home := newHome(t, h, "alice")
	s := startServe(t, home, "alice", "")
	init := s.post(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`, nil)
	expect(t, "initialize", init, 200, 0, float64(1))
	sid := init.header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("no session: %v", init.header)
	}
	sess := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	if r := s.post(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, sess); r.status != http.StatusAccepted {
		t.Fatalf("initialized: %d %s", r.status, r.body)
	}
	got := make(chan rpcReply, 1)
	go func() {
		got <- s.post(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"agent_protocols_inbox_next","arguments":{"wait_ms":4000}}}`, sess)
	}()
	time.Sleep(300 * time.Millisecond)
	if r := s.post(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"gave up"}}`, sess); r.status != http.StatusAccepted {
		t.Fatalf("cancelled: %d %s", r.status, r.body)
	}
	select {
	case r := <-got:
		for _, m := range r.msgs {
			if m["id"] == float64(2) {
				t.Fatalf("the cancelled call was answered: %v", m)
			}
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the cancelled call's stream did not end")
	}
	expect(t, "ping after the cancel", s.post(t, `{"jsonrpc":"2.0","id":3,"method":"ping"}`, sess), 200, 0, float64(3))
	expect(t, "tools/list in the session", s.post(t, `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, sess), 200, 0, float64(4))
	expect(t, "a second initialize", s.post(t, `{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`, sess), 200, -32600, float64(5))
}

// Many idle unauthenticated connections — more than the process has file
// descriptors — cannot lock the token holder out of `apconnect serve`.
func TestServeIdleConnectionsCannotLockOut(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	home := newHome(t, h, "alice")
	s := startServe(t, home, "alice", "ulimit -n 256")
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for i := 0; i < 400; i++ {
		c, err := net.DialTimeout("tcp", s.hostport, 2*time.Second)
		if err != nil {
			break // the listen backlog is full: the attack is at its limit
		}
		if i%2 == 1 { // half of them start a request and never finish it
			fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\n", s.hostport)
		}
		held = append(held, c)
	}
	if len(held) < 300 {
		t.Fatalf("only %d connections could be opened", len(held))
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: false}}
	req, _ := http.NewRequest(http.MethodPost, s.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("the token holder is locked out by %d idle connections: %v\n%s", len(held), err, s.stderr.String())
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize: HTTP %d", resp.StatusCode)
	}
	// And keeps being served while the idle connections stay.
	r := s.post(t, call26(2, "identity_current", `{}`, "raw"), hdr26("tools/call", "agent_protocols_identity_current"))
	expect(t, "identity_current", r, 200, 0, float64(2))
}
