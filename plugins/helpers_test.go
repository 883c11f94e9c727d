package plugins_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"apconnect/host/plugin"
	"apconnect/host/plugin/plugintest"
)

// now is the host clock of every test: the plugins see it as now_ms.
const now int64 = 1779753700000

const roomID = "d8ftedhpqhsusbg001tg"

var (
	rtOnce sync.Once
	rt     *plugin.Runtime
	rtErr  error

	loadMu sync.Mutex
	loads  = map[string]*loading{}
)

// loading is one plugin's build and load, shared by the tests.
type loading struct {
	once sync.Once
	p    *plugin.Plugin
}

// runtime is shared by every test of the binary: a fixed clock, every input
// envelope checked against its schema, plugintest's compilation cache.
func runtime(t *testing.T) *plugin.Runtime {
	t.Helper()
	rtOnce.Do(func() {
		rt, rtErr = plugin.NewRuntime(context.Background(), plugin.Options{
			CheckWatchInputs: true,
			Cache:            plugintest.CompilationCache(),
			Now:              func() time.Time { return time.UnixMilli(now) },
		})
	})
	if rtErr != nil {
		t.Fatal(rtErr)
	}
	return rt
}

// load builds the plugin in dir once per test binary and loads it once with
// exactly the grants its description asks for; the plugin is shared by the
// tests (its calls are safe for concurrent use) and never closed. Plugins
// load in parallel: compiling one takes seconds (over 15 s under -race)
// when plugintest's compilation cache is cold.
func load(t *testing.T, dir string) *plugin.Plugin {
	t.Helper()
	loadMu.Lock()
	l := loads[dir]
	if l == nil {
		l = &loading{}
		loads[dir] = l
	}
	loadMu.Unlock()
	l.once.Do(func() {
		wasm := build(t, dir)
		// Long deadlines: -race and a busy machine must not fail a verdict.
		limits := plugin.Limits{ValidateTimeout: 10 * time.Second, WatchTimeout: 10 * time.Second,
			ToolTimeout: 10 * time.Second, LoadTimeout: time.Minute}
		ins, err := runtime(t).Inspect(context.Background(), wasm, limits)
		if err != nil {
			t.Fatalf("inspect %s: %v", dir, err)
		}
		data, err := os.ReadFile(wasm)
		if err != nil {
			t.Fatal(err)
		}
		p, err := runtime(t).LoadBytes(context.Background(), filepath.Base(dir)+".wasm", data, plugin.Digest(data), ins.Grants, limits)
		if err != nil {
			t.Fatalf("load %s: %v", dir, err)
		}
		l.p = p
	})
	if l.p == nil {
		t.Fatalf("plugin %s did not load (see the test that loaded it first)", dir)
	}
	return l.p
}

// build builds the plugin in dir as `make build` does: a Rust crate
// (src/lib.rs) with sdk-guest/rust, a Go module otherwise.
func build(t testing.TB, dir string) string {
	t.Helper()
	return plugintest.Build(t, dir)
}

func ctx() context.Context { return context.Background() }

// id43 is a deterministic 43-character base64url string.
func id43(kind, name string) string {
	sum := sha256.Sum256([]byte(kind + ":" + name))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// agent returns the Agent ID of a named test agent.
func agent(name string) string { return "did:agent:" + id43("agent", name) }

// room builds a verified room the way the host would show it to plugins.
type room struct {
	id      string
	self    string // the active agent's name
	members []plugin.Member
	records []plugin.Record
	whole   bool // the host holds the room from seq 1
	seq     int64
}

// newRoom is a room of alice (moderator, creator), bob and self
// (speakers, self is "me") and olga (observer), holding every record.
func newRoom() *room {
	return &room{
		id: roomID, self: "me", whole: true, seq: 4, // seq 1-4: create and joins
		members: []plugin.Member{
			{AgentID: agent("alice"), Role: "moderator", Perspective: "Security"},
			{AgentID: agent("bob"), Role: "speaker", Perspective: "Performance"},
			{AgentID: agent("me"), Role: "speaker", Perspective: "Developer experience"},
			{AgentID: agent("olga"), Role: "observer"},
		},
	}
}

// add appends a record of typ by the named actor, accepted a minute apart
// and before now, and returns its event ID.
func (r *room) add(typ, actor string, payload any, mentions ...string) string {
	r.seq++
	eventID := id43("event", r.id+"/"+itoa(r.seq))
	at := acceptedAt(r.seq)
	var ms []string
	for _, m := range mentions {
		ms = append(ms, agent(m))
	}
	r.records = append(r.records, plugin.Record{
		Seq: r.seq, EventID: eventID, Type: typ, Actor: agent(actor),
		CreatedAt: at - 40, AcceptedAt: at, Mentions: ms, Payload: raw(payload),
	})
	return eventID
}

// acceptedAt is when the record at seq was accepted: a minute apart, the
// record at seq 1000 at now.
func acceptedAt(seq int64) int64 { return now - (1000-seq)*60_000 }

// redact replaces the record with eventID by its redacted form.
func (r *room) redact(eventID string) {
	for i, rec := range r.records {
		if rec.EventID == eventID {
			r.records[i] = plugin.Record{Seq: rec.Seq, EventID: rec.EventID, Type: rec.Type, AcceptedAt: rec.AcceptedAt, Redacted: true}
		}
	}
}

// base is the room context without records.
func (r *room) base() *plugin.RoomContext {
	self := agent(r.self)
	role := ""
	for _, m := range r.members {
		if m.AgentID == self {
			role = m.Role
		}
	}
	return &plugin.RoomContext{
		RoomID: r.id, Host: "https://127.0.0.1:8443", Status: "active", Creator: agent("alice"),
		Self: &plugin.Self{AgentID: self, Role: role}, Members: r.members,
	}
}

// context fills the records of scope as the host must (plugin.FillRecords).
func (r *room) context(t *testing.T, scope plugin.RecordScope) *plugin.RoomContext {
	t.Helper()
	rc := r.base()
	if err := plugin.FillRecords(ctx(), rc, scope, &plugin.HeldRecords{Records: r.records, WholeRoom: r.whole}); err != nil {
		t.Fatal(err)
	}
	return rc
}

func raw(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// obj is a JSON object literal.
type obj = map[string]any

// validate runs the plugin's validator on a proposal of typ by actor, with
// the context the host builds for it, and returns the refusals.
func validate(t *testing.T, p *plugin.Plugin, r *room, typ, actor string, payload obj) []plugin.FieldError {
	t.Helper()
	pr := plugin.Proposal{Type: typ, Actor: agent(actor), Payload: payload}
	errs, err := p.ValidateEvent(ctx(), pr, r.context(t, p.ValidateScope(pr)))
	if err != nil {
		t.Fatalf("validate %s: %v", typ, err)
	}
	return errs
}

// refusal is an expected FieldError: its path and a fragment of its message.
type refusal struct{ path, fragment string }

// wantErrs fails unless errs are exactly want, in order.
func wantErrs(t *testing.T, what string, errs []plugin.FieldError, want ...refusal) {
	t.Helper()
	ok := len(errs) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = errs[i].Path == want[i].path && strings.Contains(errs[i].Message, want[i].fragment)
	}
	if !ok {
		t.Errorf("%s: got %s, want %v", what, fmtErrs(errs), want)
	}
}

func fmtErrs(errs []plugin.FieldError) string {
	if len(errs) == 0 {
		return "no refusals"
	}
	var s []string
	for _, e := range errs {
		s = append(s, e.Path+": "+e.Message)
	}
	return "[" + strings.Join(s, "; ") + "]"
}

// watch runs the plugin's watch rules over the records of the room with
// seq > after, with a records-free context as sync passes it.
func watch(t *testing.T, p *plugin.Plugin, r *room, after int64) []plugin.InboxItem {
	t.Helper()
	var recs []plugin.Record
	for _, rec := range r.records {
		if rec.Seq > after {
			recs = append(recs, rec)
		}
	}
	items, err := p.Watch(ctx(), recs, r.base())
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	return items
}

// call runs a tool of p on the room with the context the host builds for
// it and returns its text and structured result, decoded into out.
func call(t *testing.T, p *plugin.Plugin, r *room, tool string, args obj, out any) string {
	t.Helper()
	if args == nil {
		args = obj{}
	}
	if _, ok := args["room_id"]; !ok {
		args["room_id"] = r.id
	}
	res, err := p.CallTool(ctx(), tool, raw(args), toolContext(t, p, tool, r))
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if res.IsError {
		t.Fatalf("%s: tool error %q", tool, res.Content[0].Text)
	}
	if out != nil {
		reflect.ValueOf(out).Elem().SetZero() // no leftovers from an earlier call
		if err := json.Unmarshal(raw(res.Structured), out); err != nil {
			t.Fatalf("%s: structured result: %v", tool, err)
		}
	}
	return res.Content[0].Text
}

// toolContext is the context the host builds for a call of tool on the
// room.
func toolContext(t *testing.T, p *plugin.Plugin, tool string, r *room) *plugin.ToolContext {
	t.Helper()
	return &plugin.ToolContext{Self: &plugin.Self{AgentID: agent(r.self)}, Room: r.context(t, p.ToolScope(tool))}
}

// callError runs a tool that must answer with an error result and returns
// its text.
func callError(t *testing.T, p *plugin.Plugin, tool string, args obj, tc *plugin.ToolContext) string {
	t.Helper()
	res, err := p.CallTool(ctx(), tool, raw(args), tc)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if !res.IsError {
		t.Fatalf("%s: want a tool error, got %q", tool, res.Content[0].Text)
	}
	return res.Content[0].Text
}

// wantItem finds the inbox item about seq.
// lastSeq is the seq of the room's latest record.
func (r *room) lastSeq() int64 { return r.seq }

// builds are the builds of the first-party plugin in dir that the tests
// run: the plugin itself (Rust, plugins/<name>) and its Go version
// (examples/plugins/<name>_go), which must behave the same.
func builds(dir string) []string {
	return []string{dir, "../examples/plugins/" + dir + "_go"}
}

// forBuilds runs fn in parallel subtests, one per build of the plugin in
// dir.
func forBuilds(t *testing.T, dir string, fn func(t *testing.T, p *plugin.Plugin)) {
	for _, d := range builds(dir) {
		t.Run(filepath.Base(d), func(t *testing.T) {
			t.Parallel()
			fn(t, load(t, d))
		})
	}
}
