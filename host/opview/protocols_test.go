package opview_test

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"apconnect/host/config"
	"apconnect/host/connector"
	"apconnect/host/connector/delegation"
	"apconnect/host/connector/knowledge"
	"apconnect/host/connector/mail"
	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	"apconnect/host/opview"
	rules "apconnect/host/proto/knowledge"
	"apconnect/host/wake"
)

// protocolState has alice, whose view is served, and bob do one of each
// protocol's things through the real tools against the hub, with hostile
// text wherever a person writes text: a command woken for alice's
// pending mention (it prints markup and exits 3); mailboxes for both, a
// letter from bob (hostile subject, a text part longer than the page shows
// and an attachment), one from alice, alice's sync; a publication by
// alice; delegations of a principal both control, one granted by alice to
// bob and one by bob to alice, which alice checks.
type protocolState struct {
	letterText string
	submission string
	principal  string
}

func makeProtocolState(t *testing.T, f *fixture) *protocolState {
	t.Helper()
	st := &protocolState{}
	h := f.hub.Origin()
	script := filepath.Join(t.TempDir(), "wake.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nprintf 'woke for %s <b>now</b>\\n' \"$APCONNECT_INBOX_ID\"\nexit 3\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	f.alice.Engine().Config.Wake.Commands = []config.WakeCommand{{Argv: []string{"/bin/sh", script}, Kinds: []string{"room.mention"},
		Timeout: 10 * time.Second}}
	ws := wake.New(f.alice, wake.Options{Process: "serve", Environ: []string{"PATH=" + os.Getenv("PATH")}, MinGap: time.Millisecond,
		Poll: 50 * time.Millisecond, LeaseTTL: 3 * time.Second})
	ws.Start(bg)
	t.Cleanup(func() { ws.Close() })

	am, bm := f.alice.Mail(), f.bob.Mail()
	abox, err := am.MailboxPublish(bg, "s", mail.MailboxPublishInput{Routes: []string{h}})
	if err != nil {
		t.Fatal(err)
	}
	bbox, err := bm.MailboxPublish(bg, "s", mail.MailboxPublishInput{Routes: []string{h}})
	if err != nil {
		t.Fatal(err)
	}
	st.letterText = "Lunch on Friday? " + hostile + "\n" + strings.Repeat("long ", opview.MaxLetterRunes/5) + "TAIL-NOT-SHOWN"
	subject := "Plans " + hostile
	if _, err := bm.Send(bg, "s", mail.SendInput{To: abox.Mailbox.Address, Subject: &subject, Text: &st.letterText,
		Parts: []mail.PartInput{{MediaType: "application/octet-stream", Name: "notes " + hostile, Data: "AAEC"}}}); err != nil {
		t.Fatal(err)
	}
	reply := "Yes."
	if _, err := am.Send(bg, "s", mail.SendInput{To: bbox.Mailbox.Address, Text: &reply}); err != nil {
		t.Fatal(err)
	}
	if _, err := am.Sync(bg, "s", mail.SyncInput{}); err != nil {
		t.Fatal(err)
	}

	p, _ := json.Marshal(map[string]any{"license": "https://creativecommons.org/licenses/by/4.0/", "kind": "observation",
		"title": "Title " + hostile, "statement": "Statement " + hostile, "language": "en", "basis": "Measured.",
		"context": map[string]any{"scope": "tests", "conditions": []any{}, "limitations": []any{}}})
	sub, err := f.alice.Knowledge().Submit(bg, "s", knowledge.SubmitInput{Services: []string{h}, Type: rules.TypePublish, Payload: p})
	if err != nil {
		t.Fatal(err)
	}
	st.submission = sub.ID

	past := time.Now().UnixMilli() - 1000
	pr, err := hub.PutPrincipal(bg, f.hub.DataDir(), "acme", map[string]any{"type": "organization", "name": "Acme " + hostile,
		"controllers": []any{
			map[string]any{"id": f.alice.AgentID(), "source": "local", "valid_from": past, "delegation": "*"},
			map[string]any{"id": f.bob.AgentID(), "source": "local", "valid_from": past, "delegation": "*"},
		}})
	if err != nil {
		t.Fatal(err)
	}
	st.principal = pr.URL
	grant := func(d *delegation.Module, id, subject string) {
		t.Helper()
		if _, err := d.DelegationGrant(bg, delegation.DelegationGrantInput{ID: id, PrincipalID: pr.URL, Subject: subject,
			Scopes: []string{"review"}, Audiences: []string{h}}); err != nil {
			t.Fatal(err)
		}
	}
	grant(f.alice.Delegation(), "review-bob", f.bob.AgentID())
	grant(f.bob.Delegation(), "review-alice", f.alice.AgentID())
	if _, err := f.alice.Delegation().DelegationCheck(bg, delegation.DelegationCheckInput{PrincipalID: pr.URL, Audience: h}); err != nil {
		t.Fatal(err)
	}
	f.alice.Delegation().Flush() // the check's record is written behind the call
	return st
}

// The protocol pages show what the tools did, every hostile string
// escaped and marked; a letter's text is on its page only, cut with a
// note, and reading it there does not mark it read; the live stream
// names each page's topic as its state changes.
func TestProtocolPagesShowTheConnectorState(t *testing.T) {
	t.Parallel()
	f := newFixture(t, opview.Options{Poll: 100 * time.Millisecond})
	c := f.login(t, browser(t))
	s := f.stream(t, c, "")
	s.next(t, "hello", 5*time.Second)
	st := makeProtocolState(t, f)

	var wakePage string
	f.waitFor(t, "the wake's exit on the wake page", func() bool {
		wakePage = f.get(t, c, "/wake", nil).body
		return strings.Contains(rowWith(wakePage, "room.mention"), `<span class="mono bad-text">3</span>`)
	})
	inertHTML(t, "wake", wakePage)
	row := rowWith(wakePage, "room.mention")
	for _, want := range []string{`data-state="exited"`, "command", "wake.sh", "serve pid", `href="/rooms/`, f.roomID, "has not claimed it"} {
		if !strings.Contains(row, want) {
			t.Errorf("the wake row lacks %q: %s", want, row)
		}
	}
	if !strings.Contains(wakePage, "woke for ") || !strings.Contains(wakePage, "&lt;b&gt;now&lt;/b&gt;") ||
		!strings.Contains(rowWith(wakePage, `data-job="command:`), "held") {
		t.Errorf("wake page:\n%s", wakePage)
	}

	mailPage := f.get(t, c, "/mail", nil).body
	inertHTML(t, "mail", mailPage)
	box := rowWith(mailPage, `class="mailbox`)
	for _, want := range []string{"/mail/", f.alice.AgentID(), f.hub.Origin(), `<span class="badge online">open<`, "held"} {
		if !strings.Contains(box, want) {
			t.Errorf("the mailbox row lacks %q: %s", want, box)
		}
	}
	received := rowWith(mailPage, `data-direction="received"`)
	sent := rowWith(mailPage, `data-direction="sent"`)
	if !strings.Contains(received, "unread") || !strings.Contains(received, "2 parts") || !strings.Contains(sent, "delivered") ||
		!strings.Contains(mailPage, `id="letters-total">2<`) || !strings.Contains(mailPage, `id="letters-unread">1<`) {
		t.Errorf("letters:\n%s\n%s", received, sent)
	}
	if strings.Contains(mailPage, "Lunch on Friday") || strings.Contains(mailPage, "Plans ") || strings.Contains(mailPage, "Yes.") {
		t.Error("the mail page shows a letter's content")
	}
	link := regexp.MustCompile(`href="(/mail/letters/\d+)">received<`).FindStringSubmatch(received)
	if link == nil {
		t.Fatalf("no link to the received letter: %s", received)
	}
	letter := f.get(t, c, link[1], nil)
	inertHTML(t, "letter", letter.body)
	for _, want := range []string{"Plans &lt;script&gt;alert(1)&lt;/script&gt;", "Lunch on Friday? &lt;script&gt;", `\u{202e}evil`,
		"Cut: the first 20000 of", "application/octet-stream", "notes &lt;script&gt;", "Not text: not shown.", f.bob.AgentID()} {
		if !strings.Contains(letter.body, want) {
			t.Errorf("the letter page lacks %q", want)
		}
	}
	if strings.Contains(letter.body, "TAIL-NOT-SHOWN") {
		t.Error("the letter page shows the text past its cut")
	}
	if again := f.get(t, c, "/mail", nil).body; !strings.Contains(again, `id="letters-unread">1<`) {
		t.Error("opening the letter marked it read")
	}
	for _, bad := range []string{"/mail/letters/999999", "/mail/letters/0", "/mail/letters/x"} {
		if a := f.get(t, c, bad, nil); a.status != http.StatusNotFound {
			t.Errorf("%s: %d", bad, a.status)
		}
	}

	know := f.get(t, c, "/knowledge", nil).body
	inertHTML(t, "knowledge", know)
	sub := rowWith(know, `data-id="`+st.submission+`"`)
	for _, want := range []string{rules.TypePublish, "observation", "Title &lt;script&gt;alert(1)&lt;/script&gt;", f.hub.Origin(), "accepted", "#1"} {
		if !strings.Contains(sub, want) {
			t.Errorf("the submission row lacks %q: %s", want, sub)
		}
	}
	if strings.Contains(know, "Statement ") {
		t.Error("the knowledge page shows the statement")
	}

	del := f.get(t, c, "/delegations", nil).body
	inertHTML(t, "delegations", del)
	granted, held := section(del, "delegations-granted"), section(del, "delegations-held")
	if g := rowWith(granted, `data-id="review-bob"`); !strings.Contains(g, st.principal) || !strings.Contains(g, "review") ||
		!strings.Contains(g, `data-status="active"`) || !strings.Contains(g, "not checked since its last event") || !strings.Contains(g, "grant") {
		t.Errorf("granted:\n%s", granted)
	}
	if strings.Contains(granted, "review-alice") || strings.Contains(held, "review-bob") {
		t.Errorf("a credential in the wrong table:\n%s\n%s", granted, held)
	}
	if h := rowWith(held, `data-id="review-alice"`); !strings.Contains(h, "usable") || !strings.Contains(h, "for <span class=\"mono\">"+f.hub.Origin()) ||
		!strings.Contains(h, "check") {
		t.Errorf("held:\n%s", held)
	}

	seen := map[string]bool{}
	deadline := time.After(10 * time.Second)
	for !seen[opview.TopicWake] || !seen[opview.TopicMail] || !seen[opview.TopicKnowledge] || !seen[opview.TopicDelegation] {
		select {
		case ev := <-s.events:
			for _, tp := range topics(ev) {
				seen[tp] = true
			}
		case <-deadline:
			t.Fatalf("the stream named only %v", slices.Sorted(func(yield func(string) bool) {
				for k := range seen {
					if !yield(k) {
						return
					}
				}
			}))
		}
	}
}

// section returns the table of body whose id is id.
func section(body, id string) string {
	i := strings.Index(body, `id="`+id+`"`)
	if i < 0 {
		return ""
	}
	end := strings.Index(body[i:], "</table>")
	if end < 0 {
		return ""
	}
	return body[i : i+end]
}

// Without mail.read on any origin the mail page lists nothing and says
// why, as the agent's own views would, and no letter page opens.
func TestMailPageWithoutMailRead(t *testing.T) {
	t.Parallel()
	cfg, err := config.Default(t.TempDir(), config.DefaultOptions{HostURL: "https://127.0.0.1:9", HostLabel: "hub",
		HostGrants: []string{"discourse.read"}})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := connector.New(bg, connector.Options{Config: cfg, Signer: hubtest.NewAgent(0xC3).Signer})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	v, err := opview.New(opview.FromConnector(conn, ""), opview.Options{Addr: ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(v)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	f := &fixture{t: t, view: v, addr: ln.Addr().String()}
	c := f.login(t, browser(t))
	page := f.get(t, c, "/mail", nil)
	if page.status != http.StatusOK || !strings.Contains(page.body, `id="mail-refused"`) || !strings.Contains(page.body, "mail.read") ||
		!strings.Contains(page.body, "No mailbox is open.") {
		t.Fatalf("mail page: %d\n%s", page.status, page.body)
	}
	if a := f.get(t, c, "/mail/letters/1", nil); a.status != http.StatusNotFound {
		t.Fatalf("a letter page: %d", a.status)
	}
	for _, p := range []string{"/wake", "/knowledge", "/delegations"} {
		if a := f.get(t, c, p, nil); a.status != http.StatusOK {
			t.Fatalf("%s with nothing recorded: %d %s", p, a.status, a.body)
		}
	}
}
