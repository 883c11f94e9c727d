package adp

import (
	_ "embed"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"apconnect/host/identity"
)

// The kernel schemas. kernel/1.0.schema.json is the ADP 1.0 kernel schema of
// the reference SDK 0.12.6, the one hosts enforce. kernel/0f87fee.schema.json
// is the schema of the 0f87fee drafts (2026-09-24): readers also accept
// histories it accepts (dialect historical), so rooms written by older hosts
// still verify.
var (
	//go:embed kernel/1.0.schema.json
	kernelSchemaJSON []byte
	//go:embed kernel/0f87fee.schema.json
	legacyKernelSchemaJSON []byte
)

// kernelSchemaID is the $id of the embedded kernel schemas.
const kernelSchemaID = "https://agent-protocols.dev/schemas/agent-discourse/1.0.schema.json"

// kernelDefs are the kernel $defs this package validates against, compiled
// up front.
var kernelDefs = []string{
	"roomCreatePayload", "roomUpdatePayload", "roomJoinPayload", "roomJoinRequestPayload",
	"roomJoinReviewPayload", "reasonPayload", "roomMemberRoleUpdatePayload", "roomMemberRemovePayload",
	"messageCreatePayload", "typeDef", "packImport", "packDocument", "archiveManifest",
}

// kernelSchema is one embedded kernel schema, compiled once on first use.
type kernelSchema struct {
	name string
	src  []byte

	once sync.Once
	defs map[string]*jsonschema.Schema
	err  error

	// mu guards compiler and extra: definitions compiled on demand (a
	// jsonschema.Compiler is not safe for concurrent use).
	mu       sync.Mutex
	compiler *jsonschema.Compiler
	extra    map[string]*jsonschema.Schema

	// fast are plain-Go validators of some definitions (kernel_fast.go),
	// set with defs.
	fast map[string]func(any) bool
}

var (
	currentKernel = &kernelSchema{name: "kernel schema", src: kernelSchemaJSON}
	legacyKernel  = &kernelSchema{name: "0f87fee kernel schema", src: legacyKernelSchemaJSON}
)

// compile compiles the schema's kernelDefs once.
func (k *kernelSchema) compile() (map[string]*jsonschema.Schema, error) {
	k.once.Do(func() {
		doc, err := identity.ParseStrict(k.src)
		if err != nil {
			k.err = fmt.Errorf("adp: embedded %s: %w", k.name, err)
			return
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		c.UseLoader(denyLoader{})
		c.UseRegexpEngine(kernelRegexp)
		if err := c.AddResource(kernelSchemaID, doc); err != nil {
			k.err = fmt.Errorf("adp: embedded %s: %w", k.name, err)
			return
		}
		defs := map[string]*jsonschema.Schema{}
		for _, name := range kernelDefs {
			sch, err := c.Compile(kernelSchemaID + "#/$defs/" + name)
			if err != nil {
				k.err = fmt.Errorf("adp: embedded %s $defs/%s: %w", k.name, name, err)
				return
			}
			defs[name] = sch
		}
		k.defs = defs
		k.fast = fastValidators(doc)
		k.compiler = c
		k.extra = map[string]*jsonschema.Schema{}
	})
	return k.defs, k.err
}

// def returns the compiled $defs entry name, compiling and caching
// definitions outside kernelDefs on first use.
func (k *kernelSchema) def(name string) (*jsonschema.Schema, error) {
	defs, err := k.compile()
	if err != nil {
		return nil, err
	}
	if sch, ok := defs[name]; ok {
		return sch, nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if sch, ok := k.extra[name]; ok {
		return sch, nil
	}
	if !isDefName(name) {
		return nil, fmt.Errorf("adp: %q is not a kernel definition name", name)
	}
	sch, err := k.compiler.Compile(kernelSchemaID + "#/$defs/" + name)
	if err != nil {
		return nil, fmt.Errorf("adp: %s has no usable $defs/%s: %w", k.name, name, err)
	}
	k.extra[name] = sch
	return sch, nil
}

// isDefName reports whether s looks like a $defs member name (letters and
// digits), so a caller cannot smuggle a JSON pointer into the compile URL.
func isDefName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// ValidateKernel validates a strictly parsed JSON value (identity.ParseStrict)
// against a $defs entry of the ADP 1.0 kernel schema: an input shape such as
// "agentStatusInput", or a response shape such as "serverRecord",
// "joinRequest", "agentStatus", "discoveryDocument" or "archiveManifest". A
// mismatch is an invalid_request *Error with data {"errors": [{path,
// keyword, message}]}; a name the schema does not define is a plain error.
func ValidateKernel(def string, v any) error {
	if _, err := currentKernel.def(def); err != nil {
		return err
	}
	return validateKernel(def, v, CodeInvalidRequest, "")
}

// validateKernel validates v against a $defs entry of the current kernel
// schema. A failure is an *Error with the given code and pointer and data
// {"errors": [...]}, paths relative to v.
func validateKernel(def string, v any, code, pointer string) error {
	return validateKernelAs(current, def, v, code, pointer)
}

// validateKernelAs validates v as validateKernel does; in the historical
// dialect a value the 0f87fee kernel schema accepts passes too (the current
// schema's error is reported when neither does).
func validateKernelAs(d dialect, def string, v any, code, pointer string) error {
	err := validateAgainst(currentKernel, def, v, code, pointer)
	if err == nil || d != historical {
		return err
	}
	if _, ok := err.(*Error); !ok {
		return err
	}
	if validateAgainst(legacyKernel, def, v, code, pointer) == nil {
		return nil
	}
	return err
}

// validateAgainst validates v against a $defs entry of k.
func validateAgainst(k *kernelSchema, def string, v any, code, pointer string) error {
	sch, err := k.def(def)
	if err != nil {
		return err
	}
	if f := k.fast[def]; f != nil && f(v) {
		return nil // certainly valid; anything else is the schema's to judge
	}
	if err := sch.Validate(v); err != nil {
		list := validationFieldErrors(err)
		msg := "value does not match the ADP 1.0 kernel schema"
		if len(list) > 0 {
			fe := list[0]
			at := fe.Path
			if at == "" {
				at = "/"
			}
			msg = fmt.Sprintf("%s (at %s: %s)", msg, at, fe.Message)
		}
		e := newError(code, pointer, "%s", msg)
		e.Data = fieldErrorData(list)
		return e
	}
	return nil
}
