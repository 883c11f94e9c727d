package catalogcheck

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Prefix is the prefix of the standard tool names.
const Prefix = "agent_protocols_"

// Agent is one agent under test: a name and an MCP client session to its
// apconnect server. ID is filled in by the scenarios (identity_current).
type Agent struct {
	Name    string
	Session *mcp.ClientSession
	ID      string
}

// Catalog is what the scenarios need to know of the catalog under test.
type Catalog struct {
	// Names lists the tool names served.
	Names []string
	// Inputs and Required return a tool's input members and its required
	// ones.
	Inputs   func(tool string) []string
	Required func(tool string) []string
	// Validate checks a structured result against the tool's output schema
	// in that catalog.
	Validate func(tool string, data []byte) error
}

// Env is the world a scenario runs in: a local hub and four agents, each
// with its own connector, configured with the hub as their only host and
// profile service. None of them has used the hub yet.
type Env struct {
	Host                    string
	Alice, Bob, Carol, Dave *Agent
	Catalog                 Catalog
	// HubDir is the hub's data directory, where the Delegation scenario
	// hosts its principal (as apconnect hub principal put does). The hub
	// serves delegation history in pages of 2 (Limits.Delegation).
	HubDir string
	// Protocols are the protocols the hub hosts (hub.Hub.Protocols):
	// services_list {} reads one document for each.
	Protocols []string
}

// ToolError is a failed call's error.
type ToolError struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data"`
}

// obj is a decoded JSON object.
type obj = map[string]any

// runner calls tools and keeps track of what each tool was called with.
type runner struct {
	t   *testing.T
	env Env
	// covered[tool][input]: a successful call passed that input.
	covered map[string]map[string]bool
	// requiredOK and emptyDone: the tool was called with only its
	// required inputs (successfully) and with {}.
	requiredOK map[string]bool
	emptyDone  map[string]bool
	// sdkOnly: when set, every call must use 0.12.6 names and inputs only.
	sdkOnly bool
}

func newRunner(t *testing.T, env Env) *runner {
	return &runner{t: t, env: env, covered: map[string]map[string]bool{}, requiredOK: map[string]bool{}, emptyDone: map[string]bool{}}
}

// raw calls a tool and returns the result, failing on a protocol error.
func (r *runner) raw(a *Agent, tool string, args obj) *mcp.CallToolResult {
	r.t.Helper()
	name := Prefix + tool
	if r.sdkOnly {
		if _, ok := SDKToolNamed(name); !ok {
			r.t.Fatalf("%s is not a 0.12.6 tool", name)
		}
		for k := range args {
			if !slices.Contains(SDKInputs(name), k) {
				r.t.Fatalf("%s: %q is not a 0.12.6 input", name, k)
			}
		}
	}
	if args == nil {
		args = obj{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res, err := a.Session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		r.t.Fatalf("%s: %s: protocol error: %v", a.Name, name, err)
	}
	return res
}

// check validates a successful result against both catalogs and decodes it.
func (r *runner) check(a *Agent, tool string, args obj, res *mcp.CallToolResult) obj {
	r.t.Helper()
	name := Prefix + tool
	if res.IsError {
		r.t.Fatalf("%s: %s %s failed: %s", a.Name, name, mustJSON(args), textOf(res))
	}
	data, err := json.Marshal(res.StructuredContent)
	if err != nil {
		r.t.Fatal(err)
	}
	if err := r.env.Catalog.Validate(name, data); err != nil {
		r.t.Errorf("%s: %s %s: %v\n%s", a.Name, name, mustJSON(args), err, data)
	}
	if err := ValidateSDKOutput(name, data); err != nil {
		r.t.Errorf("%s: %s %s: %v\n%s", a.Name, name, mustJSON(args), err, data)
	}
	var out obj
	if err := json.Unmarshal(data, &out); err != nil {
		r.t.Fatal(err)
	}
	return out
}

// call calls a tool that must succeed, and notes the inputs it covered.
func (r *runner) call(a *Agent, tool string, args obj) obj {
	r.t.Helper()
	out := r.check(a, tool, args, r.raw(a, tool, args))
	cov := r.covered[tool]
	if cov == nil {
		cov = map[string]bool{}
		r.covered[tool] = cov
	}
	for k := range args {
		cov[k] = true
	}
	return out
}

// required calls a tool with exactly its required inputs; it must succeed.
func (r *runner) required(a *Agent, tool string, args obj) obj {
	r.t.Helper()
	var keys []string
	for k := range args {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := slices.Clone(r.env.Catalog.Required(Prefix + tool))
	slices.Sort(want)
	if !slices.Equal(keys, want) {
		r.t.Fatalf("%s: required-only call with %v, the catalog requires %v", tool, keys, want)
	}
	out := r.call(a, tool, args)
	r.requiredOK[tool] = true
	return out
}

// empty calls a tool with {}: a tool without required inputs must succeed,
// any other must refuse it as invalid_input.
func (r *runner) empty(a *Agent, tool string) obj {
	r.t.Helper()
	r.emptyDone[tool] = true
	res := r.raw(a, tool, obj{})
	if len(r.env.Catalog.Required(Prefix+tool)) == 0 {
		out := r.check(a, tool, obj{}, res)
		r.requiredOK[tool] = true
		return out
	}
	if e := errorOf(r.t, tool, res); e.Code != "invalid_input" {
		r.t.Errorf("%s with {}: %s, want invalid_input", tool, e.Code)
	}
	return nil
}

// fail calls a tool that must fail with code.
func (r *runner) fail(a *Agent, tool string, args obj, code string) ToolError {
	r.t.Helper()
	e := errorOf(r.t, tool, r.raw(a, tool, args))
	if e.Code != code {
		r.t.Fatalf("%s: %s %s: error %s (%s), want %s", a.Name, tool, mustJSON(args), e.Code, e.Message, code)
	}
	return e
}

// finish checks every tool was called with {}, with only its required
// inputs, and with every one of its inputs (the union of both catalogs'),
// each in some successful call.
func (r *runner) finish() {
	r.t.Helper()
	for _, name := range r.env.Catalog.Names {
		tool := strings.TrimPrefix(name, Prefix)
		if !r.emptyDone[tool] {
			r.t.Errorf("%s was never called with {}", name)
		}
		if !r.requiredOK[tool] {
			r.t.Errorf("%s was never called (successfully) with only its required inputs", name)
		}
		var missing []string
		for _, in := range r.env.Catalog.Inputs(name) {
			if !r.covered[tool][in] {
				missing = append(missing, in)
			}
		}
		for _, in := range SDKInputs(name) {
			if !slices.Contains(r.env.Catalog.Inputs(name), in) {
				r.t.Errorf("%s: the 0.12.6 input %s is not in the catalog", name, in)
			}
		}
		if len(missing) > 0 {
			r.t.Errorf("%s: inputs never passed in a successful call: %v", name, missing)
		}
	}
}

func errorOf(t *testing.T, tool string, res *mcp.CallToolResult) ToolError {
	t.Helper()
	if !res.IsError {
		t.Fatalf("%s: want an error, got %s", tool, textOf(res))
	}
	var body struct {
		Error *ToolError `json:"error"`
	}
	if err := json.Unmarshal([]byte(textOf(res)), &body); err != nil || body.Error == nil || body.Error.Code == "" {
		t.Fatalf("%s: malformed error result %q (%v)", tool, textOf(res), err)
	}
	return *body.Error
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

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

// get walks a path of object keys (and array indexes written as "0", "1").
func get(v any, path ...string) any {
	for _, p := range path {
		switch t := v.(type) {
		case obj:
			v = t[p]
		case []any:
			var i int
			if _, err := fmt.Sscan(p, &i); err != nil || i < 0 || i >= len(t) {
				return nil
			}
			v = t[i]
		default:
			return nil
		}
	}
	return v
}

func str(v any, path ...string) string { s, _ := get(v, path...).(string); return s }

func num(v any, path ...string) int64 { f, _ := get(v, path...).(float64); return int64(f) }

func list(v any, path ...string) []any { l, _ := get(v, path...).([]any); return l }

// eventually retries cond until it holds or d passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}
