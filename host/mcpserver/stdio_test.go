package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestDecodeMessage(t *testing.T) {
	t.Parallel()
	deep := func(n int) string {
		return `{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}}`
	}
	cases := []struct {
		in   string
		code int64  // 0: accepted
		id   string // raw id of the error ("" for null)
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, 0, ""},
		{`{"jsonrpc":"2.0","id":"a","method":"ping","params":{}}`, 0, ""},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0, ""},
		{`{"jsonrpc":"2.0","id":3,"result":{}}`, 0, ""},
		{`{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"x"}}`, 0, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"x","params":null}`, 0, ""},
		{deep(DefaultMaxDepth - 3), 0, ""},
		{`hello`, -32700, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"ping",}`, -32700, "1"}, // the id is recovered from the beginning
		{`{"jsonrpc":"2.0","id":1,"method":"ping"} trailing`, -32700, "1"},
		{`{"jsonrpc":"2.0","method":"ping","params":{,"id":1}`, -32700, ""},
		{`42`, -32600, ""},
		{`null`, -32600, ""},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, -32600, ""},
		{`{"jsonrpc":"1.0","id":1,"method":"ping"}`, -32600, "1"},
		{`{"jsonrpc":2.0,"id":1,"method":"ping"}`, -32600, "1"},
		{`{"id":"q","method":"ping"}`, -32600, `"q"`},
		{`{"jsonrpc":"2.0","id":4}`, -32600, "4"},
		{`{"jsonrpc":"2.0"}`, -32600, ""},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, -32600, ""},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, -32600, ""},
		{`{"jsonrpc":"2.0","id":[1],"method":"ping"}`, -32600, ""},
		{`{"jsonrpc":"2.0","id":1,"method":""}`, -32600, "1"},
		{`{"jsonrpc":"2.0","id":1,"method":7}`, -32600, "1"},
		{`{"jsonrpc":"2.0","id":1,"method":"x","params":3}`, -32600, "1"},
		{`{"jsonrpc":"2.0","id":1,"method":"x","result":{}}`, -32600, "1"},
		{`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`, -32600, "1"},
		{`{"jsonrpc":"2.0","ID":1,"method":"x"}`, 0, ""}, // a notification: member names are case-sensitive
		{deep(DefaultMaxDepth + 1), -32600, "1"},
		{`{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"]]"}}`, 0, ""},
	}
	for _, c := range cases {
		msg, werr := decodeMessage([]byte(c.in), limits{})
		switch {
		case c.code == 0 && werr != nil:
			t.Errorf("%.60s: refused: %v", c.in, werr.message)
		case c.code == 0 && msg == nil:
			t.Errorf("%.60s: no message", c.in)
		case c.code != 0 && werr == nil:
			t.Errorf("%.60s: accepted", c.in)
		case c.code != 0 && (werr.code != c.code || string(werr.id) != c.id):
			t.Errorf("%.60s: code %d id %q, want %d %q", c.in, werr.code, werr.id, c.code, c.id)
		}
		if werr != nil {
			var out map[string]any
			if err := json.Unmarshal(werr.encode(), &out); err != nil || out["jsonrpc"] != "2.0" {
				t.Errorf("%.60s: bad error response %s", c.in, werr.encode())
			}
			if _, ok := out["id"]; !ok {
				t.Errorf("%.60s: error response without id: %s", c.in, werr.encode())
			}
		}
	}
	if _, werr := decodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"p":"`+strings.Repeat("x", 200)+`"}}`), limits{maxBytes: 100}); werr == nil || werr.code != -32600 {
		t.Errorf("over the byte limit: %v", werr)
	}
}

// pipeServer runs srv over a StdioTransport fed by pipes and returns the
// client's ends: a line writer and a reader of response lines.
func pipeServer(t *testing.T, srv *mcp.Server, opts StdioOptions) (send func(string), recv func(time.Duration) map[string]any) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(bg)
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, NewStdioTransport(inR, outW, opts)) }()
	t.Cleanup(func() {
		inW.Close()
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("the server did not stop")
		}
	})
	lines := make(chan map[string]any, 16)
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			var m map[string]any
			_ = json.Unmarshal(sc.Bytes(), &m)
			lines <- m
		}
		close(lines)
	}()
	send = func(s string) {
		t.Helper()
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	recv = func(d time.Duration) map[string]any {
		t.Helper()
		select {
		case m := <-lines:
			return m
		case <-time.After(d):
			return nil
		}
	}
	return send, recv
}

// A cancelled call's work stops (its context is cancelled) and no response
// is written; other calls go on.
func TestStdioCancelStopsWork(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "0"}, nil)
	started, stopped := make(chan struct{}, 1), make(chan error, 1)
	mcp.AddTool(srv, &mcp.Tool{Name: "block"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, struct{}, error) {
		started <- struct{}{}
		select {
		case <-ctx.Done():
			stopped <- ctx.Err()
			return nil, struct{}{}, ctx.Err()
		case <-time.After(10 * time.Second):
			stopped <- nil
			return &mcp.CallToolResult{}, struct{}{}, nil
		}
	})
	send, recv := pipeServer(t, srv, StdioOptions{})
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	if m := recv(5 * time.Second); m == nil || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":{"name":"block","arguments":{}}}`)
	<-started
	send(`{"jsonrpc":"2.0","id":"call-1","method":"ping"}`)
	if m := recv(5 * time.Second); m == nil || get(m, "error", "code") != float64(-32600) || m["id"] != "call-1" {
		t.Fatalf("a reused in-flight id: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"call-1"}}`)
	select {
	case err := <-stopped:
		if err == nil {
			t.Fatal("the cancelled call ran to its end")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled call's work did not stop")
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if m := recv(5 * time.Second); m == nil || m["id"] != float64(2) {
		t.Fatalf("ping after the cancel: %v", m)
	}
	if m := recv(500 * time.Millisecond); m != nil {
		t.Fatalf("the cancelled call was answered: %v", m)
	}
	// The id is free again once the call is retired.
	send(`{"jsonrpc":"2.0","id":"call-1","method":"ping"}`)
	if m := recv(5 * time.Second); m == nil || m["id"] != "call-1" || m["result"] == nil {
		t.Fatalf("ping reusing a retired id: %v", m)
	}
}

// Lines over the limit are consumed and answered without being buffered;
// the next line is served.
func TestStdioLineLimit(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "0"}, nil)
	send, recv := pipeServer(t, srv, StdioOptions{MaxLineBytes: 1000, MaxDepth: 8})
	for _, n := range []int{1001, 70 << 10, 3 << 20} {
		send(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"p":"` + strings.Repeat("x", n) + `"}}`)
		m := recv(5 * time.Second)
		if get(m, "error", "code") != float64(jsonrpc.CodeInvalidRequest) || m["id"] != float64(1) || !strings.Contains(get(m, "error", "message").(string), "1000 bytes") {
			t.Fatalf("%d bytes: %v", n, m)
		}
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"ping","params":{"a":[[[[[[[[[]]]]]]]]]}}`)
	if m := recv(5 * time.Second); get(m, "error", "code") != float64(jsonrpc.CodeInvalidRequest) || m["id"] != float64(2) {
		t.Fatalf("too deep: %v", m)
	}
	send(`{"jsonrpc":"2.0","id":3,"method":"ping"}` + "\r")
	if m := recv(5 * time.Second); m == nil || m["id"] != float64(3) || m["result"] == nil {
		t.Fatalf("ping after the long lines: %v", m)
	}
}
