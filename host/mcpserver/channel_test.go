package mcpserver

import (
	"crypto/ed25519"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"apconnect/host/config"
	"apconnect/host/connector"
	"apconnect/host/identity"
	"apconnect/host/inbox"
	"apconnect/host/wake"
)

// Channel mode over a connection: with [wake] claude_channel on, the
// server declares experimental claude/channel, its instructions say what a
// notification means, and once the client is initialized a new inbox item
// reaches it as a notifications/claude/channel notification with the
// pointer and string meta; with it off, none of that.
func TestChannelOverAConnection(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{true, false} {
		cfg, err := config.Default(t.TempDir(), config.DefaultOptions{HostURL: "https://127.0.0.1:9", HostLabel: "hub"})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Wake.ClaudeChannel = on
		seed := make([]byte, ed25519.SeedSize)
		conn, err := connector.New(bg, connector.Options{Config: cfg, Signer: identity.NewKeySigner(ed25519.NewKeyFromSeed(seed))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		w := wake.New(conn, wake.Options{Process: "test", Poll: 20 * time.Millisecond})
		w.Start(bg)
		t.Cleanup(func() { w.Close() })
		srv := New(conn, Options{Version: "test", Wake: w})
		ct, st := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(bg, ChannelTransport(st, w, nil), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ss.Close() })
		client, err := ct.Connect(bg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { client.Close() })

		id, _ := jsonrpc.MakeID(float64(1))
		init := json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}`)
		if err := client.Write(bg, &jsonrpc.Request{ID: id, Method: "initialize", Params: init}); err != nil {
			t.Fatal(err)
		}
		msg, err := client.Read(bg)
		resp, ok := msg.(*jsonrpc.Response)
		if err != nil || !ok || resp.Error != nil {
			t.Fatalf("initialize: %v %v", msg, err)
		}
		var res struct {
			Capabilities struct {
				Experimental map[string]any `json:"experimental"`
			} `json:"capabilities"`
			Instructions string `json:"instructions"`
		}
		if err := json.Unmarshal(resp.Result, &res); err != nil {
			t.Fatal(err)
		}
		_, declared := res.Capabilities.Experimental[wake.ChannelCapability]
		if declared != on || strings.Contains(res.Instructions, "Channel notifications:") != on {
			t.Errorf("channel mode %v: experimental %v, instructions %q", on, res.Capabilities.Experimental, res.Instructions)
		}
		if err := client.Write(bg, &jsonrpc.Request{Method: "notifications/initialized", Params: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
		seq := int64(5)
		if _, err := conn.Engine().AddInbox(bg, "test", []inbox.Item{{ID: "inbox_1", Kind: "room.mention", Priority: "high",
			RoomID: "r1", Host: "https://127.0.0.1:9", Seq: &seq, Reason: "do as I say", SuggestedTools: []string{}}}); err != nil {
			t.Fatal(err)
		}
		got := make(chan jsonrpc.Message, 1)
		go func() {
			m, err := client.Read(bg)
			if err == nil {
				got <- m
			}
		}()
		select {
		case m := <-got:
			req, ok := m.(*jsonrpc.Request)
			if !on || !ok || req.Method != wake.ChannelMethod || req.IsCall() {
				t.Fatalf("channel mode %v: %v", on, m)
			}
			var n map[string]any
			if err := json.Unmarshal(req.Params, &n); err != nil {
				t.Fatal(err)
			}
			want := `{"content":"Inbox item inbox_1: you were mentioned in room r1 (seq 5). Call agent_protocols_inbox_next.",` +
				`"meta":{"host":"https://127.0.0.1:9","inbox_id":"inbox_1","kind":"room.mention","room_id":"r1","seq":"5"}}`
			if b, _ := json.Marshal(n); string(b) != want {
				t.Errorf("notification %s\nwant %s", b, want)
			}
		case <-time.After(map[bool]time.Duration{true: 10 * time.Second, false: 500 * time.Millisecond}[on]):
			if on {
				t.Fatal("no channel notification")
			}
		}
	}
}
