package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"apconnect/host/toolcatalog"
)

func runGen(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestCheckAndWrite(t *testing.T) {
	dir := t.TempDir()
	readme := filepath.Join(dir, "README.md")
	before := "# apconnect\n\nIntro text.\n\n## Tools\n\n" + beginMarker + "\nstale table\n" + endMarker + "\n\n## After\n\nKept as is.\n"
	if err := os.WriteFile(readme, []byte(before), 0o640); err != nil {
		t.Fatal(err)
	}

	if code, _, stderr := runGen(t, "-check", readme); code != 1 || !strings.Contains(stderr, "out of date") || !strings.Contains(stderr, command) {
		t.Fatalf("check on stale file: code %d, stderr %q", code, stderr)
	}
	if code, stdout, stderr := runGen(t, "-write", readme); code != 0 || !strings.Contains(stdout, "updated") {
		t.Fatalf("write: code %d, stderr %q", code, stderr)
	}
	if code, _, stderr := runGen(t, "-check", readme); code != 0 {
		t.Fatalf("check after write: code %d, stderr %q", code, stderr)
	}
	data, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	got := string(data)
	if !strings.HasPrefix(got, "# apconnect\n\nIntro text.\n\n## Tools\n\n"+beginMarker+"\n") ||
		!strings.HasSuffix(got, endMarker+"\n\n## After\n\nKept as is.\n") {
		t.Errorf("text outside the markers changed:\n%s", got)
	}
	if strings.Contains(got, "stale table") {
		t.Error("old table kept")
	}
	if info, _ := os.Stat(readme); info.Mode().Perm() != 0o640 {
		t.Errorf("file mode changed to %v", info.Mode().Perm())
	}
	for _, name := range toolcatalog.Names() {
		if !strings.Contains(got, "| `"+name+"` |") {
			t.Errorf("table has no row for %s", name)
		}
	}
	// A second write changes nothing.
	if code, stdout, _ := runGen(t, "-write", readme); code != 0 || stdout != "" {
		t.Errorf("idempotent write: code %d, stdout %q", code, stdout)
	}
	// Editing a generated row is drift.
	edited := strings.Replace(got, "signed write", "harmless", 1)
	if err := os.WriteFile(readme, []byte(edited), 0o640); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := runGen(t, "-check", readme); code != 1 {
		t.Error("hand edit inside the markers not detected")
	}
}

func TestRows(t *testing.T) {
	tbl := table(toolcatalog.Infos())
	for _, want := range []string{
		"| Tool | What it does | Kind | Required inputs |",
		"| `agent_protocols_identity_current` | Show the Agent ID this connector signs as, its public key, the profile services configured for it, the operator-allowed hosts and the tools served. | local read | none |",
		"| `agent_protocols_schema_get` | Show the exact JSON Schemas of event payloads. | local read | `protocol` |",
		"| `agent_protocols_room_send_message` | Post a message to a room. | signed write | `room_id`, `content` |",
		"| `agent_protocols_agent_status_set` | ",
		" | host write, unsigned | `room_id`, `state` |",
		"| `agent_protocols_rooms_search` | Search a host's public room directory (public and restricted rooms; private rooms are never listed). | host read | `host` |",
		"| `agent_protocols_inbox_ack` | Acknowledge inbox items so they stop coming back. | local update | `ids`, `action` |",
	} {
		if !strings.Contains(tbl, want) {
			t.Errorf("table lacks %q", want)
		}
	}
	if n, want := strings.Count(tbl, "\n| `agent_protocols_"), len(toolcatalog.Names()); n != want {
		t.Errorf("%d tool rows, want %d", n, want)
	}
}

// The "what it does" column is the first sentence of each description, so
// that sentence must stand alone and stay short.
func TestFirstSentencesAreShort(t *testing.T) {
	for _, info := range toolcatalog.Infos() {
		first := firstSentence(info.Description)
		if len(first) > 240 || first == strings.TrimSpace(info.Description) {
			t.Errorf("%s: first sentence is %d bytes or the whole description: %q", info.Name, len(first), first)
		}
	}
}

func TestFirstSentenceAndCell(t *testing.T) {
	tests := map[string]string{
		"One. Two.":                      "One.",
		"Uses e.g. a thing. Then more.":  "Uses e.g. a thing.",
		"No period":                      "No period",
		"Ends here.":                     "Ends here.",
		"Keep did:agent:x. and go. Next": "Keep did:agent:x. and go.",
		"  Spaced.  Then.":               "Spaced.",
	}
	for in, want := range tests {
		if got := firstSentence(in); got != want {
			t.Errorf("firstSentence(%q) = %q, want %q", in, got, want)
		}
	}
	if got := cell("a | b\n c"); got != `a \| b c` {
		t.Errorf("cell = %q", got)
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "usage"},
		{[]string{"-check", "a", "-write", "b"}, 2, "usage"},
		{[]string{"-check", "a", "extra"}, 2, "usage"},
		{[]string{"-bogus"}, 2, "flag provided but not defined"},
		{[]string{"-check", filepath.Join(dir, "missing.md")}, 1, "no such file"},
		{[]string{"-check", write("none.md", "no markers")}, 1, "want exactly one"},
		{[]string{"-write", write("twice.md", beginMarker+endMarker+beginMarker+endMarker)}, 1, "want exactly one"},
		{[]string{"-write", write("reversed.md", endMarker+"\n"+beginMarker)}, 1, "comes before"},
	}
	for _, tc := range tests {
		code, _, stderr := runGen(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: code %d stderr %q, want %d and %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "reversed.md")); string(data) != endMarker+"\n"+beginMarker {
		t.Error("a failed write modified the file")
	}
}
