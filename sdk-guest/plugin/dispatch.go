package plugin

import (
	"slices"
	"strconv"
	"strings"
)

// Op is an operation code of the ABI: the first argument of apconnect_call.
type Op int32

// The operations of ABI version 1.
const (
	OpDescribe Op = 1
	OpValidate Op = 2
	OpWatch    Op = 3
	OpTool     Op = 4
	OpPack     Op = 5
)

// Limits of the output envelopes (see schemas/plugin); the SDK trims values
// to them so that a chatty plugin is not refused by the host.
const (
	maxFieldErrors  = 32
	maxErrorMessage = 512
	maxErrorPath    = 256
	maxSummary      = 1024
	maxReason       = 256
	maxSuggested    = 8
)

// Handle runs one operation on the registered plugin: op and the input
// envelope in, the output envelope out. ok is false when the output is an
// error envelope. The WebAssembly export calls it; tests may call it
// directly on any platform.
func Handle(op Op, input []byte) (output []byte, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			output, ok = errorOutput("panic", panicText(r)), false
		}
	}()
	p := current()
	if p == nil {
		return errorOutput("not_registered", "the plugin did not call plugin.Register"), false
	}
	switch op {
	case OpDescribe:
		d := describe(p)
		return encoded(appendDescription(nil, &d))
	case OpValidate:
		return validate(p, input)
	case OpWatch:
		return watch(p, input)
	case OpTool:
		return callTool(p, input)
	case OpPack:
		return pack(p, input)
	}
	return errorOutput("unknown_op", "operation "+strconv.Itoa(int(op))+" is not part of ABI version "+strconv.Itoa(ABIVersion)), false
}

// encoded turns an encoder's result into an output envelope.
func encoded(b []byte, err error) ([]byte, bool) {
	if err != nil {
		return errorOutput("encode_failed", err.Error()), false
	}
	return b, true
}

// panicText describes a recovered panic value without fmt: errors,
// strings, Stringers, booleans and numbers as fmt.Sprint writes them.
func panicText(r any) string {
	switch v := r.(type) {
	case error:
		return v.Error()
	case string:
		return v
	case interface{ String() string }:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case int32:
		return strconv.FormatInt(int64(v), 10)
	case uint64:
		return strconv.FormatUint(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return "panic with a value that is not an error, a string or a number"
}

func badInput(err error) ([]byte, bool) {
	return errorOutput("bad_input", err.Error()), false
}

type toolDesc struct {
	Name         string `json:"name"`
	Title        string `json:"title,omitempty"`
	Description  string `json:"description"`
	InputSchema  any    `json:"input_schema"`
	OutputSchema any    `json:"output_schema,omitempty"`
}

type description struct {
	Name        string     `json:"name"`
	Version     string     `json:"version"`
	ABIVersion  int        `json:"abi_version"`
	Description string     `json:"description,omitempty"`
	Validates   []string   `json:"validates,omitempty"`
	Watches     []string   `json:"watches,omitempty"`
	Proposes    []string   `json:"proposes,omitempty"`
	Tools       []toolDesc `json:"tools,omitempty"`
	Packs       []Pack     `json:"packs,omitempty"`
}

func describe(p *Plugin) description {
	d := description{
		Name:        p.Name,
		Version:     p.Version,
		ABIVersion:  ABIVersion,
		Description: p.Description,
		Validates:   sortedKeys(p.Validators),
		Watches:     sortedKeys(p.Watchers),
		Proposes:    p.Proposes,
		Packs:       p.Packs,
	}
	for _, t := range p.Tools {
		schema := t.InputSchema
		if schema == nil {
			schema = map[string]any{"type": "object"}
		}
		d.Tools = append(d.Tools, toolDesc{
			Name:         t.Name,
			Title:        t.Title,
			Description:  t.Description,
			InputSchema:  schema,
			OutputSchema: t.OutputSchema,
		})
	}
	return d
}

func validate(p *Plugin, input []byte) ([]byte, bool) {
	req, err := decodeValidate(input)
	if err != nil {
		return badInput(err)
	}
	fn := p.Validators[req.Type]
	if fn == nil {
		return errorOutput("unknown_type", "the plugin validates no type "+strconv.Quote(req.Type)), false
	}
	errs := fn(req)
	if len(errs) > maxFieldErrors {
		errs = errs[:maxFieldErrors]
	}
	for i := range errs {
		errs[i] = cleanFieldError(errs[i])
	}
	return appendValidateOutput(make([]byte, 0, 64+96*len(errs)), errs), true
}

func cleanFieldError(e FieldError) FieldError {
	if e.Path != "" && !strings.HasPrefix(e.Path, "/") {
		e.Path = "/" + e.Path
	}
	e.Path = truncate(e.Path, maxErrorPath)
	if e.Message == "" {
		e.Message = "invalid"
	}
	e.Message = truncate(e.Message, maxErrorMessage)
	return e
}

type watchItem struct {
	InboxItem
	seq int64
}

func watch(p *Plugin, input []byte) ([]byte, bool) {
	req, err := decodeWatch(input)
	if err != nil {
		return badInput(err)
	}
	var items []watchItem
	for i := range req.Records {
		rec := &req.Records[i]
		fn := p.Watchers[rec.Type]
		if fn == nil {
			continue
		}
		it := fn(rec, req)
		if it == nil {
			continue
		}
		w := watchItem{InboxItem: *it, seq: rec.Seq}
		if w.Summary == "" {
			w.Summary = rec.Type + " record " + strconv.FormatInt(rec.Seq, 10)
		}
		w.Summary = truncate(w.Summary, maxSummary)
		w.Reason = truncate(w.Reason, maxReason)
		switch w.Priority {
		case "", PriorityLow, PriorityNormal, PriorityHigh:
		default:
			Log(LevelWarn, "watcher for "+rec.Type+": priority "+strconv.Quote(w.Priority)+" is not low, normal or high; using normal")
			w.Priority = PriorityNormal
		}
		w.SuggestedTools = cleanToolNames(w.SuggestedTools)
		items = append(items, w)
	}
	return appendWatchOutput(make([]byte, 0, 64+128*len(items)), items), true
}

// cleanToolNames keeps the first maxSuggested distinct valid tool names
// ([a-z0-9_]{1,64}); the host would refuse the whole output otherwise.
func cleanToolNames(names []string) []string {
	var out []string
	for _, n := range names {
		if len(out) == maxSuggested {
			break
		}
		if validToolName(n) && !slices.Contains(out, n) {
			out = append(out, n)
		} else if !validToolName(n) {
			Log(LevelWarn, "suggested tool "+strconv.Quote(n)+" is not a valid tool name; dropped")
		}
	}
	return out
}

func validToolName(n string) bool {
	if n == "" || len(n) > 64 {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

func callTool(p *Plugin, input []byte) ([]byte, bool) {
	req, err := decodeTool(input)
	if err != nil {
		return badInput(err)
	}
	var tool *Tool
	for i := range p.Tools {
		if p.Tools[i].Name == req.Name {
			tool = &p.Tools[i]
		}
	}
	if tool == nil || tool.Handler == nil {
		return errorOutput("unknown_tool", "the plugin has no tool "+strconv.Quote(req.Name)), false
	}
	res, err := tool.Handler(req)
	if err != nil {
		return encoded(appendToolResult(nil, &ToolResult{Content: []Content{{Type: "text", Text: err.Error()}}, IsError: true}))
	}
	if res == nil {
		res = &ToolResult{}
	}
	if len(res.Content) == 0 {
		text := ""
		if res.Structured != nil {
			b, err := appendValue(nil, res.Structured)
			if err != nil {
				return errorOutput("encode_failed", err.Error()), false
			}
			text = string(b)
		}
		res.Content = []Content{{Type: "text", Text: text}}
	}
	for i := range res.Content {
		if res.Content[i].Type == "" {
			res.Content[i].Type = "text"
		}
	}
	return encoded(appendToolResult(nil, res))
}

func pack(p *Plugin, input []byte) ([]byte, bool) {
	name, err := decodeName(input)
	if err != nil {
		return badInput(err)
	}
	for _, pk := range p.Packs {
		if pk.Name == name {
			return encoded(appendPack(nil, nil, &pk))
		}
	}
	return errorOutput("unknown_pack", "the plugin provides no pack "+strconv.Quote(name)), false
}
