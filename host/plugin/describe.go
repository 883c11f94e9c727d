package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// describeInput is the describe envelope.
type describeInput struct {
	Op         string `json:"op"`
	NowMS      int64  `json:"now_ms"`
	ABIVersion int    `json:"abi_version"`
}

// describeOutput mirrors describe.output.json.
type describeOutput struct {
	Name        string     `json:"name"`
	Version     string     `json:"version"`
	ABIVersion  int        `json:"abi_version"`
	Description string     `json:"description"`
	Validates   []string   `json:"validates"`
	Watches     []string   `json:"watches"`
	Proposes    []string   `json:"proposes"`
	Tools       []toolSpec `json:"tools"`
	Packs       []Pack     `json:"packs"`
}

type toolSpec struct {
	Name         string         `json:"name"`
	Title        string         `json:"title"`
	Description  string         `json:"description"`
	InputSchema  map[string]any `json:"input_schema"`
	OutputSchema map[string]any `json:"output_schema"`
}

// Built-in ADP event types (Agent Discourse 1.0 section 12.2): never
// validated or proposed by plugins, never defined by packs.
var builtinTypes = map[string]bool{
	"room.create": true, "room.update": true, "room.close": true, "room.cancel": true,
	"type.define": true, "room.join": true, "room.join.request": true, "room.join.review": true,
	"room.leave": true, "room.member.role.update": true, "room.member.remove": true,
	"message.create": true,
}

// isCustomType reports whether t may be a room-defined type (ADP 12.3).
func isCustomType(t string) bool {
	return eventTypePattern.MatchString(t) && !builtinTypes[t] &&
		!strings.HasPrefix(t, "room.") && !strings.HasPrefix(t, "type.")
}

// mcpToolPrefix is reserved for apconnect's own tools.
const mcpToolPrefix = "agent_protocols"

var pluginNamePattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

// maxMCPToolName bounds "<plugin>_<tool>" (several MCP clients cap tool
// names at 64 characters).
const maxMCPToolName = 64

func (p *Plugin) nowMS() int64 { return p.rt.opts.Now().UnixMilli() }

// describeRaw runs the describe operation on the plugin's pool (Ready or
// not: it is part of getting ready) and returns its output once the
// output rules passed (cap, depth, strict I-JSON, schema, content policy).
func (p *Plugin) describeRaw(ctx context.Context) ([]byte, error) {
	input, err := json.Marshal(describeInput{Op: "describe", NowMS: p.nowMS(), ABIVersion: ABIVersion})
	if err != nil {
		return nil, p.err(CodeInvalidConfig, OpDescribe, "cannot encode the input envelope: %v", err)
	}
	if err := p.checkInput(OpDescribe, input); err != nil {
		return nil, err
	}
	var out []byte
	start := time.Now()
	err = p.invokeOnce(ctx, OpDescribe, input, func(output []byte) error {
		if err := p.parseOutput(OpDescribe, output, false); err != nil {
			return err
		}
		out = output
		return nil
	})
	p.record(OpDescribe, err, time.Since(start))
	if err != nil {
		return nil, describeErr(err)
	}
	return out, nil
}

// describeFrom checks a describe output (the plugin's answer, or the one
// the sealed cache kept) and installs the description: the output rules
// again when it comes from the cache, then the description rules and the
// grants.
func (p *Plugin) describeFrom(output []byte) error {
	if len(output) > p.limits.MaxDescribeBytes {
		return p.loadErr(CodeInvalidDescription, "describe output of %d bytes exceeds the cap of %d bytes", len(output), p.limits.MaxDescribeBytes)
	}
	if err := p.parseOutput(OpDescribe, output, false); err != nil {
		return describeErr(err)
	}
	var out describeOutput
	if err := decodeInto(output, &out); err != nil {
		return describeErr(p.err(CodeInvalidOutput, OpDescribe, "cannot decode the output: %v", err))
	}
	return p.applyDescription(&out)
}

// describeErr names the describe operation in err and turns a refused
// output into CodeInvalidDescription.
func describeErr(err error) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	e.Op = "describe"
	if e.Code == CodeInvalidOutput || e.Code == CodeRefusedContent {
		e.Code = CodeInvalidDescription
	}
	return e
}

// applyDescription checks a description against the rules and the grants
// and installs it.
func (p *Plugin) applyDescription(out *describeOutput) error {
	bad := func(format string, args ...any) error {
		return errorf(CodeInvalidDescription, p.source, "describe", format, args...)
	}
	if !pluginNamePattern.MatchString(out.Name) || strings.HasPrefix(out.Name, mcpToolPrefix) {
		return bad("plugin name %q must match [a-z][a-z0-9_]{0,31} and not start with %q", out.Name, mcpToolPrefix)
	}
	if out.ABIVersion != ABIVersion {
		return bad("describe says ABI version %d; the host speaks %d", out.ABIVersion, ABIVersion)
	}
	name := out.Name
	notGranted := func(format string, args ...any) error {
		return errorf(CodeNotGranted, name, "describe", format, args...)
	}
	inspect := slices.Contains(p.grants.Propose, "*")

	// Claims beyond grants.
	if len(out.Validates) > 0 && !p.grants.Validate {
		return notGranted("the plugin validates %s but is not granted %q", strings.Join(out.Validates, ", "), "validate")
	}
	if len(out.Watches) > 0 && !p.grants.Watch {
		return notGranted("the plugin watches %s but is not granted %q", strings.Join(out.Watches, ", "), "watch")
	}
	if len(out.Tools) > 0 && !p.grants.Tools {
		return notGranted("the plugin adds tool %q but is not granted %q", out.Tools[0].Name, "tools")
	}
	if len(out.Packs) > 0 && !p.grants.Packs {
		return notGranted("the plugin provides pack %q but is not granted %q", out.Packs[0].Name, "packs")
	}
	for _, t := range out.Proposes {
		if !inspect && !p.grants.CanPropose(t) {
			return notGranted("the plugin proposes %s events but is not granted %q", t, "propose:"+t)
		}
	}

	// Type names.
	for _, t := range out.Validates {
		if !isCustomType(t) {
			return bad("validated type %q is not a custom event type (built-in types are the host's)", t)
		}
	}
	for _, t := range out.Proposes {
		if !isCustomType(t) && t != "message.create" {
			return bad("proposed type %q is neither a custom event type nor message.create", t)
		}
	}

	d := &Description{
		Name: name, Version: out.Version, ABIVersion: out.ABIVersion, Description: out.Description,
		Validates: out.Validates, Watches: out.Watches, Proposes: out.Proposes,
	}
	p.validates, p.watches, p.proposes = setOf(out.Validates), setOf(out.Watches), setOf(out.Proposes)

	// Tools.
	p.tools = map[string]*toolEntry{}
	for i := range out.Tools {
		t := &out.Tools[i]
		if _, dup := p.tools[t.Name]; dup {
			return bad("tool %q is described twice", t.Name)
		}
		mcpName := name + "_" + t.Name
		if len(mcpName) > maxMCPToolName {
			return bad("tool %q: MCP name %q is longer than %d characters", t.Name, mcpName, maxMCPToolName)
		}
		in, err := checkUserSchema(t.InputSchema, fmt.Sprintf("tool %q input_schema", t.Name), schemaRules{rootObject: true, noCombinators: true})
		if err != nil {
			return bad("%v", err)
		}
		entry := &toolEntry{in: in, def: &ToolDef{
			Plugin: name, Name: t.Name, MCPName: mcpName, Title: t.Title, Description: t.Description,
			InputSchema: t.InputSchema, OutputSchema: t.OutputSchema, ReadOnly: !p.grants.ProposesAny(),
		}}
		if t.OutputSchema != nil {
			entry.out, err = checkUserSchema(t.OutputSchema, fmt.Sprintf("tool %q output_schema", t.Name), schemaRules{rootObject: true})
			if err != nil {
				return bad("%v", err)
			}
		}
		p.tools[t.Name] = entry
		d.Tools = append(d.Tools, *entry.def)
	}

	// Packs.
	p.packs = map[string]*Pack{}
	for i := range out.Packs {
		pk := &out.Packs[i]
		if err := checkPack(pk); err != nil {
			return bad("%v", err)
		}
		if _, dup := p.packs[pk.Name]; dup {
			return bad("pack %q is described twice", pk.Name)
		}
		p.packs[pk.Name] = pk
		d.Packs = append(d.Packs, *pk)
	}
	p.desc = d
	return nil
}

// checkPack applies the rules a plugin pack must follow beyond its schema:
// registered pack names are the specification's, type names are custom and
// unique, type schemas are self-contained draft 2020-12 schemas of at most
// 16 KiB. The full ADP type schema profile (I-Regexp patterns) is applied by
// the write path when a room imports the pack.
func checkPack(pk *Pack) error {
	if strings.HasPrefix(pk.Name, "adp:") {
		return fmt.Errorf("pack %q: the adp: namespace is reserved for registered packs", pk.Name)
	}
	seen := map[string]bool{}
	for _, t := range pk.Types {
		if !isCustomType(t.Type) {
			return fmt.Errorf("pack %q: type %q is not a custom event type", pk.Name, t.Type)
		}
		if seen[t.Type] {
			return fmt.Errorf("pack %q: type %q is defined twice", pk.Name, t.Type)
		}
		seen[t.Type] = true
		if _, err := checkUserSchema(t.Schema, fmt.Sprintf("pack %q type %q schema", pk.Name, t.Type), schemaRules{}); err != nil {
			return err
		}
	}
	return nil
}

func setOf(list []string) map[string]bool {
	m := make(map[string]bool, len(list))
	for _, s := range list {
		m[s] = true
	}
	return m
}
