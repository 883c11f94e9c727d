package mcpserver

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestRecoverID(t *testing.T) {
	t.Parallel()
	pad := strings.Repeat("x", 3*idScanBytes)
	cases := []struct {
		name string
		msg  string
		want string // raw JSON id, "" for none
	}{
		{"id second", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"c":"` + pad + `"}}`, `7`},
		{"string id first", `{ "id" : "a-\"b\"" , "jsonrpc":"2.0","params":{"c":"` + pad + `"}}`, `"a-\"b\""`},
		{"id last", `{"method":"tools/call","params":{"c":"` + pad + `"},"jsonrpc":"2.0","id":42}`, `42`},
		{"string id last, spaces", "{\"params\":{\"c\":\"" + pad + "\"} , \"id\" : \"r-9\" }\r\n", `"r-9"`},
		{"id last after an escaped quote", `{"params":{"c":"` + pad + `\\"},"id":"q\\"}`, `"q\\"`},
		{"id in params only", `{"jsonrpc":"2.0","method":"x","params":{"id":5,"c":"` + pad + `"}}`, ``},
		{"id inside a string at the end", `{"jsonrpc":"2.0","method":"x","params":{"c":"` + pad + `,\"id\":5}"}}`, ``},
		{"nested last member", `{"jsonrpc":"2.0","method":"x","params":{"c":"` + pad + `","id":5}}`, ``},
		{"no id", `{"jsonrpc":"2.0","method":"x","params":{"c":"` + pad + `"}}`, ``},
		{"id null", `{"jsonrpc":"2.0","id":null,"params":{"c":"` + pad + `"}}`, ``},
		{"id an object", `{"id":{"a":1},"params":{"c":"` + pad + `"}}`, ``},
		{"id a fraction", `{"params":{"c":"` + pad + `"},"id":1.5}`, ``},
		{"not an object", `[{"jsonrpc":"2.0","id":1}` + pad + `]`, ``},
		{"not JSON", `hello ` + pad, ``},
		{"cut after a short id", `{"jsonrpc":"2.0","id":12`, ``},
		{"trailing comma", `{"jsonrpc":"2.0","id":2,"method":"ping",}`, `2`},
		{"params before a broken id", `{"params":{"c":"` + pad + `"},"id":`, ``},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := recoverID(edges([]byte(c.msg)))
			if string(got) != c.want {
				t.Fatalf("id %q, want %q", got, c.want)
			}
		})
	}
	// A number cut by the end of the kept head is not taken for a shorter
	// id.
	head := []byte(`{"jsonrpc":"2.0","id":123456`)
	if id := headID(head); id != nil {
		t.Fatalf("a cut number read as %s", id)
	}
}

// tenMB is a tools/call of room_send_message whose content is 10 MB.
func tenMB(roomID string) json.RawMessage {
	b, _ := json.Marshal(obj{"name": pfx + "room_send_message", "arguments": obj{"room_id": roomID, "content": strings.Repeat("y", 10<<20)}})
	return b
}

// A 10 MB tools/call over a real stdio pipe, from the go-sdk client (which
// writes the id before the params) and as raw lines with the id first, the
// id last (the TypeScript SDK's order) and no id: each is answered within a
// second with its own id (null only for the line without one), -32600 and
// the limit in data; nothing is sent to the room; the server keeps serving.
func TestOverlongRequestOverStdio(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, "alice", 0xA1, agentOptions{})
	roomID := alice.createRoom("public", nil)
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- alice.srv.Run(bg, NewStdioTransport(inR, outW, StdioOptions{})) }()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("the server did not stop")
		}
	})
	// The go-sdk client over the pipes; tw notes when it finished writing.
	tw := &timedWriter{w: inW}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "0"}, nil).Connect(bg,
		&mcp.IOTransport{Reader: outR, Writer: tw}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = cs.CallTool(bg, &mcp.CallToolParams{Name: pfx + "room_send_message", Arguments: obj{"room_id": roomID, "content": strings.Repeat("y", 10<<20)}})
	failed := time.Now()
	var we *jsonrpc.Error
	if !asError(err, &we) || we.Code != jsonrpc.CodeInvalidRequest || !strings.Contains(we.Message, "bytes") {
		t.Fatalf("the client's 10 MB call: %v", err)
	}
	wantPrompt(t, "the go-sdk client's 10 MB call over stdio", start, tw.last(), failed)
	if res := callRaw(t, cs, pfx+"identity_current", obj{}); res.IsError {
		t.Fatalf("identity_current after the long line: %+v", res)
	}
	if n := len(get(alice.call("room_timeline", obj{"room_id": roomID, "refresh": true}), "items").([]any)); n != 1 {
		t.Fatalf("the room has %d items, want the genesis record only", n)
	}
}

// wantPrompt asserts that a refused 10 MB request was answered within a
// second of its last byte being written, and within a bound of its first
// (a second; more under the race detector, which slows the client's own
// encoding of the message many times over). The bug it guards against
// left the client waiting for its 60-second timeout.
func wantPrompt(t *testing.T, what string, start, written, answered time.Time) {
	t.Helper()
	total := answered.Sub(start)
	after := answered.Sub(written)
	t.Logf("%s: answered %s after the request was written, %s after it began", what, after, total)
	limit := time.Second
	if raceEnabled {
		limit = 15 * time.Second
	}
	if after > time.Second || total > limit {
		t.Fatalf("%s: answered %s after the request was written (%s in all), want within a second", what, after, total)
	}
}

// timedWriter notes when each write returned.
type timedWriter struct {
	w  io.WriteCloser
	mu sync.Mutex
	at time.Time
}

func (tw *timedWriter) Write(p []byte) (int, error) {
	n, err := tw.w.Write(p)
	tw.mu.Lock()
	tw.at = time.Now()
	tw.mu.Unlock()
	return n, err
}

func (tw *timedWriter) Close() error { return tw.w.Close() }

func (tw *timedWriter) last() time.Time {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	return tw.at
}

// asError is errors.As for the client's error.
func asError(err error, target **jsonrpc.Error) bool {
	for err != nil {
		if e, ok := err.(*jsonrpc.Error); ok {
			*target = e
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

// The same over raw stdio lines, in every member order.
func TestOverlongLinesKeepTheirID(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "0"}, nil)
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Run(bg, NewStdioTransport(inR, outW, StdioOptions{})) }()
	t.Cleanup(func() { inW.Close() })
	lines := make(chan map[string]any, 4)
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			var m map[string]any
			_ = json.Unmarshal(sc.Bytes(), &m)
			lines <- m
		}
	}()
	params := string(tenMB("r"))
	for _, c := range []struct {
		name string
		line string
		id   any
	}{
		{"id first", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":` + params + `}`, float64(2)},
		{"id last", `{"method":"tools/call","params":` + params + `,"jsonrpc":"2.0","id":"ts-3"}`, "ts-3"},
		{"no id", `{"jsonrpc":"2.0","method":"tools/call","params":` + params + `}`, nil},
	} {
		start := time.Now()
		if _, err := io.WriteString(inW, c.line+"\n"); err != nil {
			t.Fatal(err)
		}
		written := time.Now()
		var m map[string]any
		select {
		case m = <-lines:
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: no answer", c.name)
		}
		wantPrompt(t, "a 10 MB line, "+c.name, start, written, time.Now())
		if m["id"] != c.id || get(m, "error", "code") != float64(jsonrpc.CodeInvalidRequest) || get(m, "error", "data", "max_bytes") != float64(DefaultMaxMessageBytes) {
			t.Fatalf("%s: %v", c.name, m)
		}
	}
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","id":9,"method":"ping",}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if m := <-lines; m["id"] != float64(9) || get(m, "error", "code") != float64(jsonrpc.CodeParseError) {
		t.Fatalf("undecodable line: %v", m)
	}
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","id":10,"method":"ping"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if m := <-lines; m["id"] != float64(10) || m["result"] == nil {
		t.Fatalf("ping after the long lines: %v", m)
	}
}

// A 10 MB request over loopback HTTP: 413 with the JSON-RPC error and the
// request's id, within a second; a request without a readable id gets id
// null; the server keeps serving, and the go-sdk client's call fails
// within a second too.
func TestOverlongRequestOverHTTP(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, "alice", 0xA1, agentOptions{})
	roomID := alice.createRoom("public", nil)
	token := strings.Repeat("t0k3n", 10)
	url := "http://" + serveHTTP(t, alice, token) + HTTPPath
	post := func(body string, hdr map[string]string) (int, map[string]any, time.Duration) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		took := time.Since(start)
		if raceEnabled {
			took /= 10
		}
		var m map[string]any
		if resp.Header.Get("Content-Type") == "application/json" {
			_ = json.Unmarshal(b, &m)
		} else if i := strings.Index(string(b), "data: "); i >= 0 {
			_ = json.Unmarshal([]byte(strings.TrimSpace(string(b[i+6:]))), &m)
		}
		return resp.StatusCode, m, took
	}
	hdr := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": pfx + "room_send_message"}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"curl","version":"0"},"io.modelcontextprotocol/clientCapabilities":{}}`
	params := strings.TrimSuffix(string(tenMB(roomID)), "}") + "," + meta + "}"
	for _, c := range []struct {
		name, body string
		id         any
	}{
		{"id first", `{"jsonrpc":"2.0","id":21,"method":"tools/call","params":` + params + `}`, float64(21)},
		{"id last", `{"method":"tools/call","params":` + params + `,"jsonrpc":"2.0","id":22}`, nil},
	} {
		status, m, took := post(c.body, hdr)
		if status != http.StatusRequestEntityTooLarge || m["id"] != c.id || get(m, "error", "code") != float64(jsonrpc.CodeInvalidRequest) ||
			get(m, "error", "data", "max_bytes") != float64(DefaultMaxMessageBytes) {
			t.Fatalf("%s: %d %v", c.name, status, m)
		}
		if took > time.Second {
			t.Fatalf("%s: answered after %s (a tenth of it under the race detector), want within a second", c.name, took)
		}
		t.Logf("HTTP %s: 413 after %s (a tenth of it under the race detector)", c.name, took)
	}
	ok := `{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{"name":"` + pfx + `identity_current","arguments":{},` + meta + `}}`
	hdr["Mcp-Name"] = pfx + "identity_current"
	if status, m, _ := post(ok, hdr); status != http.StatusOK || m["id"] != float64(23) || get(m, "result", "isError") == true {
		t.Fatalf("a normal call after the long ones: %d %v", status, m)
	}

	// The go-sdk client over HTTP.
	hc := &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "http-long", Version: "0"}, nil).Connect(bg,
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	start := time.Now()
	if _, err := cs.CallTool(bg, &mcp.CallToolParams{Name: pfx + "room_send_message", Arguments: obj{"room_id": roomID, "content": strings.Repeat("y", 10<<20)}}); err == nil {
		t.Fatal("the 10 MB call succeeded")
	}
	// The client cannot finish writing a body the server stopped reading
	// at its limit: time the call as a whole.
	now := time.Now()
	wantPrompt(t, "the go-sdk client's 10 MB call over HTTP", start, now, now)
	if res := callRaw(t, cs, pfx+"identity_current", obj{}); res.IsError {
		t.Fatalf("identity_current after the long call: %+v", res)
	}
}
