package toolcatalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"apconnect/host/capability"
	"apconnect/host/identity"
)

// defsFile is the file of shared shapes in the tools directory. Tool files
// reference its definitions as "defs.json#/$defs/<Name>"; definitions refer to
// each other as "#/$defs/<Name>".
const defsFile = "defs.json"

const (
	toolRefPrefix = defsFile + "#/$defs/"
	defsRefPrefix = "#/$defs/"
)

// maxDescription bounds a tool description: it is sent to the model with
// every tools/list, so it must stay short.
const maxDescription = 1200

var toolNameRE = regexp.MustCompile(`^agent_protocols_[a-z0-9]+(_[a-z0-9]+)*$`)

// annotationKeys may stand next to a "$ref"; they override the description or
// metadata of the inlined definition and change nothing else.
var annotationKeys = map[string]bool{
	"description": true, "title": true, "default": true, "examples": true,
	"deprecated": true, "$comment": true,
}

// forbiddenInInputs are keywords an input schema may not use at any depth:
// several model APIs refuse a whole request over composition or conditional
// keywords, and external or internal references are not resolved by every
// client.
var forbiddenInInputs = []string{
	"oneOf", "anyOf", "allOf", "not", "if", "then", "else",
	"$ref", "$dynamicRef", "$defs", "dependentSchemas",
}

// accessPhrases are the words a description must contain for each access
// kind, so every tool tells the agent whether it reads local state, reads a
// host, or signs and submits a write (connector spec 4.3).
var accessPhrases = map[Access][]string{
	AccessLocalRead:   {"reads local state"},
	AccessHostRead:    {"reads the host"},
	AccessLocalUpdate: {"changes only local state"},
	AccessHostUpdate:  {"writes to the host"},
	AccessSignedWrite: {"signs and submits", "sign and submit"},
}

// toolFile is the on-disk shape of schemas/tools/<name>.json.
type toolFile struct {
	Name         string          `json:"name"`
	Title        string          `json:"title"`
	Description  string          `json:"description"`
	Access       Access          `json:"access"`
	Capability   json.RawMessage `json:"capability"`
	OriginInput  string          `json:"origin_input"`
	Annotations  *fileHints      `json:"annotations"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
}

// fileHints are the four MCP tool hints. Pointers tell a missing hint from a
// false one: every tool states all four.
type fileHints struct {
	ReadOnlyHint    *bool `json:"readOnlyHint"`
	DestructiveHint *bool `json:"destructiveHint"`
	IdempotentHint  *bool `json:"idempotentHint"`
	OpenWorldHint   *bool `json:"openWorldHint"`
}

// catalogTool is one loaded, bundled and checked tool.
type catalogTool struct {
	name        string
	title       string
	description string
	access      Access
	capability  capability.Capability
	originInput string
	hints       Hints
	input       []byte // bundled input schema, compact JSON
	output      []byte // bundled output schema, compact JSON
	inputProps  []string
	required    []string
	inSchema    *Schema
	outSchema   *Schema
}

// loadedCatalog is the whole loaded catalog, sorted by tool name.
type loadedCatalog struct {
	tools  []*catalogTool
	byName map[string]*catalogTool
}

// loadCatalog reads every tool file of fsys (the schemas/tools directory),
// bundles the shared definitions into each schema and checks the catalog
// rules. Any violation is an error naming the file. The schemas compile on
// first use (Schema.compiled); compileAll compiles them all now.
func loadCatalog(fsys fs.FS) (*loadedCatalog, error) {
	defsData, err := fs.ReadFile(fsys, defsFile)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", defsFile, err)
	}
	b, err := newBundler(defsData)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", defsFile, err)
	}
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	cat := &loadedCatalog{byName: make(map[string]*catalogTool)}
	for _, e := range entries {
		name := e.Name()
		if name == defsFile {
			continue
		}
		if e.IsDir() || !strings.HasSuffix(name, ".json") {
			return nil, fmt.Errorf("unexpected entry %q in the tools directory", name)
		}
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		t, err := loadTool(b, name, data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		cat.tools = append(cat.tools, t)
		cat.byName[t.name] = t
	}
	if len(cat.tools) == 0 {
		return nil, errors.New("no tool files found")
	}
	if unused := b.unusedDefs(); len(unused) > 0 {
		return nil, fmt.Errorf("%s: definitions used by no tool: %s", defsFile, strings.Join(unused, ", "))
	}
	slices.SortFunc(cat.tools, func(a, b *catalogTool) int { return strings.Compare(a.name, b.name) })
	return cat, nil
}

// compileAll compiles every schema of the catalog now and returns the
// first that does not compile. The tests run it on the embedded catalog, so
// a schema that would fail at its first use never ships.
func (c *loadedCatalog) compileAll() error {
	for _, t := range c.tools {
		for _, s := range []*Schema{t.inSchema, t.outSchema} {
			if _, err := s.compiled(); err != nil {
				return err
			}
		}
	}
	return nil
}

func loadTool(b *bundler, fileName string, data []byte) (*catalogTool, error) {
	// Strict I-JSON first: duplicate members would otherwise be silently
	// resolved one way here and perhaps another way by a reader of the file.
	if _, err := identity.ParseStrict(data); err != nil {
		return nil, err
	}
	var f toolFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	if !toolNameRE.MatchString(f.Name) {
		return nil, fmt.Errorf("tool name %q is not agent_protocols_ followed by lowercase words", f.Name)
	}
	if fileName != f.Name+".json" {
		return nil, fmt.Errorf("file name must be %s.json", f.Name)
	}
	if strings.TrimSpace(f.Title) == "" {
		return nil, errors.New("title is empty")
	}
	if err := checkDescription(f.Description, f.Access); err != nil {
		return nil, err
	}
	hints, err := checkHints(f.Annotations, f.Access)
	if err != nil {
		return nil, err
	}
	if len(f.InputSchema) == 0 || len(f.OutputSchema) == 0 {
		return nil, errors.New("inputSchema and outputSchema are both required")
	}

	t := &catalogTool{name: f.Name, title: f.Title, description: f.Description, access: f.Access, hints: hints, originInput: f.OriginInput}
	if t.capability, err = checkCapability(f.Capability); err != nil {
		return nil, err
	}

	in, err := b.bundle(f.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("inputSchema: %w", err)
	}
	if t.inputProps, t.required, err = checkInputSchema(in); err != nil {
		return nil, fmt.Errorf("inputSchema: %w", err)
	}
	if t.originInput != "" && (!t.capability.Valid() || !slices.Contains(t.inputProps, t.originInput)) {
		return nil, fmt.Errorf("origin_input %q must name an input member of a tool that needs a capability", t.originInput)
	}
	out, err := b.bundle(f.OutputSchema)
	if err != nil {
		return nil, fmt.Errorf("outputSchema: %w", err)
	}
	if err := checkOutputSchema(out); err != nil {
		return nil, fmt.Errorf("outputSchema: %w", err)
	}

	if t.input, err = encodeCompact(in); err != nil {
		return nil, err
	}
	if t.output, err = encodeCompact(out); err != nil {
		return nil, err
	}
	t.inSchema = newSchema(f.Name, schemaInput, t.input, t.inputProps)
	t.outSchema = newSchema(f.Name, schemaOutput, t.output, nil)
	return t, nil
}

// checkCapability reads the capability a tool needs: a grant name, or null
// for a tool that needs none (it must be stated either way).
func checkCapability(raw json.RawMessage) (capability.Capability, error) {
	if len(raw) == 0 {
		return 0, errors.New(`"capability" is required: a grant name, or null for a tool that needs none`)
	}
	var name *string
	if err := json.Unmarshal(raw, &name); err != nil {
		return 0, fmt.Errorf("capability: %w", err)
	}
	if name == nil {
		return 0, nil
	}
	c, err := capability.Lookup(*name)
	if err != nil {
		return 0, fmt.Errorf("capability: %w", err)
	}
	return c, nil
}

func checkDescription(desc string, access Access) error {
	phrases, ok := accessPhrases[access]
	if !ok {
		return fmt.Errorf("access %q is not one of local-read, host-read, local-update, host-update, signed-write", access)
	}
	if strings.TrimSpace(desc) == "" {
		return errors.New("description is empty")
	}
	if len(desc) > maxDescription {
		return fmt.Errorf("description is %d bytes, more than %d", len(desc), maxDescription)
	}
	lower := strings.ToLower(desc)
	for _, p := range phrases {
		if strings.Contains(lower, p) {
			return nil
		}
	}
	return fmt.Errorf("description of a %s tool must say %q", access, phrases[0])
}

func checkHints(h *fileHints, access Access) (Hints, error) {
	if h == nil || h.ReadOnlyHint == nil || h.DestructiveHint == nil || h.IdempotentHint == nil || h.OpenWorldHint == nil {
		return Hints{}, errors.New("annotations must set readOnlyHint, destructiveHint, idempotentHint and openWorldHint")
	}
	hints := Hints{
		ReadOnly:    *h.ReadOnlyHint,
		Destructive: *h.DestructiveHint,
		Idempotent:  *h.IdempotentHint,
		OpenWorld:   *h.OpenWorldHint,
	}
	switch {
	case hints.ReadOnly && hints.Destructive:
		return hints, errors.New("a read-only tool cannot be destructive")
	case hints.ReadOnly && !access.IsRead():
		return hints, fmt.Errorf("a read-only tool cannot have access %s", access)
	case (access == AccessSignedWrite || access == AccessHostUpdate) && hints.ReadOnly:
		return hints, fmt.Errorf("a %s tool cannot be read-only", access)
	case (access == AccessSignedWrite || access == AccessHostUpdate || access == AccessHostRead) && !hints.OpenWorld:
		return hints, fmt.Errorf("a %s tool talks to a host and must set openWorldHint", access)
	}
	return hints, nil
}

// checkInputSchema enforces the rules for what agents send. It returns the
// root property names in file order and the required names.
func checkInputSchema(v any) (props, required []string, err error) {
	root, ok := v.(*jsonObject)
	if !ok {
		return nil, nil, errors.New("not an object")
	}
	if typ, _ := root.str("type"); typ != "object" {
		return nil, nil, errors.New(`root must have "type": "object"`)
	}
	if ap, _ := root.get("additionalProperties"); ap != false {
		return nil, nil, errors.New(`root must have "additionalProperties": false (unknown fields are an error)`)
	}
	propsObj, ok := root.object("properties")
	if !ok {
		return nil, nil, errors.New(`root must have "properties" (use {} for no inputs)`)
	}
	props = append([]string(nil), propsObj.keys...)
	for _, name := range props {
		p, _ := propsObj.object(name)
		if p == nil {
			return nil, nil, fmt.Errorf("property %q is not a schema object", name)
		}
		if d, _ := p.str("description"); strings.TrimSpace(d) == "" {
			return nil, nil, fmt.Errorf("property %q has no description", name)
		}
	}
	if r, ok := root.get("required"); ok {
		arr, ok := r.([]any)
		if !ok {
			return nil, nil, errors.New(`"required" is not an array`)
		}
		for _, e := range arr {
			s, ok := e.(string)
			if !ok || !slices.Contains(props, s) || slices.Contains(required, s) {
				return nil, nil, fmt.Errorf("required entry %v is not a distinct declared property", e)
			}
			required = append(required, s)
		}
	}
	if slices.Contains(props, "room_id") {
		host, ok := propsObj.object("host")
		if !ok {
			return nil, nil, errors.New(`a tool that takes room_id must also take "host"`)
		}
		if pat, _ := host.str("pattern"); !strings.HasPrefix(pat, "^https://") {
			return nil, nil, errors.New(`"host" must be an https origin (pattern starting ^https://)`)
		}
	}
	if err := walkInput(root, ""); err != nil {
		return nil, nil, err
	}
	return props, required, nil
}

// walkInput checks one input subschema and everything below it.
func walkInput(s *jsonObject, at string) error {
	where := at
	if where == "" {
		where = "root"
	}
	for _, kw := range forbiddenInInputs {
		if _, ok := s.get(kw); ok {
			return fmt.Errorf("%s uses %q; input schemas must not", where, kw)
		}
	}
	typ, ok := s.get("type")
	if !ok {
		if at != "" && !isOpenSchema(s) {
			return fmt.Errorf(`%s has no "type"`, where)
		}
	} else if _, single := typ.(string); !single {
		return fmt.Errorf(`%s: "type" must be one string in input schemas`, where)
	}
	if typ == "object" {
		ap, ok := s.get("additionalProperties")
		if !ok {
			return fmt.Errorf(`%s: an object schema must state "additionalProperties"`, where)
		}
		if sub, isSchema := ap.(*jsonObject); isSchema {
			if err := walkInput(sub, at+"/additionalProperties"); err != nil {
				return err
			}
		}
		if props, ok := s.object("properties"); ok {
			for _, k := range props.keys {
				sub, ok := props.object(k)
				if !ok {
					return fmt.Errorf("%s/properties/%s is not a schema object", where, k)
				}
				if err := walkInput(sub, at+"/properties/"+k); err != nil {
					return err
				}
			}
		}
	}
	if items, ok := s.object("items"); ok {
		if err := walkInput(items, at+"/items"); err != nil {
			return err
		}
	}
	return nil
}

// isOpenSchema reports whether s accepts any value (only annotations).
func isOpenSchema(s *jsonObject) bool {
	for _, k := range s.keys {
		if !annotationKeys[k] {
			return false
		}
	}
	return true
}

func checkOutputSchema(v any) error {
	root, ok := v.(*jsonObject)
	if !ok {
		return errors.New("not an object")
	}
	if typ, _ := root.str("type"); typ != "object" {
		return errors.New(`root must have "type": "object" (MCP structured content is an object)`)
	}
	if _, ok := root.object("properties"); !ok {
		return errors.New(`root must have "properties"`)
	}
	return nil
}

// compileSchema compiles one bundled (reference-free) schema document
// under draft 2020-12 with a compiler of its own, so schemas compile
// independently and concurrently.
func compileSchema(tool string, kind schemaKind, data []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s %sSchema: %w", tool, kind, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := "mem://apconnect/tools/" + tool + "/" + string(kind) + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("%s %sSchema: %w", tool, kind, err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("%s %sSchema does not compile: %w", tool, kind, err)
	}
	return sch, nil
}

// bundler inlines the shared definitions of defs.json into tool schemas, so
// every schema served is self-contained and reference-free: MCP clients and
// model APIs do not resolve references to other documents, and several
// reject "$ref" and "$defs" altogether. (Keeping shapes once per schema in
// local "$defs" would save only about a tenth of the output size.)
type bundler struct {
	defs     *jsonObject
	resolved map[string]any // fully inlined definitions
	active   []string
	used     map[string]bool
}

func newBundler(defsData []byte) (*bundler, error) {
	if _, err := identity.ParseStrict(defsData); err != nil {
		return nil, err
	}
	v, err := decodeOrdered(defsData)
	if err != nil {
		return nil, err
	}
	root, ok := v.(*jsonObject)
	if !ok {
		return nil, errors.New("not an object")
	}
	for _, k := range root.keys {
		if k != "$defs" && k != "$comment" {
			return nil, fmt.Errorf("unexpected top-level member %q (only $defs and $comment)", k)
		}
	}
	defs, ok := root.object("$defs")
	if !ok {
		return nil, errors.New(`missing "$defs" object`)
	}
	for _, k := range defs.keys {
		if _, ok := defs.object(k); !ok {
			return nil, fmt.Errorf("$defs/%s is not a schema object", k)
		}
	}
	return &bundler{defs: defs, resolved: make(map[string]any), used: make(map[string]bool)}, nil
}

// bundle decodes one schema of a tool file and inlines every reference.
func (b *bundler) bundle(raw json.RawMessage) (any, error) {
	v, err := decodeOrdered(raw)
	if err != nil {
		return nil, err
	}
	if root, ok := v.(*jsonObject); ok {
		if _, ok := root.get("$defs"); ok {
			return nil, errors.New(`"$defs" belongs in defs.json, not in a tool file`)
		}
	}
	return b.inline(v, toolRefPrefix)
}

// inline returns v with every {"$ref": prefix+Name, ...annotations} replaced
// by a copy of the definition Name (itself inlined) with the annotations laid
// over it, and every "$comment" removed.
func (b *bundler) inline(v any, prefix string) (any, error) {
	switch t := v.(type) {
	case *jsonObject:
		if ref, ok := t.get("$ref"); ok {
			name, err := refName(ref, prefix)
			if err != nil {
				return nil, err
			}
			def, err := b.resolve(name)
			if err != nil {
				return nil, err
			}
			return overlay(def.(*jsonObject), t, name)
		}
		out := newJSONObject()
		for _, k := range t.keys {
			if k == "$comment" {
				continue
			}
			e, err := b.inline(t.vals[k], prefix)
			if err != nil {
				return nil, err
			}
			out.set(k, e)
		}
		return out, nil
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			c, err := b.inline(e, prefix)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	default:
		return v, nil
	}
}

// overlay lays the annotation members of ref (the object holding "$ref") over
// def, a fresh copy of the referenced definition.
func overlay(def, ref *jsonObject, name string) (*jsonObject, error) {
	if !hasOnlyAnnotations(ref) {
		return nil, fmt.Errorf("$ref to %s: siblings other than description, title, default, examples, deprecated are not allowed", name)
	}
	for _, k := range ref.keys {
		if k == "$ref" || k == "$comment" {
			continue
		}
		def.set(k, deepCopy(ref.vals[k]))
	}
	return def, nil
}

func hasOnlyAnnotations(ref *jsonObject) bool {
	for _, k := range ref.keys {
		if k != "$ref" && !annotationKeys[k] {
			return false
		}
	}
	return true
}

func refName(ref any, prefix string) (string, error) {
	s, ok := ref.(string)
	if !ok || !strings.HasPrefix(s, prefix) || len(s) == len(prefix) {
		return "", fmt.Errorf("$ref %v: must be %s<Name>", ref, prefix)
	}
	return strings.TrimPrefix(s, prefix), nil
}

// resolve returns a fresh copy of the fully inlined definition name.
func (b *bundler) resolve(name string) (any, error) {
	b.used[name] = true
	if v, ok := b.resolved[name]; ok {
		return deepCopy(v), nil
	}
	if slices.Contains(b.active, name) {
		return nil, fmt.Errorf("$defs/%s refers to itself (%s -> %s); recursive shapes cannot be inlined", name, strings.Join(b.active, " -> "), name)
	}
	def, ok := b.defs.get(name)
	if !ok {
		return nil, fmt.Errorf("no definition %q in %s", name, defsFile)
	}
	b.active = append(b.active, name)
	v, err := b.inline(def, defsRefPrefix)
	b.active = b.active[:len(b.active)-1]
	if err != nil {
		return nil, fmt.Errorf("$defs/%s: %w", name, err)
	}
	b.resolved[name] = v
	return deepCopy(v), nil
}

func (b *bundler) unusedDefs() []string {
	var out []string
	for _, k := range b.defs.keys {
		if !b.used[k] {
			out = append(out, k)
		}
	}
	return out
}
