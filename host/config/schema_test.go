package config

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"apconnect/host/capability"
)

// anySlice is a list of strings as a decoded JSON array.
func anySlice(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

const schemaPath = "../../schemas/config.schema.json"

// loadSchema compiles schemas/config.schema.json with santhosh-tekuri v6
// (draft 2020-12) and also returns it as a generic value.
func loadSchema(t *testing.T) (*jsonschema.Schema, map[string]any) {
	t.Helper()
	data, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	const url = "https://apconnect.invalid/schemas/config.schema.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	if raw["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Fatalf("$schema is %v, want draft 2020-12", raw["$schema"])
	}
	return sch, raw
}

// tomlToJSONValue decodes a TOML document generically (no Go types, so
// unknown keys survive) and converts it to the value JSON Schema sees.
func tomlToJSONValue(t *testing.T, doc string) any {
	t.Helper()
	var v map[string]any
	if err := toml.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("sample is not TOML: %v", err)
	}
	j, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		t.Fatal(err)
	}
	return inst
}

// TestSchemaAgreesWithValidator runs the same documents through the Go
// validator and the JSON Schema. Where JSON Schema cannot express a rule
// (uniqueness of a member across array items, normalization, IPv6 syntax)
// the sample is marked goOnly: the schema accepts it and Go refuses it. Any
// other disagreement is drift.
func TestSchemaAgreesWithValidator(t *testing.T) {
	sch, _ := loadSchema(t)
	sha := strings.Repeat("0", 64)
	id := okIdentity
	plugin := func(extra string) string {
		return id + "[[plugins]]\nname = \"p\"\npath = \"p.wasm\"\nsha256 = \"" + sha + "\"\n" + extra
	}
	host := func(url string) string { return id + "[[hosts]]\nurl = \"" + url + "\"\nlabel = \"h\"\n" }
	samples := []struct {
		name   string
		doc    string
		valid  bool
		goOnly bool // Go refuses, the schema cannot tell
	}{
		{name: "full", doc: fullConfig, valid: true},
		{name: "empty", doc: "", valid: true},
		{name: "minimal", doc: id, valid: true},
		{name: "single identity default true", doc: id + "default = true\n", valid: true},
		{name: "single identity default false", doc: id + "default = false\n", valid: true},
		{name: "three identities one default", doc: id + "[[identities]]\nname = \"b\"\nkey_file = \"b\"\ndefault = true\n[[identities]]\nname = \"c\"\nkey_file = \"c\"\ndefault = false\n", valid: true},
		{name: "all grants", doc: plugin("grants = [\"validate\", \"watch\", \"tools\", \"packs\", \"propose:a.b\"]\nenabled = true\n[plugins.limits]\nmemory_mib = 1024\nvalidate_ms = 1\nwatch_ms = 60000\ntool_ms = 60000\n"), valid: true},
		{name: "host normalizable", doc: host("HTTPS://A.Example:443/"), valid: true},
		{name: "host ipv6 port", doc: host("https://[::1]:65535"), valid: true},
		{name: "optional paths empty", doc: id + "passphrase_file = \"\"\n[[hosts]]\nurl = \"https://a.example\"\nlabel = \"a\"\nca_file = \"\"\n", valid: true},
		{name: "state and http bounds", doc: id + "[state]\nrecords_per_room = 10\n[http]\nlisten = \"127.0.0.1:1\"\n", valid: true},
		{name: "host grants", doc: host("https://a.example") + "grants = [\"discourse.write\", \"agent.profile.read\"]\n", valid: true},
		{name: "host grants none", doc: host("https://a.example") + "grants = []\n", valid: true},
		{name: "host grants all ten", doc: host("https://a.example") + "grants = [\"" + strings.Join(capability.All().Names(), "\", \"") + "\"]\n", valid: true},
		{name: "host grants a write and its read", doc: host("https://a.example") + "grants = [\"mail.read\", \"mail.write\"]\n", valid: true},
		{name: "host grants multi-line", doc: host("https://a.example") + "grants = [\n  \"knowledge.read\",\n  \"delegation.write\",\n]\n", valid: true},
		{name: "limits all zero", doc: id + "[limits]\n" + allBudgets("0"), valid: true},
		{name: "limits all set", doc: id + "[limits]\n" + allBudgets("100000"), valid: true},
		{name: "limits empty table", doc: id + "[limits]\n", valid: true},
		{name: "mail", doc: id + "[mail]\nblocked_senders = [\"" + agentA + "\", \"" + agentB + "\"]\nsync_interval = \"1h30m\"\n", valid: true},
		{name: "mail bounds", doc: id + "[mail]\nblocked_senders = []\nsync_interval = \"5s\"\n", valid: true},
		{name: "mail upper bound fractional", doc: id + "[mail]\nsync_interval = \"0.5h\"\n", valid: true},
		{name: "mail units", doc: id + "[mail]\nsync_interval = \"1h59m59s999ms999us1000ns\"\n", valid: true},
		{name: "wake full", doc: id + wakeDoc, valid: true},
		{name: "wake every kind", doc: id + "[wake]\nkinds = [\"" + strings.Join(WakeKinds(), "\", \"") + "\"]\n", valid: true},
		{name: "wake command bare name", doc: id + "[[wake.command]]\nargv = [\"my-agent\"]\ntimeout = \"1s\"\n", valid: true},
		{name: "wake command dotted name", doc: id + "[[wake.command]]\nargv = [\".agent\", \"\u00e9\"]\ntimeout = \"24h\"\n", valid: true},

		{name: "budget negative", doc: id + "[limits]\nmail_sends = -1\n"},
		{name: "budget float", doc: id + "[limits]\nroom_signals = 2.5\n"},
		{name: "budget unknown", doc: id + "[limits]\nroom_reactions = 2\n"},
		{name: "blocked sender non-canonical", doc: id + "[mail]\nblocked_senders = [\"" + agentA[:len(agentA)-1] + "x\"]\n"},
		{name: "blocked sender short", doc: id + "[mail]\nblocked_senders = [\"did:agent:abc\"]\n"},
		{name: "blocked sender prefix", doc: id + "[mail]\nblocked_senders = [\"did:key:" + agentA[len("did:agent:"):] + "\"]\n"},
		{name: "blocked sender twice", doc: id + "[mail]\nblocked_senders = [\"" + agentA + "\", \"" + agentA + "\"]\n"},
		{name: "sync_interval words", doc: id + "[mail]\nsync_interval = \"1 minute\"\n"},
		{name: "sync_interval no unit", doc: id + "[mail]\nsync_interval = \"60\"\n"},
		{name: "sync_interval signed", doc: id + "[mail]\nsync_interval = \"+1m\"\n"},
		{name: "sync_interval negative", doc: id + "[mail]\nsync_interval = \"-1m\"\n"},
		{name: "sync_interval empty", doc: id + "[mail]\nsync_interval = \"\"\n"},
		{name: "wake kind unknown", doc: id + "[wake]\nkinds = [\"room.message\"]\n"},
		{name: "wake kinds empty", doc: id + "[wake]\nkinds = []\n"},
		{name: "wake kind twice", doc: id + "[wake]\nkinds = [\"room.steer\", \"room.steer\"]\n"},
		{name: "wake claude_channel string", doc: id + "[wake]\nclaude_channel = \"true\"\n"},
		{name: "command without argv", doc: id + "[[wake.command]]\ntimeout = \"1m\"\n"},
		{name: "command argv empty", doc: id + "[[wake.command]]\nargv = []\n"},
		{name: "command argv relative", doc: id + "[[wake.command]]\nargv = [\"./bin/agent\"]\n"},
		{name: "command argv relative dir", doc: id + "[[wake.command]]\nargv = [\"bin/agent\"]\n"},
		{name: "command argv tilde", doc: id + "[[wake.command]]\nargv = [\"~/bin/agent\"]\n"},
		{name: "command argv dot", doc: id + "[[wake.command]]\nargv = [\".\"]\n"},
		{name: "command argv dot dot", doc: id + "[[wake.command]]\nargv = [\"..\"]\n"},
		{name: "command program empty", doc: id + "[[wake.command]]\nargv = [\"\", \"x\"]\n"},
		{name: "command argument empty", doc: id + "[[wake.command]]\nargv = [\"/bin/x\", \"\"]\n"},
		{name: "command argument NUL", doc: id + "[[wake.command]]\nargv = [\"/bin/x\", \"a\\u0000b\"]\n"},
		{name: "command kinds unknown", doc: id + "[[wake.command]]\nargv = [\"x\"]\nkinds = [\"mail.sent\"]\n"},
		{name: "command kinds empty", doc: id + "[[wake.command]]\nargv = [\"x\"]\nkinds = []\n"},
		{name: "command timeout not a duration", doc: id + "[[wake.command]]\nargv = [\"x\"]\ntimeout = \"ten minutes\"\n"},
		{name: "command unknown key", doc: id + "[[wake.command]]\nargv = [\"x\"]\nshell = true\n"},
		{name: "wake command not an array", doc: id + "[wake]\ncommand = 1\n"},

		{name: "unknown top-level key", doc: "foo = 1\n" + id},
		{name: "unknown identity key", doc: id + "nmae = \"x\"\n"},
		{name: "unknown limits key", doc: plugin("[plugins.limits]\ncpu = 1\n")},
		{name: "type error", doc: "[[identities]]\nname = 5\nkey_file = \"k\"\n"},
		{name: "enabled not boolean", doc: plugin("enabled = \"yes\"\n")},
		{name: "http scheme", doc: host("http://a.example")},
		{name: "path", doc: host("https://a.example/v1")},
		{name: "query", doc: host("https://a.example?x")},
		{name: "fragment", doc: host("https://a.example#x")},
		{name: "userinfo", doc: host("https://u@a.example")},
		{name: "empty host", doc: host("https://")},
		{name: "port too large", doc: host("https://a.example:65536")},
		{name: "port leading zero", doc: host("https://a.example:0443")},
		{name: "missing url", doc: id + "[[hosts]]\nlabel = \"h\"\n"},
		{name: "bad label", doc: id + "[[hosts]]\nurl = \"https://a.example\"\nlabel = \"H\"\n"},
		{name: "bad identity name", doc: "[[identities]]\nname = \"a b\"\nkey_file = \"k\"\n"},
		{name: "missing key_file", doc: "[[identities]]\nname = \"a\"\n"},
		{name: "empty key_file", doc: "[[identities]]\nname = \"a\"\nkey_file = \"\"\n"},
		{name: "tilde key_file", doc: "[[identities]]\nname = \"a\"\nkey_file = \"~/k\"\n"},
		{name: "tilde passphrase_file", doc: id + "passphrase_file = \"~/p\"\n"},
		{name: "two identities no default", doc: id + "[[identities]]\nname = \"b\"\nkey_file = \"b\"\n"},
		{name: "two defaults", doc: id + "default = true\n[[identities]]\nname = \"b\"\nkey_file = \"b\"\ndefault = true\n"},
		{name: "profile service http", doc: id + "profile_services = [\"http://p.example\"]\n"},
		{name: "profile service repeated", doc: id + "profile_services = [\"https://p.example\", \"https://p.example\"]\n"},
		{name: "records 9", doc: id + "[state]\nrecords_per_room = 9\n"},
		{name: "records 100001", doc: id + "[state]\nrecords_per_room = 100001\n"},
		{name: "empty state dir", doc: id + "[state]\ndir = \"\"\n"},
		{name: "listen all interfaces", doc: id + "[http]\nlisten = \"0.0.0.0:8765\"\n"},
		{name: "listen port 0", doc: id + "[http]\nlisten = \"127.0.0.1:0\"\n"},
		{name: "sha256 uppercase", doc: id + "[[plugins]]\nname = \"p\"\npath = \"p\"\nsha256 = \"" + strings.Repeat("A", 64) + "\"\n"},
		{name: "sha256 missing", doc: id + "[[plugins]]\nname = \"p\"\npath = \"p\"\n"},
		{name: "plugin path missing", doc: id + "[[plugins]]\nname = \"p\"\nsha256 = \"" + sha + "\"\n"},
		{name: "plugin name reserved", doc: id + "[[plugins]]\nname = \"agent_protocols\"\npath = \"p\"\nsha256 = \"" + sha + "\"\n"},
		{name: "plugin name hyphen", doc: id + "[[plugins]]\nname = \"a-b\"\npath = \"p\"\nsha256 = \"" + sha + "\"\n"},
		{name: "unknown grant", doc: plugin("grants = [\"net\"]\n")},
		{name: "propose undotted", doc: plugin("grants = [\"propose:poll\"]\n")},
		{name: "propose reserved", doc: plugin("grants = [\"propose:room.create\"]\n")},
		{name: "duplicate grant", doc: plugin("grants = [\"tools\", \"tools\"]\n")},
		{name: "long grant", doc: plugin("grants = [\"propose:a." + strings.Repeat("b", 130) + "\"]\n")},
		{name: "memory 0", doc: plugin("[plugins.limits]\nmemory_mib = 0\n")},
		{name: "host grant unknown", doc: host("https://a.example") + "grants = [\"discourse.read\", \"rooms.write\"]\n"},
		{name: "host grant without agent prefix", doc: host("https://a.example") + "grants = [\"profile.read\"]\n"},
		{name: "host grant uppercase", doc: host("https://a.example") + "grants = [\"Mail.Read\"]\n"},
		{name: "host grant plugin name", doc: host("https://a.example") + "grants = [\"tools\"]\n"},
		{name: "host grant duplicate", doc: host("https://a.example") + "grants = [\"mail.read\", \"mail.read\"]\n"},
		{name: "host grants not an array", doc: host("https://a.example") + "grants = \"mail.read\"\n"},
		{name: "host grant not a string", doc: host("https://a.example") + "grants = [1]\n"},
		{name: "tool_ms too large", doc: plugin("[plugins.limits]\ntool_ms = 60001\n")},

		{name: "duplicate identity names", doc: id + "default = true\n" + id, goOnly: true},
		{name: "duplicate labels", doc: id + "[[hosts]]\nurl = \"https://a.example\"\nlabel = \"h\"\n[[hosts]]\nurl = \"https://b.example\"\nlabel = \"h\"\n", goOnly: true},
		{name: "duplicate host urls", doc: id + "[[hosts]]\nurl = \"https://a.example\"\nlabel = \"a\"\n[[hosts]]\nurl = \"https://a.example\"\nlabel = \"b\"\n", goOnly: true},
		{name: "host urls equal after normalization", doc: id + "[[hosts]]\nurl = \"https://a.example\"\nlabel = \"a\"\n[[hosts]]\nurl = \"HTTPS://A.EXAMPLE/\"\nlabel = \"b\"\n", goOnly: true},
		{name: "profile services equal after normalization", doc: id + "profile_services = [\"https://p.example\", \"https://p.example:443\"]\n", goOnly: true},
		{name: "duplicate plugin names", doc: plugin("") + "[[plugins]]\nname = \"p\"\npath = \"q\"\nsha256 = \"" + sha + "\"\n", goOnly: true},
		{name: "bad ipv6 literal", doc: host("https://[:::]"), goOnly: true},
		{name: "sync_interval below 5s", doc: id + "[mail]\nsync_interval = \"4999ms\"\n", goOnly: true},
		{name: "sync_interval above 24h", doc: id + "[mail]\nsync_interval = \"24h0m1s\"\n", goOnly: true},
		{name: "sync_interval zero", doc: id + "[mail]\nsync_interval = \"0\"\n", goOnly: true},
		{name: "sync_interval overflows", doc: id + "[mail]\nsync_interval = \"9999999999h\"\n", goOnly: true},
		{name: "timeout below 1s", doc: id + "[[wake.command]]\nargv = [\"x\"]\ntimeout = \"999ms\"\n", goOnly: true},
		{name: "timeout above 24h", doc: id + "[[wake.command]]\nargv = [\"x\"]\ntimeout = \"25h\"\n", goOnly: true},
	}
	for _, s := range samples {
		t.Run(s.name, func(t *testing.T) {
			_, goErr := Parse([]byte(s.doc))
			schemaErr := sch.Validate(tomlToJSONValue(t, s.doc))
			goValid, schemaValid := goErr == nil, schemaErr == nil
			switch {
			case s.goOnly:
				if goValid || !schemaValid {
					t.Fatalf("goOnly sample: Go valid=%v (%v), schema valid=%v (%v); want Go to refuse and the schema to accept", goValid, goErr, schemaValid, schemaErr)
				}
			case goValid != s.valid:
				t.Fatalf("Go validator: valid=%v, want %v: %v", goValid, s.valid, goErr)
			case schemaValid != s.valid:
				t.Fatalf("schema: valid=%v, want %v: %v", schemaValid, s.valid, schemaErr)
			}
		})
	}
}

// TestSchemaConstantsMatchGo pins every pattern, bound and default of the
// schema to the Go constant it mirrors.
func TestSchemaConstantsMatchGo(t *testing.T) {
	_, raw := loadSchema(t)
	get := func(path ...string) any {
		var v any = raw
		for _, p := range path {
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("schema: no %s", strings.Join(path, "/"))
			}
			v = m[p]
		}
		if v == nil {
			t.Fatalf("schema: no %s", strings.Join(path, "/"))
		}
		return v
	}
	defs := func(path ...string) any { return get(append([]string{"$defs"}, path...)...) }
	type check struct {
		what      string
		got, want any
	}
	checks := []check{
		{"name pattern", defs("name", "pattern"), NamePattern},
		{"origin pattern", defs("httpsOrigin", "pattern"), OriginPattern},
		{"plugin name pattern", defs("plugin", "properties", "name", "pattern"), PluginNamePattern},
		{"plugin name reserved", defs("plugin", "properties", "name", "not", "pattern"), "^" + ReservedPluginPrefix},
		{"sha256 pattern", defs("plugin", "properties", "sha256", "pattern"), SHA256Pattern},
		{"grant pattern", defs("plugin", "properties", "grants", "items", "pattern"), GrantPattern},
		{"grant reserved", defs("plugin", "properties", "grants", "items", "not", "pattern"), ReservedProposePattern},
		{"grant max length", defs("plugin", "properties", "grants", "items", "maxLength"), float64(MaxGrantLen)},
		{"listen pattern", defs("http", "properties", "listen", "pattern"), ListenPattern},
		{"listen default", defs("http", "properties", "listen", "default"), DefaultListen},
		{"token_file default", defs("http", "properties", "token_file", "default"), DefaultTokenFile},
		{"state dir default", defs("state", "properties", "dir", "default"), DefaultStateDir},
		{"records min", defs("state", "properties", "records_per_room", "minimum"), float64(MinRecordsPerRoom)},
		{"records max", defs("state", "properties", "records_per_room", "maximum"), float64(MaxRecordsPerRoom)},
		{"records default", defs("state", "properties", "records_per_room", "default"), float64(DefaultRecordsPerRoom)},
		{"memory max", defs("plugin", "properties", "limits", "properties", "memory_mib", "maximum"), float64(MaxPluginMemoryMiB)},
		{"memory default", defs("plugin", "properties", "limits", "properties", "memory_mib", "default"), float64(DefaultPluginMemoryMiB)},
		{"validate_ms max", defs("plugin", "properties", "limits", "properties", "validate_ms", "maximum"), float64(MaxPluginCallMS)},
		{"validate_ms default", defs("plugin", "properties", "limits", "properties", "validate_ms", "default"), float64(DefaultPluginValidateMS)},
		{"watch_ms max", defs("plugin", "properties", "limits", "properties", "watch_ms", "maximum"), float64(MaxPluginCallMS)},
		{"watch_ms default", defs("plugin", "properties", "limits", "properties", "watch_ms", "default"), float64(DefaultPluginWatchMS)},
		{"tool_ms max", defs("plugin", "properties", "limits", "properties", "tool_ms", "maximum"), float64(MaxPluginCallMS)},
		{"tool_ms default", defs("plugin", "properties", "limits", "properties", "tool_ms", "default"), float64(DefaultPluginToolMS)},
		{"path max length", defs("path", "maxLength"), float64(maxPathLen)},
		{"capability enum", defs("capability", "enum"), anySlice(capability.All().Names())},
		{"host grants items", defs("host", "properties", "grants", "items", "$ref"), "#/$defs/capability"},
		{"host grants unique", defs("host", "properties", "grants", "uniqueItems"), true},
		{"host grants default", defs("host", "properties", "grants", "default"), anySlice(capability.All().Names())},
		{"duration pattern", defs("duration", "pattern"), DurationPattern},
		{"agent id pattern", defs("agentId", "pattern"), AgentIDPattern},
		{"blocked senders items", defs("mail", "properties", "blocked_senders", "items", "$ref"), "#/$defs/agentId"},
		{"sync_interval default", defs("mail", "properties", "sync_interval", "default"), formatDuration(DefaultMailSyncInterval)},
		{"wake kind enum", defs("wakeKind", "enum"), anySlice(WakeKinds())},
		{"wake kinds default", defs("wake", "properties", "kinds", "default"), anySlice(DefaultWakeKinds())},
		{"claude_channel default", defs("wake", "properties", "claude_channel", "default"), false},
		{"program pattern", defs("wakeCommand", "properties", "argv", "prefixItems").([]any)[0].(map[string]any)["pattern"], ProgramPattern},
		{"program max length", defs("wakeCommand", "properties", "argv", "prefixItems").([]any)[0].(map[string]any)["maxLength"], float64(maxPathLen)},
		{"arg pattern", defs("wakeCommand", "properties", "argv", "items", "pattern"), ArgPattern},
		{"timeout default", defs("wakeCommand", "properties", "timeout", "default"), formatDuration(DefaultWakeTimeout)},
	}
	for _, b := range limitBudgets {
		checks = append(checks,
			check{"limits." + b.key + " default", defs("limits", "properties", b.key, "default"), float64(b.def)},
			check{"limits." + b.key + " minimum", defs("limits", "properties", b.key, "minimum"), float64(0)})
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: schema has %v, Go has %v", c.what, c.got, c.want)
		}
	}
}

// TestSchemaKeysMatchGoStructs checks that each table of the schema has
// exactly the keys of the Go struct it decodes into, that knownKeys (used in
// error messages) agrees, and that every property has a description.
func TestSchemaKeysMatchGoStructs(t *testing.T) {
	_, raw := loadSchema(t)
	defs := raw["$defs"].(map[string]any)
	props := func(obj map[string]any) []string {
		if ref, ok := obj["$ref"].(string); ok {
			obj = defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
		}
		if obj["additionalProperties"] != false {
			t.Errorf("schema object %v allows additional properties", obj["description"])
		}
		var keys []string
		for k, v := range obj["properties"].(map[string]any) {
			keys = append(keys, k)
			if d, _ := v.(map[string]any)["description"].(string); d == "" {
				t.Errorf("schema property %s has no description", k)
			}
		}
		slices.Sort(keys)
		return keys
	}
	tags := func(v any) []string {
		var keys []string
		rt := reflect.TypeOf(v)
		for i := range rt.NumField() {
			f := rt.Field(i)
			if !f.IsExported() {
				continue
			}
			keys = append(keys, strings.Split(f.Tag.Get("toml"), ",")[0])
		}
		slices.Sort(keys)
		return keys
	}
	sorted := func(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }
	tables := []struct {
		table  string
		schema map[string]any
		goType any
	}{
		{"", raw, Config{}},
		{"identities", defs["identity"].(map[string]any), Identity{}},
		{"hosts", defs["host"].(map[string]any), Host{}},
		{"state", defs["state"].(map[string]any), State{}},
		{"http", defs["http"].(map[string]any), HTTP{}},
		{"plugins", defs["plugin"].(map[string]any), Plugin{}},
		{"plugins.limits", defs["plugin"].(map[string]any)["properties"].(map[string]any)["limits"].(map[string]any), PluginLimits{}},
		{"limits", defs["limits"].(map[string]any), Limits{}},
		{"mail", defs["mail"].(map[string]any), Mail{}},
		{"wake", defs["wake"].(map[string]any), Wake{}},
		{"wake.command", defs["wakeCommand"].(map[string]any), WakeCommand{}},
	}
	for _, tb := range tables {
		s, g, k := props(tb.schema), tags(tb.goType), sorted(knownKeys[tb.table])
		if !slices.Equal(s, g) || !slices.Equal(g, k) {
			t.Errorf("table %q: schema keys %v, Go struct keys %v, knownKeys %v", tb.table, s, g, k)
		}
	}
	// The file-shape structs decode the same keys as the public ones.
	for _, pair := range [][2]any{{fileState{}, State{}}, {fileHTTP{}, HTTP{}}, {filePlugin{}, Plugin{}}, {filePluginLimits{}, PluginLimits{}},
		{fileMail{}, Mail{}}, {encodedMail{}, Mail{}}, {fileWake{}, Wake{}}, {encodedWake{}, Wake{}},
		{fileWakeCommand{}, WakeCommand{}}, {encodedWakeCommand{}, WakeCommand{}}, {encodedConfig{}, Config{}}} {
		if a, b := tags(pair[0]), tags(pair[1]); !slices.Equal(a, b) {
			t.Errorf("%T keys %v differ from %T keys %v", pair[0], a, pair[1], b)
		}
	}
	fc := tags(fileConfig{})
	if !slices.Equal(fc, tags(Config{})) {
		t.Errorf("fileConfig keys %v differ from Config keys", fc)
	}
}
