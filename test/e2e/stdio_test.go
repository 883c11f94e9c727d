package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"apconnect/examples/demo/scenario"
	"apconnect/host/hub/hubtest"
)

// The demo's scenario through two real `apconnect mcp` processes — a
// delegation for a principal the hub hosts (as demo.sh puts it), the
// discussion, a letter and its reply, a published conclusion — with bob's
// process stopped in the middle — alice mentions him while it is down — and
// started again; then the archive is verified by the binary.
func TestDemoScenarioWithRestart(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"", "2025-11-25"} {
		name := version
		if name == "" {
			name = "latest"
		}
		t.Run(name, func(t *testing.T) {
			h := startHub(t)
			home := newHome(t, h, "alice", "bob")
			principal := hostPrincipal(t, h, home, "alice-org", "alice")
			alice := startMCP(t, home, "alice", procOptions{protocol: version})
			bob := startMCP(t, home, "bob", procOptions{protocol: version})
			want := version
			if want == "" {
				want = "2026-07-28"
			}
			if v := alice.cs.InitializeResult().ProtocolVersion; v != want {
				t.Fatalf("negotiated %s, want %s", v, want)
			}
			var transcript bytes.Buffer
			restarts := 0
			res, err := scenario.Run(bg, &scenario.Scenario{
				Host:      h.Origin(),
				Principal: principal,
				Alice:     &scenario.Agent{Name: "alice", Session: alice.cs},
				Bob:       &scenario.Agent{Name: "bob", Session: bob.cs},
				Out:       &transcript,
				RestartBob: func(ctx context.Context, while func() error) (*mcp.ClientSession, error) {
					restarts++
					bob.stop()
					if err := while(); err != nil {
						return nil, err
					}
					bob = startMCP(t, home, "bob", procOptions{protocol: version})
					return bob.cs, nil
				},
			})
			if err != nil {
				t.Fatalf("scenario: %v\ntranscript:\n%s\nalice:\n%s\nbob:\n%s", err, transcript.String(), alice.stderr.String(), bob.stderr.String())
			}
			if restarts != 1 || res.Records != 9 || res.KnowledgeID == "" || res.KnowledgeSeq != 1 ||
				!strings.Contains(transcript.String(), "HELD (room_head_mismatch)") || !strings.Contains(transcript.String(), "messages never conflict") {
				t.Fatalf("restarts %d, result %+v\n%s", restarts, res, transcript.String())
			}
			code, out, errOut := apconnect(t, "verify-archive", "--ca", h.CAFile(), res.ArchiveURL)
			if code != 0 || !strings.Contains(out, "archive verified") || !strings.Contains(out, "records:    9") {
				t.Fatalf("verify-archive: %d\n%s\n%s", code, out, errOut)
			}
		})
	}
}

// hostPrincipal has the hub host principal name with the identity agent of
// home as its controller, as demo.sh does: `apconnect hub principal put`
// beside the running hub. It returns the principal's URL.
func hostPrincipal(t *testing.T, h *hubtest.Hub, home, name, agent string) string {
	t.Helper()
	code, out, errOut := apconnect(t, "id", "--home", home, "--agent", agent)
	var id string
	for line := range strings.Lines(out) {
		if v, ok := strings.CutPrefix(line, "agent id:"); ok {
			id = strings.TrimSpace(v)
		}
	}
	if code != 0 || id == "" {
		t.Fatalf("id %s: %d %s %s", agent, code, out, errOut)
	}
	url := h.Origin() + "/principals/" + name
	if code, out, errOut := apconnect(t, "hub", "principal", "put", "--data", h.DataDir(), "--name", name, "--controller", id); code != 0 ||
		!strings.Contains(out, "served at "+url) {
		t.Fatalf("hub principal put: %d %s %s", code, out, errOut)
	}
	return url
}

// call calls a tool and returns its structured result, failing on error.
func call(t testing.TB, p *proc, tool string, args map[string]any) map[string]any {
	t.Helper()
	res, err := p.cs.CallTool(bg, &mcp.CallToolParams{Name: "agent_protocols_" + tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %s: %v\n%s", p.name, tool, err, p.stderr.String())
	}
	if res.IsError {
		t.Fatalf("%s: %s failed: %s", p.name, tool, textOf(res))
	}
	var m map[string]any
	data, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// callErr calls a tool that must fail and returns its error code and data.
func callErr(t testing.TB, p *proc, tool string, args map[string]any) (string, map[string]any) {
	t.Helper()
	res, err := p.cs.CallTool(bg, &mcp.CallToolParams{Name: "agent_protocols_" + tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %s: %v", p.name, tool, err)
	}
	if !res.IsError {
		t.Fatalf("%s: %s succeeded: %s", p.name, tool, textOf(res))
	}
	var body struct {
		Error struct {
			Code string         `json:"code"`
			Data map[string]any `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(textOf(res)), &body); err != nil {
		t.Fatalf("%s: malformed error %q", tool, textOf(res))
	}
	return body.Error.Code, body.Error.Data
}

func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func get(v any, path ...string) any {
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	return v
}

// openRoles lets speakers and observers join a test room directly (the
// public default is observers only).
var openRoles = map[string]any{"open_roles": []any{"speaker", "observer"}}

// createRoom creates a room; a public one without a policy gets openRoles.
func createRoom(t testing.TB, p *proc, host, visibility string, policy map[string]any) string {
	t.Helper()
	now := time.Now().UnixMilli()
	args := map[string]any{"host": host, "topic": "e2e", "visibility": visibility, "start_time": now - 1000, "end_time": now + 3600_000}
	if policy == nil && visibility == "public" {
		policy = openRoles
	}
	if policy != nil {
		args["policy"] = policy
	}
	r := call(t, p, "room_create", args)
	return get(r, "room", "room_id").(string)
}

// The join paths over stdio: a rejected request, a second request, the role
// mismatch and the completion; and the draft paths: send_anyway on a write,
// and draft_commit send_as_is, send_anyway, stay_silent, plus draft_drop.
func TestJoinAndDraftPaths(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	home := newHome(t, h, "alice", "bob")
	alice := startMCP(t, home, "alice", procOptions{})
	bob := startMCP(t, home, "bob", procOptions{protocol: "2025-11-25"})
	bobID := get(call(t, bob, "identity_current", nil), "agent_id").(string)

	// Join: restricted room, request, rejection.
	roomID := createRoom(t, alice, h.Origin(), "restricted", nil)
	req := call(t, bob, "room_join", map[string]any{"host": h.Origin(), "room_id": roomID, "role": "speaker", "reason": "let me in"})
	if req["status"] != "approval_required" {
		t.Fatalf("join %v", req)
	}
	reqID := get(req, "join_request", "id")
	call(t, alice, "join_request_review", map[string]any{"room_id": roomID, "request_id": reqID, "decision": "reject", "reason": "not now"})
	if r := call(t, bob, "room_join", map[string]any{"room_id": roomID, "role": "speaker"}); r["status"] != "rejected" {
		t.Fatalf("after rejection %v", r)
	}
	// A new request (named afresh) and an approval with another role.
	req2 := call(t, bob, "room_join", map[string]any{"room_id": roomID, "role": "speaker", "request_id": reqID})
	if req2["status"] != "rejected" {
		t.Fatalf("naming the rejected request %v", req2)
	}
	items := call(t, alice, "inbox_next", map[string]any{"kinds": []any{"room.join.requested"}})
	for _, it := range items["items"].([]any) {
		call(t, alice, "inbox_ack", map[string]any{"ids": []any{get(it, "id")}, "action": "handled"})
	}

	// Approved with another role than asked: the completion must ask for
	// the approved role.
	room3 := createRoom(t, alice, h.Origin(), "restricted", nil)
	req3 := call(t, bob, "room_join", map[string]any{"host": h.Origin(), "room_id": room3, "role": "speaker"})
	call(t, alice, "join_request_review", map[string]any{"room_id": room3, "request_id": get(req3, "join_request", "id"), "decision": "approve", "role": "observer"})
	if code, data := callErr(t, bob, "room_join", map[string]any{"room_id": room3, "role": "speaker"}); code != "role_mismatch" || data["approved_role"] != "observer" {
		t.Fatalf("role mismatch: %s %v", code, data)
	}
	if r := call(t, bob, "room_join", map[string]any{"room_id": room3, "role": "observer"}); r["status"] != "joined" || get(r, "member", "role") != "observer" {
		t.Fatalf("completion %v", r)
	}

	// Invited: a direct join.
	room2 := createRoom(t, alice, h.Origin(), "restricted", map[string]any{"invites": map[string]any{bobID: "speaker"}})
	if r := call(t, bob, "room_join", map[string]any{"host": h.Origin(), "room_id": room2, "role": "speaker"}); r["status"] != "joined" {
		t.Fatalf("invited join %v", r)
	}

	// Drafts: bob reads, alice moves the head (a room.update of the agenda;
	// messages never do), bob's writes meet the moved head.
	raceOnce := func(text string) {
		call(t, bob, "room_timeline", map[string]any{"room_id": room2, "refresh": true, "unread_only": true, "mark_read": true})
		call(t, alice, "room_timeline", map[string]any{"room_id": room2, "refresh": true})
		if r := call(t, alice, "room_submit_event", map[string]any{"room_id": room2, "type": "room.update", "payload": map[string]any{"agenda": text}}); r["status"] != "sent" {
			t.Fatalf("alice %v", r)
		}
	}
	raceOnce("one")
	if r := call(t, bob, "room_send_message", map[string]any{"room_id": room2, "content": "regardless", "on_head_mismatch": "send_anyway"}); r["status"] != "sent" {
		t.Fatalf("send_anyway write %v", r)
	}
	for _, action := range []string{"send_as_is", "send_anyway", "stay_silent"} {
		raceOnce("before " + action)
		held := call(t, bob, "room_send_message", map[string]any{"room_id": room2, "content": "draft for " + action})
		if held["status"] != "held" {
			t.Fatalf("want held, got %v", held)
		}
		got := call(t, bob, "draft_get", map[string]any{"draft_id": get(held, "draft", "id")})
		if len(got["changes"].([]any)) == 0 {
			t.Fatalf("draft_get %v", got)
		}
		r := call(t, bob, "draft_commit", map[string]any{"draft_id": get(held, "draft", "id"), "action": action})
		want := "sent"
		if action == "stay_silent" {
			want = "dropped"
		}
		if r["status"] != want {
			t.Fatalf("%s: %v", action, r)
		}
	}
	raceOnce("before the drop")
	held := call(t, bob, "room_send_message", map[string]any{"room_id": room2, "content": "to drop"})
	if r := call(t, bob, "draft_drop", map[string]any{"draft_id": get(held, "draft", "id")}); r["status"] != "dropped" {
		t.Fatalf("drop %v", r)
	}
	if code, _ := callErr(t, bob, "draft_get", map[string]any{"draft_id": get(held, "draft", "id")}); code != "draft_not_found" {
		t.Fatalf("dropped draft: %s", code)
	}
	if l := call(t, bob, "drafts_list", nil); len(l["drafts"].([]any)) != 0 {
		t.Fatalf("drafts left %v", l)
	}
}

// Resource subscriptions and progress notifications over stdio.
func TestNotificationsOverStdio(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	home := newHome(t, h, "alice", "bob")
	alice := startMCP(t, home, "alice", procOptions{})
	var mu sync.Mutex
	updated := map[string]int{}
	var progress []float64
	bob := startMCP(t, home, "bob", procOptions{protocol: "2025-11-25", client: &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			mu.Lock()
			updated[r.Params.URI]++
			mu.Unlock()
		},
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, r.Params.Progress)
			mu.Unlock()
		},
	}})
	bobID := get(call(t, bob, "identity_current", nil), "agent_id").(string)
	roomID := createRoom(t, alice, h.Origin(), "public", nil)
	for i := range 3 {
		call(t, alice, "room_send_message", map[string]any{"room_id": roomID, "content": fmt.Sprint("message ", i), "on_head_mismatch": "send_anyway"})
	}
	params := &mcp.CallToolParams{Name: "agent_protocols_room_open", Arguments: map[string]any{"host": h.Origin(), "room_id": roomID}}
	params.SetProgressToken("open")
	if res, err := bob.cs.CallTool(bg, params); err != nil || res.IsError {
		t.Fatalf("room_open: %v %v", err, res)
	}
	waitFor(t, "progress", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(progress) > 0 && progress[len(progress)-1] == 4
	})
	call(t, bob, "room_join", map[string]any{"room_id": roomID, "role": "speaker"})
	for _, uri := range []string{"agent-protocols://inbox/pending", "agent-protocols://rooms/" + roomID + "/timeline"} {
		if err := bob.cs.Subscribe(bg, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
	}
	call(t, alice, "room_timeline", map[string]any{"room_id": roomID, "refresh": true})
	call(t, alice, "room_send_message", map[string]any{"room_id": roomID, "content": "Bob?", "mentions": []any{bobID}})
	waitFor(t, "resource updates", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return updated["agent-protocols://inbox/pending"] > 0 && updated["agent-protocols://rooms/"+roomID+"/timeline"] > 0
	})
	res, err := bob.cs.ReadResource(bg, &mcp.ReadResourceParams{URI: "agent-protocols://inbox/pending"})
	if err != nil || !strings.Contains(res.Contents[0].Text, `"room.mention"`) {
		t.Fatalf("inbox resource: %v %v", err, res)
	}
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The process: stdout carries only MCP, it stops on EOF and on SIGTERM or
// SIGINT with exit status 0, and a broken setup fails with status 1 and a
// message on stderr, nothing on stdout.
func TestMCPProcessLifecycle(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	home := newHome(t, h, "alice")
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		cmd := exec.Command(bin, "mcp", "--home", home)
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		var stderr lockedBuffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`+"\n")
		line := make([]byte, 0, 4096)
		buf := make([]byte, 1)
		for len(line) == 0 || line[len(line)-1] != '\n' {
			if _, err := stdout.Read(buf); err != nil {
				t.Fatalf("read: %v\n%s", err, stderr.String())
			}
			line = append(line, buf[0])
		}
		var resp struct {
			ID     int `json:"id"`
			Result struct {
				ProtocolVersion string         `json:"protocolVersion"`
				Capabilities    map[string]any `json:"capabilities"`
			} `json:"result"`
		}
		if err := json.Unmarshal(line, &resp); err != nil || resp.Result.ProtocolVersion != "2025-11-25" {
			t.Fatalf("initialize answer %q: %v", line, err)
		}
		if _, ok := resp.Result.Capabilities["logging"]; ok || resp.Result.Capabilities["resources"] == nil {
			t.Fatalf("capabilities %v", resp.Result.Capabilities)
		}
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil || !strings.Contains(stderr.String(), "stopping on a signal") {
				t.Fatalf("%v: %v\n%s", sig, err, stderr.String())
			}
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("%v did not stop apconnect mcp", sig)
		}
		stdin.Close()
	}
	code, out, errOut := apconnect(t, "mcp", "--home", t.TempDir())
	if code != 1 || out != "" || !strings.Contains(errOut, "apconnect init") {
		t.Fatalf("no config: %d %q %q", code, out, errOut)
	}
}
