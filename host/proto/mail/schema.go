package mail

import (
	_ "embed"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"apconnect/host/identity"
	"apconnect/host/schemaerr"
	"apconnect/host/text"
)

// SchemaJSON is the Agent Mail schema bundled with the reference SDK
// 0.12.6, verbatim (SOURCE.md). Its $defs are the definitions
// ValidateSchema takes.
//
//go:embed mail.schema.json
var SchemaJSON []byte

const schemaID = "https://agent-protocols.dev/schemas/agent-mail/1.0.schema.json"

// Schema definitions this package validates against.
const (
	DefCardEnvelope   = "mailboxCardEnvelope"
	DefPacketEnvelope = "packetEnvelope"
	DefMessage        = "messagePayload"
	DefPart           = "part"
	DefDiscovery      = "discoveryDocument"
	DefCardRecord     = "cardAcceptedRecord"
	DefDelivery       = "deliveryResult"
	DefPacketRecord   = "packetRecord"
	DefPacketList     = "packetList"
	DefMailboxList    = "mailboxList"
)

// maxSchemaErrors bounds the errors listed in an error's data.
const maxSchemaErrors = 16

var schemas struct {
	once     sync.Once
	err      error
	mu       sync.Mutex
	compiler *jsonschema.Compiler
	defs     map[string]*jsonschema.Schema
}

// ecmaEnd is the ECMA-262 end-of-input idiom the SDK's patterns end with.
const ecmaEnd = `$(?![\s\S])`

// schemaRegexp compiles the schema's ECMA patterns with RE2: the ending
// $(?![\s\S]) becomes \z; the rest of every pattern is already RE2. The
// pattern of canonical base64url, which part data and ciphertexts of up to
// a megabyte are matched against, is not one-pass for RE2 (its backtracker
// costs tens of nanoseconds a byte): it is matched by b64urlPattern, the
// same language checked in one scan.
func schemaRegexp(s string) (jsonschema.Regexp, error) {
	if s == b64urlSchemaPattern {
		return b64urlPattern{}, nil
	}
	return regexp.Compile(strings.ReplaceAll(s, ecmaEnd, `\z`))
}

// b64urlSchemaPattern is the schema's pattern of canonical unpadded
// base64url (its $defs base64url).
const b64urlSchemaPattern = `^(?:[A-Za-z0-9_-]{4})*(?:[A-Za-z0-9_-][AQgw]|[A-Za-z0-9_-]{2}[AEIMQUYcgkosw048])?$(?![\s\S])`

// b64urlPattern matches what b64urlSchemaPattern matches: base64url
// characters whose count is not 1 modulo 4, the last one of a 2- or 3-char
// tail carrying no bits beyond the data (canonical encoding).
type b64urlPattern struct{}

func (b64urlPattern) String() string { return b64urlSchemaPattern }

func (b64urlPattern) MatchString(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isB64URL(s[i]) {
			return false
		}
	}
	switch len(s) % 4 {
	case 0:
		return true
	case 2:
		return strings.IndexByte("AQgw", s[len(s)-1]) >= 0
	case 3:
		return strings.IndexByte("AEIMQUYcgkosw048", s[len(s)-1]) >= 0
	}
	return false
}

func isB64URL(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

// definition returns the compiled $defs entry name.
func definition(name string) (*jsonschema.Schema, error) {
	schemas.once.Do(func() {
		doc, err := identity.ParseStrict(SchemaJSON)
		if err != nil {
			schemas.err = fmt.Errorf("mail: embedded schema: %w", err)
			return
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		c.UseLoader(denyLoader{})
		c.UseRegexpEngine(schemaRegexp)
		if err := c.AddResource(schemaID, doc); err != nil {
			schemas.err = fmt.Errorf("mail: embedded schema: %w", err)
			return
		}
		schemas.compiler = c
		schemas.defs = map[string]*jsonschema.Schema{}
	})
	if schemas.err != nil {
		return nil, schemas.err
	}
	schemas.mu.Lock()
	defer schemas.mu.Unlock()
	if s, ok := schemas.defs[name]; ok {
		return s, nil
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return nil, fmt.Errorf("mail: %q is not a schema definition name", name)
		}
	}
	s, err := schemas.compiler.Compile(schemaID + "#/$defs/" + name)
	if err != nil {
		return nil, fmt.Errorf("mail: schema has no usable $defs/%s: %w", name, err)
	}
	schemas.defs[name] = s
	return s, nil
}

// ValidateSchema checks a strictly parsed JSON value (identity.ParseStrict)
// against a $defs entry of the bundled schema, the structural check the SDK
// makes with validate_mail_schema. It checks no signature, time or binding.
// A failure is an *identity.Error with code (invalid_event for signed
// objects, invalid_response for relay responses), the pointer (under
// pointer) of the first failing value, and data {"errors": [{path,
// message}]} listing at most 16 failures. An unknown definition is
// invalid_request.
func ValidateSchema(v any, def, code, pointer string) error {
	s, err := definition(def)
	if err != nil {
		return fail(CodeInvalidRequest, "", "%v", err)
	}
	verr := s.Validate(v)
	if verr == nil {
		return nil
	}
	leaves := schemaerr.Leaves(verr)
	list := make([]any, 0, min(len(leaves), maxSchemaErrors))
	for _, l := range leaves[:min(len(leaves), maxSchemaErrors)] {
		list = append(list, map[string]any{"path": pointer + l.Pointer, "message": text.Truncate(l.Message, 300)})
	}
	first := leaves[0]
	e := fail(code, pointer+first.Pointer, "%s schema violation: %s", def, text.Truncate(first.Message, 300))
	e.Data = map[string]any{"errors": list}
	e.Err = verr
	return e
}

// intMember reads the integer member key of a schema-checked object. The
// schema's "integer" also admits an integer written as a float (100.0,
// 1e2), which the SDKs read as the integer; apconnect refuses it (code), as
// host/identity refuses it in an event's created_at and nonce: a number
// must be written as an integer.
func intMember(m map[string]any, key, pointer, code string) (int64, error) {
	n, ok := identity.IntValue(m[key])
	if !ok {
		return 0, fail(code, pointer+"/"+key, "%s must be written as an integer", key)
	}
	return n, nil
}

// denyLoader refuses every URL: the schema is self-contained.
type denyLoader struct{}

func (denyLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("the mail schema is self-contained; %q is not loaded", text.Truncate(url, 120))
}
