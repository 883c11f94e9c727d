package config

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

const fullConfig = `# a complete configuration
[[identities]]
name = "alice"
key_file = "keys/alice.key"
profile_services = ["HTTPS://Profiles.Example.com:443/", "https://profiles2.example.com:8443"]
default = true
passphrase_file = "/run/secrets/alice"

[[identities]]
name = "bob-2"
key_file = "/abs/bob.key"

[[hosts]]
url = "https://adp.example.com/"
label = "main"

[[hosts]]
url = "https://[::1]:8443"
label = "local_hub"
ca_file = "hub/ca.pem"

[state]
dir = "/var/lib/apconnect"
records_per_room = 5000

[http]
listen = "[::1]:9000"
token_file = "tokens/http"

[limits]
room_messages = 0
mail_sends = 3
delegation_writes = 10

[mail]
blocked_senders = ["did:agent:6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0iw"]
sync_interval = "90s"

[wake]
claude_channel = true
kinds = ["room.mention", "mail.received"]

[[wake.command]]
argv = ["/usr/local/bin/my-agent", "--resume", "abc"]
kinds = ["room.turn.assigned"]
timeout = "1h30m"

[[wake.command]]
argv = ["notify-send", "apconnect"]

[[plugins]]
name = "polls"
path = "plugins/polls.wasm"
sha256 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
grants = ["validate", "watch", "tools", "packs", "propose:poll.create", "propose:poll.vote"]
enabled = false

[plugins.limits]
memory_mib = 32
tool_ms = 5000

[[plugins]]
name = "reactions"
path = "/opt/reactions.wasm"
sha256 = "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
`

// writeHome writes content as config.toml in a new home and returns it.
func writeHome(t *testing.T, content string) string {
	t.Helper()
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, FileName), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

func TestLoadFullConfig(t *testing.T) {
	home := writeHome(t, fullConfig)
	c, err := Load(home)
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		Identities: []Identity{
			{
				Name:            "alice",
				KeyFile:         "keys/alice.key",
				ProfileServices: []string{"https://profiles.example.com", "https://profiles2.example.com:8443"},
				Default:         true,
				PassphraseFile:  "/run/secrets/alice",
			},
			{Name: "bob-2", KeyFile: "/abs/bob.key", ProfileServices: []string{}},
		},
		Hosts: []Host{
			{URL: "https://adp.example.com", Label: "main"},
			{URL: "https://[::1]:8443", Label: "local_hub", CAFile: "hub/ca.pem"},
		},
		State:  State{Dir: "/var/lib/apconnect", RecordsPerRoom: 5000},
		HTTP:   HTTP{Listen: "[::1]:9000", TokenFile: "tokens/http"},
		Limits: Limits{RoomMessagesPerMinute: new(0), MailSendsPerMinute: new(3), DelegationWritesPerMinute: new(10)},
		Mail: Mail{
			BlockedSenders: []string{"did:agent:6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0iw"},
			SyncInterval:   90 * time.Second,
		},
		Wake: Wake{
			ClaudeChannel: true,
			Kinds:         []string{"room.mention", "mail.received"},
			Commands: []WakeCommand{
				{Argv: []string{"/usr/local/bin/my-agent", "--resume", "abc"}, Kinds: []string{"room.turn.assigned"}, Timeout: 90 * time.Minute},
				{Argv: []string{"notify-send", "apconnect"}, Kinds: []string{"room.mention", "mail.received"}, Timeout: DefaultWakeTimeout},
			},
		},
		Plugins: []Plugin{
			{
				Name:    "polls",
				Path:    "plugins/polls.wasm",
				SHA256:  "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
				Grants:  []string{"validate", "watch", "tools", "packs", "propose:poll.create", "propose:poll.vote"},
				Limits:  PluginLimits{MemoryMiB: 32, ValidateMS: DefaultPluginValidateMS, WatchMS: DefaultPluginWatchMS, ToolMS: 5000},
				Enabled: false,
			},
			{
				Name:    "reactions",
				Path:    "/opt/reactions.wasm",
				SHA256:  "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210",
				Grants:  []string{},
				Limits:  DefaultPluginLimits(),
				Enabled: true,
			},
		},
		home: home,
	}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("loaded\n%#v\nwant\n%#v", c, want)
	}

	// Path helpers.
	if got := c.Resolve(c.Identities[0].KeyFile); got != filepath.Join(home, "keys", "alice.key") {
		t.Fatalf("relative key file resolves to %s", got)
	}
	if got := c.Resolve(c.Identities[1].KeyFile); got != "/abs/bob.key" {
		t.Fatalf("absolute key file resolves to %s", got)
	}
	if c.StateDir() != "/var/lib/apconnect" || c.TokenFile() != filepath.Join(home, "tokens", "http") {
		t.Fatalf("state dir %s, token file %s", c.StateDir(), c.TokenFile())
	}
	if c.Home() != home || c.File() != filepath.Join(home, FileName) {
		t.Fatalf("home %s file %s", c.Home(), c.File())
	}
	if c.Resolve("") != "" {
		t.Fatal("empty path must resolve to empty")
	}
}

func TestLoadMinimalConfigGetsDefaults(t *testing.T) {
	c, err := Load(writeHome(t, "[[identities]]\nname = \"a\"\nkey_file = \"a.key\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.State != (State{Dir: DefaultStateDir, RecordsPerRoom: DefaultRecordsPerRoom}) {
		t.Fatalf("state %+v", c.State)
	}
	if c.HTTP != (HTTP{Listen: DefaultListen, TokenFile: DefaultTokenFile}) {
		t.Fatalf("http %+v", c.HTTP)
	}
	if !c.Limits.IsZero() || !reflect.DeepEqual(c.Mail, DefaultMail()) || !reflect.DeepEqual(c.Wake, DefaultWake()) {
		t.Fatalf("limits %+v, mail %+v, wake %+v", c.Limits, c.Mail, c.Wake)
	}
	if c.StateDir() != filepath.Join(c.Home(), "state") {
		t.Fatalf("state dir %s", c.StateDir())
	}
	id, err := c.Identity("")
	if err != nil || id.Name != "a" {
		t.Fatalf("single identity is not the default: %v %v", id, err)
	}

	// An empty file is a valid configuration with no identities.
	c, err = Load(writeHome(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Identity(""); err == nil || !strings.Contains(err.Error(), "apconnect init") {
		t.Fatalf("no identities: %v", err)
	}
}

func TestLoadMissingFile(t *testing.T) {
	home := t.TempDir()
	_, err := Load(home)
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("got %v, want ErrNotFound", err)
	}
	if !strings.Contains(err.Error(), filepath.Join(home, FileName)) || !strings.Contains(err.Error(), "apconnect init") {
		t.Fatalf("error %q should name the file and how to create it", err)
	}
}

// decodeProblem loads content and returns the single problem reported.
func loadProblems(t *testing.T, content string) (*Error, string) {
	t.Helper()
	home := writeHome(t, content)
	_, err := Load(home)
	if err == nil {
		t.Fatalf("config loaded, want an error:\n%s", content)
	}
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("error %T %v is not a *config.Error", err, err)
	}
	if ce.File != filepath.Join(home, FileName) {
		t.Fatalf("error file %q", ce.File)
	}
	if !strings.Contains(err.Error(), ce.File) {
		t.Fatalf("error text %q does not name the file", err)
	}
	return ce, err.Error()
}

const okIdentity = "[[identities]]\nname = \"a\"\nkey_file = \"a.key\"\n"

func TestUnknownKeysNamedWithLine(t *testing.T) {
	tests := []struct {
		name    string
		content string
		key     string
		line    int
	}{
		{"top level", "foo = 1\n" + okIdentity, "foo", 1},
		{"unknown table", okIdentity + "\n[server]\nport = 1\n", "server", 5},
		{"in identities", okIdentity + "nmae = \"x\"\n", "identities.nmae", 4},
		{"in second identity", okIdentity + "default = true\n[[identities]]\nname = \"b\"\nkey_file = \"b\"\npasphrase_file = \"p\"\n", "identities.pasphrase_file", 8},
		{"in hosts", okIdentity + "[[hosts]]\nurl = \"https://a.example\"\nlabel = \"a\"\ncafile = \"x\"\n", "hosts.cafile", 7},
		{"in state", okIdentity + "[state]\nrecords = 5\n", "state.records", 5},
		{"in http", okIdentity + "[http]\nport = 8080\n", "http.port", 5},
		{"in plugins", okIdentity + "[[plugins]]\nname = \"p\"\npath = \"p.wasm\"\nsha = \"x\"\n", "plugins.sha", 7},
		{"in limits", okIdentity + "[limits]\nmail_sends = 1\nmail_send = 2\n", "limits.mail_send", 6},
		{"in limits, dotted at the top", "limits.rooms = 1\n" + okIdentity, "limits.rooms", 1},
		{"in mail", okIdentity + "\n[mail]\nblocked = []\n", "mail.blocked", 6},
		{"in wake", okIdentity + "[wake]\nclaude = true\n", "wake.claude", 5},
		{"in wake command", okIdentity + "[wake]\n[[wake.command]]\nargv = [\"x\"]\nshell = \"x\"\n", "wake.command.shell", 7},
		{"in plugin limits", okIdentity + "[[plugins]]\nname = \"p\"\npath = \"p\"\nsha256 = \"" + strings.Repeat("a", 64) + "\"\n[plugins.limits]\ncpu_ms = 5\n", "plugins.limits.cpu_ms", 9},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ce, msg := loadProblems(t, tc.content)
			p, ok := ce.Field(tc.key)
			if !ok {
				t.Fatalf("no problem for %s in %+v", tc.key, ce.Problems)
			}
			if p.Line != tc.line {
				t.Fatalf("%s reported on line %d, want %d", tc.key, p.Line, tc.line)
			}
			if !strings.Contains(msg, "unknown key") || !strings.Contains(msg, `"`+tc.key+`"`) || !strings.Contains(msg, "line ") {
				t.Fatalf("message %q does not say unknown key %q with its line", msg, tc.key)
			}
		})
	}

	// Several unknown keys: each one reported.
	ce, _ := loadProblems(t, "a = 1\nb = 2\n")
	if len(ce.Problems) != 2 || ce.Problems[0].Line != 1 || ce.Problems[1].Line != 2 {
		t.Fatalf("problems %+v", ce.Problems)
	}
	// The message lists the known keys of the table.
	_, msg := loadProblems(t, okIdentity+"nmae = 1\n")
	if !strings.Contains(msg, "known keys in [identities]: name, key_file") {
		t.Fatalf("message %q does not list the known keys", msg)
	}
}

func TestTypeAndSyntaxErrorsHaveLines(t *testing.T) {
	tests := []struct {
		name    string
		content string
		line    int
		inMsg   string
	}{
		{"string expected", "[[identities]]\nname = 5\n", 2, "expected a string, got a TOML integer"},
		{"boolean expected", okIdentity + "default = \"yes\"\n", 4, "expected a boolean"},
		{"integer expected", okIdentity + "[state]\nrecords_per_room = \"many\"\n", 5, "expected an integer"},
		{"float for integer", okIdentity + "[state]\nrecords_per_room = 1.5\n", 5, "expected an integer"},
		{"array of strings expected", okIdentity + "profile_services = \"https://a.example\"\n", 4, "expected an array of strings"},
		{"table array expected", "identities = 3\n", 1, "expected an array of tables"},
		{"table expected", "state = 3\n", 1, "expected a table"},
		{"unterminated string", "[[identities]]\nname = \"a\nkey_file = \"b\"\n", 2, ""},
		{"duplicate key", "[[identities]]\nname = \"a\"\nname = \"b\"\n", 3, "already defined"},
		{"budget not an integer", okIdentity + "[limits]\nmail_sends = \"30\"\n", 5, "expected an integer"},
		{"budget a float", okIdentity + "[limits]\nmail_sends = 1.5\n", 5, "expected an integer"},
		{"duration not a string", okIdentity + "[mail]\nsync_interval = 60\n", 5, "expected a string, got a TOML integer"},
		{"blocked senders not an array", okIdentity + "[mail]\nblocked_senders = \"did:agent:x\"\n", 5, "expected an array of strings"},
		{"claude_channel not a boolean", okIdentity + "[wake]\nclaude_channel = \"yes\"\n", 5, "expected a boolean"},
		{"argv a shell string", okIdentity + "[[wake.command]]\nargv = \"my-agent --resume\"\n", 5, "expected an array of strings"},
		{"wake command not a table", okIdentity + "[wake]\ncommand = [\"x\"]\n", 5, "expected"},
		{"integer overflow", okIdentity + "[state]\nrecords_per_room = 99999999999999999999\n", 5, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ce, msg := loadProblems(t, tc.content)
			if len(ce.Problems) != 1 {
				t.Fatalf("problems %+v", ce.Problems)
			}
			if ce.Problems[0].Line != tc.line {
				t.Fatalf("line %d, want %d (%s)", ce.Problems[0].Line, tc.line, msg)
			}
			if !strings.Contains(msg, tc.inMsg) {
				t.Fatalf("message %q does not contain %q", msg, tc.inMsg)
			}
			if strings.Contains(msg, "struct field") {
				t.Fatalf("message %q leaks Go type names", msg)
			}
		})
	}
}

func TestHostURLs(t *testing.T) {
	valid := map[string]string{
		"https://adp.example.com":       "https://adp.example.com",
		"https://adp.example.com/":      "https://adp.example.com",
		"HTTPS://ADP.Example.COM":       "https://adp.example.com",
		"https://adp.example.com:443":   "https://adp.example.com",
		"https://adp.example.com:8443":  "https://adp.example.com:8443",
		"https://127.0.0.1:9443/":       "https://127.0.0.1:9443",
		"https://[::1]:8443":            "https://[::1]:8443",
		"https://[2001:DB8::1]":         "https://[2001:db8::1]",
		"https://xn--bcher-kva.example": "https://xn--bcher-kva.example",
		"https://localhost:65535":       "https://localhost:65535",
	}
	for in, want := range valid {
		t.Run("valid "+in, func(t *testing.T) {
			c, err := Load(writeHome(t, okIdentity+"[[hosts]]\nurl = \""+in+"\"\nlabel = \"h\"\n"))
			if err != nil {
				t.Fatal(err)
			}
			if c.Hosts[0].URL != want {
				t.Fatalf("normalized to %s, want %s", c.Hosts[0].URL, want)
			}
		})
	}
	invalid := []struct{ url, inMsg string }{
		{"http://adp.example.com", "scheme \"http\" is not allowed"},
		{"ws://adp.example.com", "only https"},
		{"adp.example.com", "https origin"},
		{"", "empty"},
		{"https://", "with a host"},
		{"https:///path", "with a host"},
		{"https://:8443", "with a host"},
		{"https://adp.example.com/v1", "without a path"},
		{"https://adp.example.com//", "without a path"},
		{"https://adp.example.com?x=1", "without a query"},
		{"https://adp.example.com/?", "without a query"},
		{"https://adp.example.com#frag", "without a fragment"},
		{"https://user:pw@adp.example.com", "without user info"},
		{"https://@adp.example.com", "without user info"},
		{"https://adp.example.com:0", "port"},
		{"https://adp.example.com:65536", "port"},
		{"https://adp.example.com:08443", "port"},
		{"https://adp.example.com:", "port"},
		{"https://adp.example.com:https", "port"},
		{"https://bücher.example", "xn--"},
		{"https://adp example.com", "https origin"},
		{"https://adp_example.com", "https origin"},
		{"https://[zz::1]", "https origin"},
		{"https://[:::]", "IPv6"},
		{"https://adp.example.com.", "https origin"},
	}
	for _, tc := range invalid {
		t.Run("invalid "+tc.url, func(t *testing.T) {
			content := okIdentity + "[[hosts]]\nurl = \"https://ok.example\"\nlabel = \"ok\"\n[[hosts]]\nurl = \"" + tc.url + "\"\nlabel = \"h\"\n"
			ce, msg := loadProblems(t, content)
			p, ok := ce.Field("hosts[1].url")
			if !ok || len(ce.Problems) != 1 {
				t.Fatalf("problems %+v, want one for hosts[1].url", ce.Problems)
			}
			if !strings.Contains(p.Message, tc.inMsg) {
				t.Fatalf("message %q does not contain %q", p.Message, tc.inMsg)
			}
			if !strings.Contains(msg, "hosts[1].url: must be") {
				t.Fatalf("message %q does not start with the field path", msg)
			}
		})
	}
}

func TestProfileServicesValidated(t *testing.T) {
	ce, _ := loadProblems(t, okIdentity+"profile_services = [\"https://p.example\", \"http://p.example\", \"HTTPS://P.EXAMPLE/\"]\n")
	if p, ok := ce.Field("identities[0].profile_services[1]"); !ok || !strings.Contains(p.Message, "https") {
		t.Fatalf("problems %+v", ce.Problems)
	}
	if p, ok := ce.Field("identities[0].profile_services[2]"); !ok || !strings.Contains(p.Message, "twice") {
		t.Fatalf("duplicate after normalization not reported: %+v", ce.Problems)
	}
}

func TestSemanticProblems(t *testing.T) {
	sha := strings.Repeat("ab", 32)
	plugin := func(extra string) string {
		return okIdentity + "[[plugins]]\nname = \"p\"\npath = \"p.wasm\"\nsha256 = \"" + sha + "\"\n" + extra
	}
	tests := []struct {
		name    string
		content string
		field   string
		inMsg   string
	}{
		{"missing key_file", "[[identities]]\nname = \"a\"\n", "identities[0].key_file", "required"},
		{"empty key_file", "[[identities]]\nname = \"a\"\nkey_file = \"\"\n", "identities[0].key_file", "required"},
		{"tilde key_file", "[[identities]]\nname = \"a\"\nkey_file = \"~/k\"\n", "identities[0].key_file", "'~' is not expanded"},
		{"missing name", "[[identities]]\nkey_file = \"k\"\n", "identities[0].name", "must be 1 to 32"},
		{"uppercase name", "[[identities]]\nname = \"Alice\"\nkey_file = \"k\"\n", "identities[0].name", "lowercase"},
		{"long name", "[[identities]]\nname = \"" + strings.Repeat("a", 33) + "\"\nkey_file = \"k\"\n", "identities[0].name", "1 to 32"},
		{"duplicate identity name", okIdentity + "default = true\n" + okIdentity, "identities[1].name", "already used by identities[0]"},
		{"two identities, no default", okIdentity + "[[identities]]\nname = \"b\"\nkey_file = \"b\"\n", "identities", "none has"},
		{"two defaults", okIdentity + "default = true\n[[identities]]\nname = \"b\"\nkey_file = \"b\"\ndefault = true\n", "identities", "identities[0], identities[1] all have"},
		{"missing host url", okIdentity + "[[hosts]]\nlabel = \"h\"\n", "hosts[0].url", "empty"},
		{"missing host label", okIdentity + "[[hosts]]\nurl = \"https://a.example\"\n", "hosts[0].label", "1 to 32"},
		{"bad host label", okIdentity + "[[hosts]]\nurl = \"https://a.example\"\nlabel = \"a.b\"\n", "hosts[0].label", "lowercase"},
		{"duplicate label", okIdentity + "[[hosts]]\nurl = \"https://a.example\"\nlabel = \"h\"\n[[hosts]]\nurl = \"https://b.example\"\nlabel = \"h\"\n", "hosts[1].label", "already used by hosts[0]"},
		{"duplicate url after normalization", okIdentity + "[[hosts]]\nurl = \"https://a.example\"\nlabel = \"a\"\n[[hosts]]\nurl = \"HTTPS://A.example:443/\"\nlabel = \"b\"\n", "hosts[1].url", "already listed as hosts[0]"},
		{"tilde ca_file", okIdentity + "[[hosts]]\nurl = \"https://a.example\"\nlabel = \"a\"\nca_file = \"~/ca.pem\"\n", "hosts[0].ca_file", "'~'"},
		{"records too small", okIdentity + "[state]\nrecords_per_room = 0\n", "state.records_per_room", "outside 10..100000"},
		{"records too large", okIdentity + "[state]\nrecords_per_room = 100001\n", "state.records_per_room", "outside"},
		{"empty state dir", okIdentity + "[state]\ndir = \"\"\n", "state.dir", "required"},
		{"listen on all interfaces", okIdentity + "[http]\nlisten = \"0.0.0.0:8765\"\n", "http.listen", "loopback only"},
		{"listen on localhost name", okIdentity + "[http]\nlisten = \"localhost:8765\"\n", "http.listen", "loopback"},
		{"listen without port", okIdentity + "[http]\nlisten = \"127.0.0.1\"\n", "http.listen", "port"},
		{"listen port 0", okIdentity + "[http]\nlisten = \"127.0.0.1:0\"\n", "http.listen", "port"},
		{"empty token_file", okIdentity + "[http]\ntoken_file = \"\"\n", "http.token_file", "required"},
		{"plugin sha256 uppercase", okIdentity + "[[plugins]]\nname = \"p\"\npath = \"p\"\nsha256 = \"" + strings.ToUpper(sha) + "\"\n", "plugins[0].sha256", "64 lowercase hexadecimal"},
		{"plugin sha256 short", okIdentity + "[[plugins]]\nname = \"p\"\npath = \"p\"\nsha256 = \"abc\"\n", "plugins[0].sha256", "64"},
		{"plugin sha256 missing", okIdentity + "[[plugins]]\nname = \"p\"\npath = \"p\"\n", "plugins[0].sha256", "64"},
		{"plugin path missing", okIdentity + "[[plugins]]\nname = \"p\"\nsha256 = \"" + sha + "\"\n", "plugins[0].path", "required"},
		{"plugin name with hyphen", okIdentity + "[[plugins]]\nname = \"my-plugin\"\npath = \"p\"\nsha256 = \"" + sha + "\"\n", "plugins[0].name", "a-z"},
		{"plugin name reserved", okIdentity + "[[plugins]]\nname = \"agent_protocols_x\"\npath = \"p\"\nsha256 = \"" + sha + "\"\n", "plugins[0].name", "agent_protocols"},
		{"duplicate plugin name", plugin("") + "[[plugins]]\nname = \"p\"\npath = \"q\"\nsha256 = \"" + sha + "\"\n", "plugins[1].name", "already used"},
		{"unknown grant", plugin("grants = [\"network\"]\n"), "plugins[0].grants[0]", "not a grant"},
		{"grant case", plugin("grants = [\"Validate\"]\n"), "plugins[0].grants[0]", "not a grant"},
		{"propose without type", plugin("grants = [\"validate\", \"propose:\"]\n"), "plugins[0].grants[1]", "not a grant"},
		{"propose undotted type", plugin("grants = [\"propose:poll\"]\n"), "plugins[0].grants[0]", "not a grant"},
		{"propose uppercase type", plugin("grants = [\"propose:Poll.create\"]\n"), "plugins[0].grants[0]", "not a grant"},
		{"propose with space", plugin("grants = [\"propose: poll.create\"]\n"), "plugins[0].grants[0]", "not a grant"},
		{"propose reserved room", plugin("grants = [\"propose:room.ban\"]\n"), "plugins[0].grants[0]", "reserved"},
		{"propose reserved type", plugin("grants = [\"propose:type.register\"]\n"), "plugins[0].grants[0]", "reserved"},
		{"duplicate grant", plugin("grants = [\"watch\", \"watch\"]\n"), "plugins[0].grants[1]", "already granted"},
		{"overlong grant", plugin("grants = [\"propose:a." + strings.Repeat("b", 130) + "\"]\n"), "plugins[0].grants[0]", "longer than"},
		{"memory limit zero", plugin("[plugins.limits]\nmemory_mib = 0\n"), "plugins[0].limits.memory_mib", "outside 1..1024"},
		{"memory limit huge", plugin("[plugins.limits]\nmemory_mib = 4096\n"), "plugins[0].limits.memory_mib", "outside"},
		{"tool_ms negative", plugin("[plugins.limits]\ntool_ms = -1\n"), "plugins[0].limits.tool_ms", "outside 1..60000"},
		{"validate_ms huge", plugin("[plugins.limits]\nvalidate_ms = 600000\n"), "plugins[0].limits.validate_ms", "outside"},
		{"watch_ms zero", plugin("[plugins.limits]\nwatch_ms = 0\n"), "plugins[0].limits.watch_ms", "outside"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ce, msg := loadProblems(t, tc.content)
			p, ok := ce.Field(tc.field)
			if !ok {
				t.Fatalf("no problem for %s in %+v", tc.field, ce.Problems)
			}
			if !strings.Contains(p.Message, tc.inMsg) {
				t.Fatalf("%s: message %q does not contain %q", tc.field, p.Message, tc.inMsg)
			}
			if !strings.Contains(msg, tc.field+": ") {
				t.Fatalf("error text %q does not name %s", msg, tc.field)
			}
			if p.Line != 0 {
				t.Fatalf("validation problem has a line number: %+v", p)
			}
		})
	}
}

func TestAllProblemsReportedAtOnce(t *testing.T) {
	ce, msg := loadProblems(t, "[[identities]]\nname = \"A\"\n[[hosts]]\nurl = \"http://x\"\nlabel = \"\"\n[http]\nlisten = \"0.0.0.0:1\"\n")
	for _, f := range []string{"identities[0].name", "identities[0].key_file", "hosts[0].url", "hosts[0].label", "http.listen"} {
		if _, ok := ce.Field(f); !ok {
			t.Fatalf("no problem for %s in %s", f, msg)
		}
	}
	if got := strings.Count(msg, "\n") + 1; got != len(ce.Problems) {
		t.Fatalf("%d lines for %d problems", got, len(ce.Problems))
	}
}

func TestGrantsAccepted(t *testing.T) {
	sha := strings.Repeat("0", 64)
	grants := `["validate", "watch", "tools", "packs", "propose:poll.create", "propose:x-1.y_2.z", "propose:0a.b"]`
	c, err := Load(writeHome(t, okIdentity+"[[plugins]]\nname = \"p0_x\"\npath = \"p\"\nsha256 = \""+sha+"\"\ngrants = "+grants+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Plugins[0].Grants) != 7 || !c.Plugins[0].Enabled || c.Plugins[0].Limits != DefaultPluginLimits() {
		t.Fatalf("plugin %+v", c.Plugins[0])
	}
}

func TestIdentityLookup(t *testing.T) {
	c, err := Load(writeHome(t, fullConfig))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"": "alice", "alice": "alice", "bob-2": "bob-2"} {
		id, err := c.Identity(name)
		if err != nil || id.Name != want {
			t.Fatalf("Identity(%q) = %v, %v; want %s", name, id, err, want)
		}
	}
	_, err = c.Identity("carol")
	if err == nil || !strings.Contains(err.Error(), `"carol" not found`) || !strings.Contains(err.Error(), "alice (default), bob-2") {
		t.Fatalf("error %v should list the configured identities", err)
	}
	// The returned pointer is the config's entry.
	id, _ := c.Identity("bob-2")
	if id != &c.Identities[1] {
		t.Fatal("Identity returned a copy")
	}

	// In-memory configurations without a valid default.
	c2 := &Config{Identities: []Identity{{Name: "x"}, {Name: "y"}}}
	if _, err := c2.Identity(""); err == nil || !strings.Contains(err.Error(), "x, y") {
		t.Fatalf("no default: %v", err)
	}
}

func TestHostLookup(t *testing.T) {
	c, err := Load(writeHome(t, fullConfig))
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"main", "https://adp.example.com", "HTTPS://adp.example.com:443/"} {
		h, err := c.Host(ref)
		if err != nil || h.Label != "main" {
			t.Fatalf("Host(%q) = %v, %v", ref, h, err)
		}
	}
	_, err = c.Host("https://evil.example")
	if err == nil || !strings.Contains(err.Error(), "not allowed") || !strings.Contains(err.Error(), "main (https://adp.example.com)") {
		t.Fatalf("error %v should list the allowed hosts", err)
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	c, err := Load(writeHome(t, fullConfig))
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(t.TempDir(), "new-home")
	c.home = home
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(c.File())
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("config mode %04o, want 0600", st.Mode().Perm())
	}
	if dst, _ := os.Stat(home); dst.Mode().Perm() != 0o700 {
		t.Fatalf("created home mode %04o, want 0700", dst.Mode().Perm())
	}
	back, err := Load(home)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c, back) {
		t.Fatalf("round trip changed the config:\n%#v\n%#v", c, back)
	}
	entries, _ := os.ReadDir(home)
	if len(entries) != 1 {
		t.Fatalf("home holds %d entries, want only config.toml", len(entries))
	}

	// Save replaces; SaveNew refuses and leaves the file alone.
	back.State.RecordsPerRoom = 42
	if err := back.Save(); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(c.File())
	err = c.SaveNew()
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("SaveNew over an existing file: %v", err)
	}
	after, _ := os.ReadFile(c.File())
	if string(before) != string(after) {
		t.Fatal("SaveNew changed the existing file")
	}
	again, _ := Load(home)
	if again.State.RecordsPerRoom != 42 {
		t.Fatal("Save did not replace the file")
	}

	// An invalid config is never written.
	back.Hosts[0].URL = "http://insecure.example"
	if err := back.Save(); err == nil {
		t.Fatal("invalid config saved")
	}
	after2, _ := os.ReadFile(c.File())
	if string(after2) != string(after) {
		t.Fatal("failed save changed the file")
	}

	// A Config without a home cannot be saved.
	if err := (&Config{}).Save(); err == nil {
		t.Fatal("saved a Config without a home")
	}
}

func TestMarshalDoesNotModifyConfig(t *testing.T) {
	c, err := Default(t.TempDir(), DefaultOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.Hosts = append(c.Hosts, Host{URL: "HTTPS://A.example/", Label: "a"})
	if _, err := c.Marshal(); err != nil {
		t.Fatal(err)
	}
	if c.Hosts[0].URL != "HTTPS://A.example/" {
		t.Fatal("Marshal modified the Config")
	}
}

func TestDefault(t *testing.T) {
	home := t.TempDir()
	c, err := Default(home, DefaultOptions{HostURL: "HTTPS://Api.Example.com:443/", HostCAFile: "ca.pem"})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Identities) != 1 || c.Identities[0].Name != "default" || c.Identities[0].KeyFile != "keys/default.key" || !c.Identities[0].Default || c.Identities[0].PassphraseFile != "" {
		t.Fatalf("identities %+v", c.Identities)
	}
	if len(c.Hosts) != 1 || !reflect.DeepEqual(c.Hosts[0], Host{URL: "https://api.example.com", Label: "api-example-com", CAFile: "ca.pem"}) {
		t.Fatalf("hosts %+v", c.Hosts)
	}
	if err := c.SaveNew(); err != nil {
		t.Fatal(err)
	}
	back, err := Load(home)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Identities, c.Identities) || !reflect.DeepEqual(back.Hosts, c.Hosts) || back.State != c.State || back.HTTP != c.HTTP || len(back.Plugins) != 0 {
		t.Fatalf("reloaded %#v, saved %#v", back, c)
	}
	data, _ := os.ReadFile(c.File())
	if !strings.Contains(string(data), "schemas/config.schema.json") {
		t.Fatalf("saved file lacks the header comment:\n%s", data)
	}

	c, err = Default(home, DefaultOptions{IdentityName: "work", PassphraseFile: "pass"})
	if err != nil || c.Identities[0].KeyFile != "keys/work.key" || c.Identities[0].PassphraseFile != "pass" || len(c.Hosts) != 0 {
		t.Fatalf("%+v %v", c, err)
	}

	// Bad options are reported like bad entries.
	_, err = Default(home, DefaultOptions{IdentityName: "Bad Name", HostURL: "http://x.example"})
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("got %v", err)
	}
	if _, ok := ce.Field("identities[0].name"); !ok {
		t.Fatalf("problems %+v", ce.Problems)
	}
	if _, ok := ce.Field("hosts[0].url"); !ok {
		t.Fatalf("problems %+v", ce.Problems)
	}
	if _, err := Default("", DefaultOptions{}); err == nil {
		t.Fatal("empty home accepted")
	}
}

func TestLabelFor(t *testing.T) {
	for in, want := range map[string]string{
		"https://api.example.com":                             "api-example-com",
		"https://127.0.0.1:8443":                              "127-0-0-1-8443",
		"https://[::1]:8443":                                  "1-8443",
		"https://a-very-long-host-name.subdomain.example.com": "a-very-long-host-name-subdomain",
		"not a url": "host",
	} {
		got := labelFor(in)
		if got != want {
			t.Fatalf("labelFor(%q) = %q, want %q", in, got, want)
		}
		if !nameRE.MatchString(got) {
			t.Fatalf("labelFor(%q) = %q is not a valid label", in, got)
		}
	}
}

func TestResolveHome(t *testing.T) {
	userHome := t.TempDir()
	t.Setenv("HOME", userHome)
	cwd, _ := os.Getwd()
	tests := []struct {
		name, flag, env, xdg, want string
	}{
		{name: "flag wins", flag: "/opt/ap", env: "/env/ap", xdg: "/xdg", want: "/opt/ap"},
		{name: "relative flag made absolute", flag: "rel/home", env: "/env/ap", want: filepath.Join(cwd, "rel/home")},
		{name: "flag with tilde", flag: "~/ap", want: filepath.Join(userHome, "ap")},
		{name: "env second", env: "/env/ap", xdg: "/xdg", want: "/env/ap"},
		{name: "env with tilde", env: "~/ap2", want: filepath.Join(userHome, "ap2")},
		{name: "xdg third", xdg: "/xdg", want: "/xdg/apconnect"},
		{name: "relative xdg ignored", xdg: "relative/xdg", want: filepath.Join(userHome, ".config", "apconnect")},
		{name: "fallback", want: filepath.Join(userHome, ".config", "apconnect")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EnvHome, tc.env)
			t.Setenv("XDG_CONFIG_HOME", tc.xdg)
			got, err := ResolveHome(tc.flag)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
	t.Run("no home at all", func(t *testing.T) {
		t.Setenv(EnvHome, "")
		t.Setenv("XDG_CONFIG_HOME", "")
		t.Setenv("HOME", "")
		_, err := ResolveHome("")
		if err == nil || !strings.Contains(err.Error(), "--home") || !strings.Contains(err.Error(), EnvHome) {
			t.Fatalf("got %v", err)
		}
	})
}

func TestCAPool(t *testing.T) {
	home := t.TempDir()
	c, err := Default(home, DefaultOptions{HostURL: "https://a.example", HostCAFile: "ca.pem"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CAPool(&c.Hosts[0]); err == nil || !strings.Contains(err.Error(), "ca_file") {
		t.Fatalf("missing CA file: %v", err)
	}
	os.WriteFile(filepath.Join(home, "ca.pem"), []byte("not pem"), 0o600)
	if _, err := c.CAPool(&c.Hosts[0]); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Fatalf("garbage CA file: %v", err)
	}
	os.WriteFile(filepath.Join(home, "ca.pem"), testCAPEM(t), 0o600)
	pool, err := c.CAPool(&c.Hosts[0])
	if err != nil || pool == nil {
		t.Fatalf("valid CA file: %v", err)
	}
	if pool, err := c.CAPool(&Host{URL: "https://b.example", Label: "b"}); pool != nil || err != nil {
		t.Fatal("a host without ca_file must use the system roots (nil pool)")
	}
}

// testCAPEM returns a freshly generated self-signed CA certificate.
func testCAPEM(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "apconnect test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// A file written by apconnect init must accept appended [[hosts]] and
// [[plugins]] tables, as README and `apconnect plugin inspect` tell
// operators to do: an empty "plugins = []" line would make that a TOML error.
func TestFreshFileAcceptsAppendedTables(t *testing.T) {
	home := t.TempDir()
	c, err := Default(home, DefaultOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SaveNew(); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(c.File())
	if err != nil {
		t.Fatal(err)
	}
	appended := string(text) + `
[[hosts]]
url = "https://adp.example.com"
label = "example"

[[plugins]]
name = "deliberation"
path = "plugins/deliberation.wasm"
sha256 = "` + strings.Repeat("ab", 32) + `"
grants = ["validate", "watch", "tools"]
`
	if err := os.WriteFile(c.File(), []byte(appended), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Load(home)
	if err != nil {
		t.Fatalf("appended tables rejected: %v", err)
	}
	if len(got.Hosts) != 1 || len(got.Plugins) != 1 || got.Plugins[0].Name != "deliberation" {
		t.Fatalf("loaded %+v / %+v", got.Hosts, got.Plugins)
	}
}
