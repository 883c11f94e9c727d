package mcpserver

import (
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The Mail resources: Bob's mailboxes and his letters' metadata (never
// their text), updated when a sync brings a letter or a read changes its
// state, and refused without mail.read.
func TestMailResources(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	home := t.TempDir()
	u := &updates{seen: map[string]int{}}
	bob := newAgent(t, h, "bob", 0xB4, agentOptions{home: home, protocol: "2025-11-25", client: &mcp.ClientOptions{ResourceUpdatedHandler: u.on}})
	alice := newAgent(t, h, "alice", 0xA4, agentOptions{})
	if boxes := readJSON(t, bob, uriMailboxes); len(boxes["mailboxes"].([]any)) != 0 {
		t.Fatalf("mailboxes before any: %v", boxes)
	}
	for _, uri := range []string{uriMailboxes, uriLetters} {
		if err := bob.cs.Subscribe(bg, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
	}
	box := bob.call("mail_mailbox_publish", obj{"routes": []any{h.Origin()}})
	addr := get(box, "mailbox", "address").(string)
	eventually(t, 5*time.Second, "a mailboxes update", func() bool { return u.count(uriMailboxes) > 0 })
	alice.call("mail_send", obj{"to": addr, "subject": "Secret plans", "text": "the text nobody else reads"})
	bob.call("mail_sync", obj{})
	eventually(t, 5*time.Second, "a letters update", func() bool { return u.count(uriLetters) > 0 })
	boxes := readJSON(t, bob, uriMailboxes)
	if list := boxes["mailboxes"].([]any); len(list) != 1 || get(list[0], "unread_count") != float64(1) {
		t.Fatalf("mailboxes: %v", boxes)
	}
	res, err := bob.cs.ReadResource(bg, &mcp.ReadResourceParams{URI: uriLetters})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Contents[0].Text
	if strings.Contains(text, "Secret plans") || strings.Contains(text, "the text nobody else reads") {
		t.Fatalf("the letters resource shows content: %s", text)
	}
	letters := readJSON(t, bob, uriLetters)["letters"].([]any)
	if len(letters) != 1 || get(letters[0], "from") != alice.id || get(letters[0], "read") != false || get(letters[0], "size").(float64) < 10 {
		t.Fatalf("letters: %v", letters)
	}
	before := u.count(uriLetters)
	bob.call("mail_list", obj{"unread_only": true, "mark_read": true})
	eventually(t, 5*time.Second, "an update after mark_read", func() bool { return u.count(uriLetters) > before })
	if l := readJSON(t, bob, uriLetters)["letters"].([]any); get(l[0], "read") != true {
		t.Fatalf("after mark_read: %v", l)
	}
	bob.conn.Close()

	none := []string{"discourse.read", "agent.profile.read"}
	again := newAgent(t, h, "bob", 0xB4, agentOptions{home: home, grants: &none})
	for _, uri := range []string{uriMailboxes, uriLetters} {
		_, err := again.cs.ReadResource(bg, &mcp.ReadResourceParams{URI: uri})
		if err == nil || !strings.Contains(err.Error(), "permission_denied") {
			t.Errorf("%s without mail.read: %v", uri, err)
		}
	}
}
