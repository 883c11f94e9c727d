package plugin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"apconnect/host/identity"
)

// checkDepth scans JSON text and fails when arrays and objects nest deeper
// than max. It runs before parsing, so a hostile output cannot make the
// parser recurse.
func checkDepth(data []byte, max int) error {
	depth := 0
	inString := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > max {
				return fmt.Errorf("output nests deeper than %d levels", max)
			}
		case '}', ']':
			depth--
		}
	}
	return nil
}

// parseOutput checks one output envelope: depth, strict I-JSON, the op's
// schema (or the error envelope's) and the content policy.
func (p *Plugin) parseOutput(op Op, data []byte, isError bool) error {
	if err := checkDepth(data, p.limits.MaxOutputDepth); err != nil {
		return p.err(CodeInvalidOutput, op, "%v", err)
	}
	v, err := identity.ParseStrict(data)
	if err != nil {
		return p.err(CodeInvalidOutput, op, "output is not strict I-JSON: %v", err)
	}
	sch := p.rt.schemas.output[op]
	what := op.String() + " output"
	if isError {
		sch, what = p.rt.schemas.error, "error output"
	}
	if err := sch.Validate(v); err != nil {
		return p.err(CodeInvalidOutput, op, "%s does not match its schema: %s", what, schemaMessage(err))
	}
	if err := checkContent(v); err != nil {
		return p.err(CodeRefusedContent, op, "%v", err)
	}
	return nil
}

// decodeInto converts checked output into a typed Go value. Numbers inside
// untyped members (schemas, structured results, payloads) stay json.Number,
// as ParseStrict gives them.
func decodeInto(data []byte, out any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(out)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
