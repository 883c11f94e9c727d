package config

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"apconnect/host/identity"
	"apconnect/host/proto/adp"
	"apconnect/host/room"
)

// agentID returns the Agent ID of the key whose seed is 32 times b.
func agentID(b byte) string {
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{b}, ed25519.SeedSize))
	return identity.AgentIDFromPublicKey(key.Public().(ed25519.PublicKey))
}

var (
	agentA = agentID(1)
	agentB = agentID(2)
)

// limitBudgets lists every [limits] key with its method and default, in
// file order.
var limitBudgets = []struct {
	key    string
	method func(Limits) int
	def    int
}{
	{"room_messages", Limits.RoomMessages, DefaultRoomMessages},
	{"room_signals", Limits.RoomSignals, DefaultRoomSignals},
	{"room_controls", Limits.RoomControls, DefaultRoomControls},
	{"rooms_created", Limits.RoomsCreated, DefaultRoomsCreated},
	{"profile_updates", Limits.ProfileUpdates, DefaultProfileUpdates},
	{"mail_sends", Limits.MailSends, DefaultMailSends},
	{"mail_sends_per_recipient", Limits.MailSendsPerRecipient, DefaultMailSendsPerRecipient},
	{"mailbox_publishes", Limits.MailboxPublishes, DefaultMailboxPublishes},
	{"knowledge_submits", Limits.KnowledgeSubmits, DefaultKnowledgeSubmits},
	{"delegation_writes", Limits.DelegationWrites, DefaultDelegationWrites},
}

// allBudgets sets every [limits] key to v.
func allBudgets(v string) string {
	var b strings.Builder
	for _, lb := range limitBudgets {
		fmt.Fprintf(&b, "%s = %s\n", lb.key, v)
	}
	return b.String()
}

const wakeDoc = `[wake]
claude_channel = true
kinds = ["room.mention", "mail.received"]

[[wake.command]]
argv = ["/usr/local/bin/my-agent", "--resume", "abc"]
kinds = ["room.turn.assigned", "room.steer"]
timeout = "30s"

[[wake.command]]
argv = ["my-agent"]
`

// The documented defaults are the brief's, and the room budgets are ADP's
// recommended quotas.
func TestLimitDefaults(t *testing.T) {
	want := map[string]int{
		"room_messages": 5, "room_signals": 60, "room_controls": 10, "rooms_created": 10,
		"profile_updates": 10, "mail_sends": 30, "mail_sends_per_recipient": 10,
		"mailbox_publishes": 10, "knowledge_submits": 30, "delegation_writes": 10,
	}
	var keys []string
	for _, lb := range limitBudgets {
		keys = append(keys, lb.key)
		if lb.def != want[lb.key] {
			t.Errorf("%s: default %d, want %d", lb.key, lb.def, want[lb.key])
		}
		if got := lb.method(Limits{}); got != lb.def {
			t.Errorf("%s: unset budget is %d, want the default %d", lb.key, got, lb.def)
		}
	}
	if !slices.Equal(keys, knownKeys["limits"]) {
		t.Errorf("budgets %v, knownKeys %v", keys, knownKeys["limits"])
	}
	var l Limits
	var fields []string
	for _, k := range l.limitKeys() {
		fields = append(fields, k.key)
	}
	if !slices.Equal(fields, keys) {
		t.Errorf("limitKeys %v, want %v", fields, keys)
	}

	d := adp.DefaultLimits()
	create, err := adp.RateLimit(d, adp.TypeRoomCreate, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what      string
		got, want int
	}{
		{"room_messages", DefaultRoomMessages, d.MessageRate},
		{"room_signals", DefaultRoomSignals, d.SignalRate},
		{"room_controls", DefaultRoomControls, d.ControlRate},
		{"rooms_created", DefaultRoomsCreated, create},
	} {
		if c.got != c.want || c.want == 0 {
			t.Errorf("%s: default %d, adp's quota %d", c.what, c.got, c.want)
		}
	}
}

// The kinds [wake] may name are host/room's inbox kinds and mail.received.
func TestWakeKindsMatchRoom(t *testing.T) {
	want := append(room.InboxKinds(), "mail.received")
	if got := WakeKinds(); !slices.Equal(got, want) {
		t.Fatalf("WakeKinds %v, want %v", got, want)
	}
	if MailReceivedKind != "mail.received" {
		t.Fatalf("MailReceivedKind %q", MailReceivedKind)
	}
	def := DefaultWakeKinds()
	if !slices.Equal(def, []string{"room.mention", "room.turn.assigned", "room.join.requested", "room.join.approved", "room.steer"}) {
		t.Fatalf("DefaultWakeKinds %v", def)
	}
	for _, k := range def {
		if !slices.Contains(want, k) {
			t.Errorf("default kind %q is not an inbox kind", k)
		}
	}
	// The lists are copies.
	WakeKinds()[0], DefaultWakeKinds()[0] = "x", "x"
	if WakeKinds()[0] == "x" || DefaultWakeKinds()[0] == "x" {
		t.Fatal("WakeKinds or DefaultWakeKinds returned the package's list")
	}
}

func TestLimitsValues(t *testing.T) {
	for _, lb := range limitBudgets {
		for _, tc := range []struct {
			line string
			want int
		}{
			{"", lb.def},
			{lb.key + " = 0\n", 0},
			{lb.key + " = 1\n", 1},
			{lb.key + " = 7\n", 7},
			{lb.key + " = 1_000_000\n", 1000000},
		} {
			c, err := Parse([]byte(okIdentity + "[limits]\n" + tc.line))
			if err != nil {
				t.Fatalf("%q: %v", tc.line, err)
			}
			if got := lb.method(c.Limits); got != tc.want {
				t.Errorf("%q: %s() = %d, want %d", tc.line, lb.key, got, tc.want)
			}
			// The others keep their defaults.
			for _, other := range limitBudgets {
				if other.key != lb.key && other.method(c.Limits) != other.def {
					t.Errorf("%q changed %s", tc.line, other.key)
				}
			}
			if c.Limits.IsZero() != (tc.line == "") {
				t.Errorf("%q: IsZero %v", tc.line, c.Limits.IsZero())
			}
		}
		ce, _ := loadProblems(t, okIdentity+"[limits]\n"+lb.key+" = -1\n")
		p, ok := ce.Field("limits." + lb.key)
		if !ok || len(ce.Problems) != 1 || p.Line != 5 || !strings.Contains(p.Message, "-1 is negative") {
			t.Errorf("%s = -1: %+v", lb.key, ce.Problems)
		}
	}
	// In memory.
	l := Limits{MailSendsPerMinute: new(0), RoomsCreatedPerMinute: new(2)}
	if l.MailSends() != 0 || l.RoomsCreated() != 2 || l.MailSendsPerRecipient() != DefaultMailSendsPerRecipient {
		t.Fatalf("%+v", l)
	}
	c := &Config{State: State{Dir: "s", RecordsPerRoom: 10}, HTTP: HTTP{Listen: DefaultListen, TokenFile: "t"},
		Mail: DefaultMail(), Wake: DefaultWake(), Limits: Limits{KnowledgeSubmitsPerMinute: new(-3)}}
	var ce *Error
	if err := c.Validate(); !errors.As(err, &ce) || len(ce.Problems) != 1 || ce.Problems[0].Field != "limits.knowledge_submits" || ce.Problems[0].Line != 0 {
		t.Fatalf("in-memory negative budget: %v", err)
	}
}

func TestMailSettings(t *testing.T) {
	cases := []struct {
		name     string
		doc      string
		blocked  []string
		interval time.Duration
	}{
		{"absent", "", []string{}, time.Minute},
		{"empty table", "[mail]\n", []string{}, time.Minute},
		{"empty list", "[mail]\nblocked_senders = []\n", []string{}, time.Minute},
		{"two senders", "[mail]\nblocked_senders = [\"" + agentA + "\", \"" + agentB + "\"]\n", []string{agentA, agentB}, time.Minute},
		{"lower bound", "[mail]\nsync_interval = \"5s\"\n", []string{}, 5 * time.Second},
		{"upper bound", "[mail]\nsync_interval = \"24h\"\n", []string{}, 24 * time.Hour},
		{"compound", "[mail]\nsync_interval = \"1m30s\"\n", []string{}, 90 * time.Second},
		{"fraction", "[mail]\nsync_interval = \"1.5h\"\n", []string{}, 90 * time.Minute},
		{"micro sign", "[mail]\nsync_interval = \"5000000000µs\"\n", []string{}, 5000 * time.Second},
		{"dotted keys", "mail.sync_interval = \"2m\"\n" + okIdentity, []string{}, 2 * time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(okIdentity + tc.doc))
			if tc.name == "dotted keys" {
				c, err = Parse([]byte(tc.doc))
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(c.Mail.BlockedSenders, tc.blocked) || c.Mail.BlockedSenders == nil || c.Mail.SyncInterval != tc.interval {
				t.Fatalf("mail %#v, want %v %v", c.Mail, tc.blocked, tc.interval)
			}
			for _, id := range []string{agentA, agentB} {
				if c.Mail.Blocked(id) != slices.Contains(tc.blocked, id) {
					t.Fatalf("Blocked(%s) = %v", id, c.Mail.Blocked(id))
				}
			}
		})
	}
	m := Mail{BlockedSenders: []string{agentA}}
	if !m.Blocked(agentA) || m.Blocked(agentB) || m.Blocked("") || m.Blocked(strings.ToUpper(agentA)) {
		t.Fatal("Blocked compares Agent IDs exactly")
	}
}

func TestWakeSettings(t *testing.T) {
	c, err := Parse([]byte(okIdentity + wakeDoc))
	if err != nil {
		t.Fatal(err)
	}
	want := Wake{
		ClaudeChannel: true,
		Kinds:         []string{"room.mention", "mail.received"},
		Commands: []WakeCommand{
			{Argv: []string{"/usr/local/bin/my-agent", "--resume", "abc"}, Kinds: []string{"room.turn.assigned", "room.steer"}, Timeout: 30 * time.Second},
			{Argv: []string{"my-agent"}, Kinds: []string{"room.mention", "mail.received"}, Timeout: DefaultWakeTimeout},
		},
	}
	if !reflect.DeepEqual(c.Wake, want) {
		t.Fatalf("wake %#v\nwant %#v", c.Wake, want)
	}
	if !c.Wake.Wakes("mail.received") || c.Wake.Wakes("room.steer") {
		t.Fatal("Wakes does not follow Kinds")
	}
	if !c.Wake.Commands[0].Runs("room.steer") || c.Wake.Commands[0].Runs("room.mention") || !c.Wake.Commands[1].Runs("room.mention") {
		t.Fatal("Runs does not follow the command's kinds")
	}
	// A command's kinds are its own, not shared with [wake].
	c.Wake.Commands[1].Kinds[0] = "room.steer"
	if c.Wake.Kinds[0] != "room.mention" {
		t.Fatal("a command's inherited kinds alias [wake] kinds")
	}

	cases := []struct {
		name string
		doc  string
		want Wake
	}{
		{"absent", "", DefaultWake()},
		{"empty table", "[wake]\n", DefaultWake()},
		{"channel off by default", "[wake]\nkinds = [\"room.steer\"]\n", Wake{Kinds: []string{"room.steer"}, Commands: []WakeCommand{}}},
		{"channel without kinds", "[wake]\nclaude_channel = true\n", Wake{ClaudeChannel: true, Kinds: DefaultWakeKinds(), Commands: []WakeCommand{}}},
		{"command defaults", "[[wake.command]]\nargv = [\"/bin/true\"]\n",
			Wake{Kinds: DefaultWakeKinds(), Commands: []WakeCommand{{Argv: []string{"/bin/true"}, Kinds: DefaultWakeKinds(), Timeout: 10 * time.Minute}}}},
		{"command bounds", "[[wake.command]]\nargv = [\"a\"]\ntimeout = \"1s\"\n[[wake.command]]\nargv = [\"b\"]\ntimeout = \"24h\"\n",
			Wake{Kinds: DefaultWakeKinds(), Commands: []WakeCommand{{Argv: []string{"a"}, Kinds: DefaultWakeKinds(), Timeout: time.Second}, {Argv: []string{"b"}, Kinds: DefaultWakeKinds(), Timeout: 24 * time.Hour}}}},
		{"inline commands", "[wake]\ncommand = [{ argv = [\"x\", \"-v\"], kinds = [\"mail.received\"] }]\n",
			Wake{Kinds: DefaultWakeKinds(), Commands: []WakeCommand{{Argv: []string{"x", "-v"}, Kinds: []string{"mail.received"}, Timeout: DefaultWakeTimeout}}}},
		{"every kind", "[wake]\nkinds = [\"" + strings.Join(WakeKinds(), "\", \"") + "\"]\n", Wake{Kinds: WakeKinds(), Commands: []WakeCommand{}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(okIdentity + tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c.Wake, tc.want) {
				t.Fatalf("wake %#v\nwant %#v", c.Wake, tc.want)
			}
		})
	}
}

// TestSectionProblems: every rule of [limits], [mail] and [wake], each
// problem with its field, its line (of the key, the array item, or the
// [[wake.command]] header for what the table lacks) and a message that
// says what is wrong.
func TestSectionProblems(t *testing.T) {
	cmd := func(body string) string { return "[[wake.command]]\n" + body }
	cases := []struct {
		name  string
		doc   string // before okIdentity
		field string
		at    string // the text whose first occurrence in doc is the line reported
		inMsg string
	}{
		{"negative budget", "[limits]\nroom_controls = 1\nrooms_created = -5\n", "limits.rooms_created", "rooms_created", "-5 is negative"},
		{"negative budget inline", "limits = { mail_sends = 1, mailbox_publishes = -1 }\n", "limits.mailbox_publishes", "mailbox_publishes", "negative"},
		{"negative budget dotted", "limits.delegation_writes = -2\n", "limits.delegation_writes", "limits.delegation_writes", "negative"},
		{"sender not an Agent ID", "[mail]\nblocked_senders = [\n  \"" + agentA + "\",\n  \"did:agent:nope\",\n]\n", "mail.blocked_senders[1]", `"did:agent:nope"`, "not a canonical Agent ID"},
		{"sender non-canonical", "[mail]\nblocked_senders = [\"" + agentA[:len(agentA)-1] + "x\"]\n", "mail.blocked_senders[0]", `"did:agent:`, "not a canonical Agent ID"},
		{"sender uppercase prefix", "[mail]\nblocked_senders = [\"DID:agent:" + agentA[10:] + "\"]\n", "mail.blocked_senders[0]", `"DID`, `must start with "did:agent:"`},
		{"sender twice", "[mail]\nblocked_senders = [\n\"" + agentA + "\",\n\"" + agentB + "\",\n\"" + agentA + "\",\n]\n", "mail.blocked_senders[2]", "\"" + agentA + "\",\n]", "already listed as blocked_senders[0]"},
		{"sync_interval not a duration", "[mail]\n\nsync_interval = \"every minute\"\n", "mail.sync_interval", "sync_interval", `"every minute" is not a duration`},
		{"sync_interval signed", "[mail]\nsync_interval = \"+1m\"\n", "mail.sync_interval", "sync_interval", "not a duration"},
		{"sync_interval too short", "[mail]\nsync_interval = \"4s\"\n", "mail.sync_interval", "sync_interval", "4s is outside 5s..24h"},
		{"sync_interval too long", "[mail]\nsync_interval = \"25h\"\n", "mail.sync_interval", "sync_interval", "25h is outside 5s..24h"},
		{"sync_interval zero", "[mail]\nsync_interval = \"0s\"\n", "mail.sync_interval", "sync_interval", "0s is outside"},
		{"sync_interval overflow", "[mail]\nsync_interval = \"99999999999h\"\n", "mail.sync_interval", "sync_interval", "not a duration"},
		{"wake kind unknown", "[wake]\nkinds = [\"room.mention\", \"room.message\"]\n", "wake.kinds[1]", `"room.message"`, `unknown inbox kind "room.message"`},
		{"wake kind twice", "[wake]\nkinds = [\n  \"room.steer\",\n  \"room.steer\",\n]\n", "wake.kinds[1]", "\"room.steer\",\n]", "already listed as kinds[0]"},
		{"wake kinds empty", "[wake]\nclaude_channel = true\nkinds = []\n", "wake.kinds", "kinds", "names no kind"},
		{"argv missing", "[wake]\n" + cmd("timeout = \"1m\"\n"), "wake.command[0].argv", "[[wake.command]]", "is required"},
		{"argv empty", cmd("argv = []\n"), "wake.command[0].argv", "argv", "is required"},
		{"argv relative", cmd("argv = [\"./agent\"]\n"), "wake.command[0].argv[0]", `"./agent"`, "relative path"},
		{"argv relative dir", cmd("argv = [\"bin/agent\", \"x\"]\n"), "wake.command[0].argv[0]", `"bin/agent"`, "bare program name"},
		{"argv tilde", cmd("argv = [\"~/agent\"]\n"), "wake.command[0].argv[0]", `"~/agent"`, "'~' is not expanded"},
		{"argv dot", cmd("argv = [\".\"]\n"), "wake.command[0].argv[0]", `"."`, "relative path"},
		{"argv program empty", cmd("argv = [\"\", \"x\"]\n"), "wake.command[0].argv[0]", `""`, "is empty"},
		{"argv program NUL", cmd("argv = [\"/bin/a\\u0000\"]\n"), "wake.command[0].argv[0]", `"/bin`, "NUL"},
		{"argv program too long", cmd("argv = [\"/" + strings.Repeat("a", maxPathLen) + "\"]\n"), "wake.command[0].argv[0]", `"/aaa`, "longer than 4096"},
		{"argv argument empty", cmd("argv = [\n  \"/bin/a\",\n  \"-v\",\n  \"\",\n]\n"), "wake.command[0].argv[2]", "\"\",", "is empty"},
		{"argv argument NUL", cmd("argv = [\"/bin/a\", \"x\\u0000\"]\n"), "wake.command[0].argv[1]", `"x\u0000"`, "NUL"},
		{"second command", cmd("argv = [\"a\"]\n") + "\n" + cmd("argv = [\"b\"]\nkinds = [\"mail.received\", \"room.*\"]\n"), "wake.command[1].kinds[1]", `"room.*"`, "unknown inbox kind"},
		{"command kinds empty", cmd("argv = [\"a\"]\nkinds = []\n"), "wake.command[0].kinds", "kinds", "names no kind"},
		{"command kind twice", cmd("argv = [\"a\"]\nkinds = [\"mail.received\", \"mail.received\"]\n"), "wake.command[0].kinds[1]", `"mail.received"]`, "already listed"},
		{"timeout not a duration", cmd("argv = [\"a\"]\ntimeout = \"10\"\n"), "wake.command[0].timeout", "timeout", `"10" is not a duration`},
		{"timeout too short", cmd("argv = [\"a\"]\ntimeout = \"500ms\"\n"), "wake.command[0].timeout", "timeout", "500ms is outside 1s..24h"},
		{"timeout too long", cmd("argv = [\"a\"]\ntimeout = \"24h0m1s\"\n"), "wake.command[0].timeout", "timeout", "24h0m1s is outside 1s..24h"},
		{"inline command", "[wake]\ncommand = [\n  { argv = [\"a\"] },\n  { argv = [\"b\"], timeout = \"0s\" },\n]\n", "wake.command[1].timeout", "timeout", "outside"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc := tc.doc + okIdentity
			ce, msg := loadProblems(t, doc)
			if len(ce.Problems) != 1 {
				t.Fatalf("problems %+v", ce.Problems)
			}
			p, ok := ce.Field(tc.field)
			if !ok {
				t.Fatalf("no problem for %s in %+v", tc.field, ce.Problems)
			}
			line, _ := lineCol(t, doc, tc.at, 0)
			if p.Line != line {
				t.Fatalf("%s on line %d, want %d\n%s", tc.field, p.Line, line, doc)
			}
			if !strings.Contains(p.Message, tc.inMsg) {
				t.Fatalf("message %q lacks %q", p.Message, tc.inMsg)
			}
			if !strings.Contains(msg, fmt.Sprintf("line %d, column %d: %s: ", p.Line, p.Column, tc.field)) {
				t.Fatalf("error text %q does not name the line and the key", msg)
			}
		})
	}
}

// Several problems at once, in the new sections and elsewhere: each with
// its own line, the others without.
func TestSectionProblemsTogether(t *testing.T) {
	doc := "[[identities]]\nname = \"A\"\nkey_file = \"k\"\n" +
		"[limits]\nmail_sends = -1\n" +
		"[mail]\nsync_interval = \"soon\"\nblocked_senders = [\"x\"]\n" +
		"[[wake.command]]\nargv = [\"rel/x\"]\ntimeout = \"1d\"\n"
	ce, _ := loadProblems(t, doc)
	want := []struct {
		field string
		line  int
	}{
		{"identities[0].name", 0},
		{"limits.mail_sends", 5},
		{"mail.sync_interval", 7},
		{"mail.blocked_senders[0]", 8},
		{"wake.command[0].argv[0]", 10},
		{"wake.command[0].timeout", 11},
	}
	if len(ce.Problems) != len(want) {
		t.Fatalf("problems %+v", ce.Problems)
	}
	for i, w := range want {
		if p := ce.Problems[i]; p.Field != w.field || p.Line != w.line {
			t.Errorf("problem %d: %+v, want %s on line %d", i, p, w.field, w.line)
		}
	}
}

func TestSectionsRoundTrip(t *testing.T) {
	cases := []struct {
		name    string
		doc     string
		inFile  []string // lines the saved file holds
		outFile []string // what it must not hold
	}{
		{"absent", "", nil, []string{"[limits]", "[mail]", "[wake]", "sync_interval", "timeout"}},
		{"empty tables", "[limits]\n[mail]\n[wake]\n", nil, []string{"[limits]", "[mail]", "[wake]"}},
		{"defaults only", "[mail]\nsync_interval = \"60s\"\nblocked_senders = []\n[wake]\nclaude_channel = false\nkinds = [\"room.mention\", \"room.turn.assigned\", \"room.join.requested\", \"room.join.approved\", \"room.steer\"]\n",
			nil, []string{"[mail]", "[wake]"}},
		{"explicit default budget", "[limits]\nmail_sends = 30\nroom_messages = 0\n", []string{"[limits]", "mail_sends = 30", "room_messages = 0"}, []string{"room_signals"}},
		{"mail", "[mail]\nblocked_senders = [\"" + agentB + "\", \"" + agentA + "\"]\nsync_interval = \"1h30m\"\n",
			[]string{"[mail]", "blocked_senders = ['" + agentB + "', '" + agentA + "']", "sync_interval = '1h30m'"}, []string{"[wake]"}},
		{"mail interval only", "[mail]\nsync_interval = \"7.5s\"\n", []string{"sync_interval = '7.5s'"}, []string{"blocked_senders"}},
		{"wake", wakeDoc, []string{"[wake]", "claude_channel = true", "kinds = ['room.mention', 'mail.received']",
			"[[wake.command]]", "argv = ['/usr/local/bin/my-agent', '--resume', 'abc']", "kinds = ['room.turn.assigned', 'room.steer']", "timeout = '30s'", "argv = ['my-agent']"},
			[]string{"timeout = '10m'"}},
		{"command with the default kinds written", "[[wake.command]]\nargv = [\"x\"]\nkinds = [\"room.mention\", \"room.turn.assigned\", \"room.join.requested\", \"room.join.approved\", \"room.steer\"]\ntimeout = \"1h\"\n",
			[]string{"[[wake.command]]", "argv = ['x']", "timeout = '1h'"}, []string{"kinds", "claude_channel"}},
		{"command kinds differ from [wake] kinds", "[wake]\nkinds = [\"room.steer\"]\n[[wake.command]]\nargv = [\"x\"]\nkinds = [\"room.mention\", \"room.turn.assigned\", \"room.join.requested\", \"room.join.approved\", \"room.steer\"]\n",
			[]string{"kinds = ['room.steer']", "kinds = ['room.mention', 'room.turn.assigned', 'room.join.requested', 'room.join.approved', 'room.steer']"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			home := writeHome(t, okIdentity+tc.doc)
			c, err := Load(home)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Save(); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(c.File())
			if err != nil {
				t.Fatal(err)
			}
			text := string(data)
			for _, s := range tc.inFile {
				if !strings.Contains(text, s) {
					t.Errorf("saved file lacks %q:\n%s", s, text)
				}
			}
			for _, s := range tc.outFile {
				if strings.Contains(text, s) {
					t.Errorf("saved file holds %q:\n%s", s, text)
				}
			}
			back, err := Load(home)
			if err != nil {
				t.Fatalf("%v\n%s", err, text)
			}
			if !reflect.DeepEqual(back, c) {
				t.Fatalf("round trip changed the config:\n%#v\n%#v", c, back)
			}
		})
	}
}

// Settings changed in memory are validated and saved; Marshal copies,
// never aliases, what it writes.
func TestSectionsSavedFromMemory(t *testing.T) {
	home := t.TempDir()
	c, err := Default(home, DefaultOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Limits.IsZero() || !reflect.DeepEqual(c.Mail, DefaultMail()) || !reflect.DeepEqual(c.Wake, DefaultWake()) {
		t.Fatalf("Default: %+v %+v %+v", c.Limits, c.Mail, c.Wake)
	}
	c.Limits.MailSendsPerMinute = new(2)
	c.Limits.RoomSignalsPerMinute = new(0)
	c.Mail.BlockedSenders = append(c.Mail.BlockedSenders, agentA)
	c.Mail.SyncInterval = 10 * time.Minute
	c.Wake.ClaudeChannel = true
	c.Wake.Commands = append(c.Wake.Commands, WakeCommand{Argv: []string{"/bin/echo", "woken"}, Kinds: []string{"mail.received"}, Timeout: 90 * time.Second})
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	back, err := Load(home)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, c) {
		t.Fatalf("reloaded\n%#v\nsaved\n%#v", back, c)
	}
	if back.Limits.MailSends() != 2 || back.Limits.RoomSignals() != 0 || !back.Mail.Blocked(agentA) || back.Wake.Commands[0].Timeout != 90*time.Second {
		t.Fatalf("reloaded %+v", back)
	}
	data, _ := os.ReadFile(c.File())
	if !strings.Contains(string(data), "timeout = '1m30s'") || !strings.Contains(string(data), "sync_interval = '10m'") {
		t.Fatalf("durations not written in their short form:\n%s", data)
	}

	cp := c.clone()
	*cp.Limits.MailSendsPerMinute = 99
	cp.Mail.BlockedSenders[0] = agentB
	cp.Wake.Commands[0].Argv[0] = "/bin/false"
	if c.Limits.MailSends() != 2 || c.Mail.BlockedSenders[0] != agentA || c.Wake.Commands[0].Argv[0] != "/bin/echo" {
		t.Fatal("clone aliases the original")
	}

	// Refused in memory as in a file, and never written.
	before, _ := os.ReadFile(c.File())
	bad := []struct {
		field string
		edit  func(*Config)
	}{
		{"limits.profile_updates", func(c *Config) { c.Limits.ProfileUpdatesPerMinute = new(-1) }},
		{"mail.blocked_senders[1]", func(c *Config) { c.Mail.BlockedSenders = append(c.Mail.BlockedSenders, agentA) }},
		{"mail.sync_interval", func(c *Config) { c.Mail.SyncInterval = 0 }},
		{"wake.kinds", func(c *Config) { c.Wake.Kinds = nil }},
		{"wake.command[0].timeout", func(c *Config) { c.Wake.Commands[0].Timeout = 0 }},
		{"wake.command[0].argv", func(c *Config) { c.Wake.Commands[0].Argv = nil }},
		{"wake.command[0].kinds[0]", func(c *Config) { c.Wake.Commands[0].Kinds = []string{"room.typing"} }},
	}
	for _, b := range bad {
		cc, err := Load(home)
		if err != nil {
			t.Fatal(err)
		}
		b.edit(cc)
		var ce *Error
		if err := cc.Save(); !errors.As(err, &ce) {
			t.Fatalf("%s: saved: %v", b.field, err)
		} else if p, ok := ce.Field(b.field); !ok || p.Line != 0 {
			t.Fatalf("%s: problems %+v", b.field, ce.Problems)
		}
	}
	after, _ := os.ReadFile(c.File())
	if !bytes.Equal(before, after) {
		t.Fatal("a refused configuration was written")
	}
}

func TestFormatDuration(t *testing.T) {
	for _, d := range []time.Duration{
		time.Nanosecond, 1500 * time.Microsecond, time.Second, 90 * time.Second, time.Minute, 10 * time.Minute,
		time.Hour, 90 * time.Minute, 24 * time.Hour, time.Hour + time.Second, 2*time.Hour + 30*time.Second + time.Millisecond,
	} {
		s := formatDuration(d)
		back, err := time.ParseDuration(s)
		if err != nil || back != d || !durationRE.MatchString(s) {
			t.Errorf("%v written as %q reads back as %v, %v", d, s, back, err)
		}
		if strings.HasSuffix(s, "m0s") || strings.HasSuffix(s, "h0m") {
			t.Errorf("%v written as %q, not in its short form", d, s)
		}
	}
	for d, want := range map[time.Duration]string{time.Minute: "1m", time.Hour: "1h", 90 * time.Minute: "1h30m", 24*time.Hour + time.Second: "24h0m1s", 30 * time.Second: "30s"} {
		if got := formatDuration(d); got != want {
			t.Errorf("formatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// The example of README.md's "Configure" section is a valid configuration
// that sets every new section.
func TestReadmeExample(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Configure\n")
	if !ok {
		t.Fatal("README.md has no Configure section")
	}
	_, block, ok := strings.Cut(section, "```toml\n")
	if !ok {
		t.Fatal("the Configure section has no TOML example")
	}
	block, _, _ = strings.Cut(block, "```")
	c, err := Parse([]byte(block))
	if err != nil {
		t.Fatalf("README example: %v\n%s", err, block)
	}
	if c.Limits.IsZero() || c.Limits.MailSends() != 10 || c.Limits.RoomMessages() != 0 || len(c.Mail.BlockedSenders) != 1 ||
		!c.Wake.ClaudeChannel || len(c.Wake.Commands) != 1 || c.Wake.Commands[0].Timeout != DefaultWakeTimeout {
		t.Fatalf("README example sets %+v %+v %+v", c.Limits, c.Mail, c.Wake)
	}
}
