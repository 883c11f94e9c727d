//go:build browser

package browser

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"apconnect/host/config"
	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
)

// addWake configures a [[wake.command]] of the agent's for room mentions:
// a script that says which item woke it.
func (a *agent) addWake(t *testing.T) {
	t.Helper()
	script := filepath.Join(t.TempDir(), "wake-agent.sh")
	body := "#!/bin/sh\necho \"woken for $APCONNECT_INBOX_ID ($APCONNECT_KIND)\"\n"
	if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(a.home)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Wake.Commands = append(cfg.Wake.Commands, config.WakeCommand{Argv: []string{"/bin/sh", script}, Kinds: []string{"room.mention"},
		Timeout: 30 * time.Second})
	if err := cfg.Save(); err != nil {
		t.Fatal(err)
	}
}

// letterText is the text of bob's letter to alice.
const letterText = "Alice,\n\nthe <b>release notes</b> are attached as a draft; the signatures section is still open.\n\nBob"

// protocolState has alice and bob use the protocol modules through
// `apconnect call`, before alice's serve starts: a wake command for her
// mentions; a mailbox each, a letter from bob that alice syncs and one
// from alice; a publication of alice's; a principal both control, a
// delegation from alice to bob and one from bob to alice, which alice
// checks.
func protocolState(t *testing.T, h *hubtest.Hub, alice, bob *agent, aliceID, bobID string) {
	t.Helper()
	alice.addWake(t)
	address := func(res map[string]any) string {
		box, _ := res["mailbox"].(map[string]any)
		a, _ := box["address"].(string)
		if a == "" {
			t.Fatalf("no mailbox address in %v", res)
		}
		return a
	}
	aliceBox := address(alice.call(t, "mail_mailbox_publish", map[string]any{"routes": []any{h.Origin()}}))
	bobBox := address(bob.call(t, "mail_mailbox_publish", map[string]any{"routes": []any{h.Origin()}}))
	bob.call(t, "mail_send", map[string]any{"to": aliceBox, "subject": "Release notes <draft>", "text": letterText})
	alice.call(t, "mail_send", map[string]any{"to": bobBox, "subject": "Re: release notes", "text": "Thanks, reading them now."})
	alice.call(t, "mail_sync", nil)

	alice.call(t, "knowledge_submit", map[string]any{"services": []any{h.Origin()}, "type": "knowledge.publish", "payload": map[string]any{
		"license": "https://creativecommons.org/licenses/by/4.0/", "kind": "observation", "title": "Release builds are reproducible",
		"statement": "Two clean builds of v0.9 produce identical binaries.", "language": "en", "basis": "Built twice and compared.",
		"context": map[string]any{"scope": "apconnect v0.9 on Linux", "conditions": []any{}, "limitations": []any{"one machine"}}}})

	past := time.Now().UnixMilli() - 1000
	pr, err := hub.PutPrincipal(context.Background(), h.DataDir(), "acme", map[string]any{"type": "organization", "name": "Acme",
		"controllers": []any{
			map[string]any{"id": aliceID, "source": "local", "valid_from": past, "delegation": "*"},
			map[string]any{"id": bobID, "source": "local", "valid_from": past, "delegation": "*"},
		}})
	if err != nil {
		t.Fatal(err)
	}
	grant := func(a *agent, id, subject string) {
		a.call(t, "delegation_grant", map[string]any{"id": id, "principal_id": pr.URL, "subject": subject, "scopes": []any{"review"},
			"audiences": []any{h.Origin()}, "expires_at": time.Now().Add(30 * 24 * time.Hour).UnixMilli()})
	}
	grant(alice, "review-bob", bobID)
	grant(bob, "review-alice", aliceID)
	alice.call(t, "delegation_check", map[string]any{"principal_id": pr.URL, "audience": h.Origin()})
}

// visitProtocolPages opens the wake, mail, letter, knowledge and
// delegations pages and saves their screenshots.
func visitProtocolPages(t *testing.T, d *driver, hostport string) {
	t.Helper()
	d.open("http://" + hostport + "/wake")
	d.waitFor("the wake of the mention", `Array.from(document.querySelectorAll('#wakes tr.wake[data-state="exited"]')).some(r => r.innerText.includes("room.mention"))`, 20*time.Second)
	d.waitFor("the command's lease", `document.getElementById("wake-leases").innerText.includes("held")`, 5*time.Second)
	d.screenshot(filepath.Join(screenshotDir, "wake.png"))

	d.open("http://" + hostport + "/mail")
	received := `document.querySelector('#letters tr[data-direction="received"]')`
	d.waitFor("the received letter", received+` && `+received+`.innerText.includes("unread")`, 10*time.Second)
	d.waitFor("the sent letter", `document.querySelector('#letters tr[data-direction="sent"]').innerText.includes("delivered")`, 5*time.Second)
	if d.truthy(`document.getElementById("main").innerText.includes("signatures section")`) {
		t.Fatal("the mail page shows a letter's text")
	}
	var href string
	d.eval("return "+received+".querySelector('a').getAttribute('href');", &href)
	if !strings.HasPrefix(href, "/mail/letters/") {
		t.Fatalf("letter link %q", href)
	}
	d.screenshot(filepath.Join(screenshotDir, "mail.png"))

	d.open("http://" + hostport + href)
	d.waitFor("the letter's text", `document.querySelector('.letter-text') && document.querySelector('.letter-text').innerText.includes("<b>release notes</b>")`, 5*time.Second)
	if d.truthy(`document.querySelector('.letter-text b') !== null`) {
		t.Fatal("the letter's markup became an element")
	}
	d.waitFor("the subject", `document.querySelector('h1').innerText === "Release notes <draft>"`, time.Second)
	d.screenshot(filepath.Join(screenshotDir, "letter.png"))

	d.open("http://" + hostport + "/knowledge")
	d.waitFor("the publication", `Array.from(document.querySelectorAll('#submissions tr.submission')).some(r => r.innerText.includes("Release builds are reproducible") && r.innerText.includes("accepted"))`, 5*time.Second)
	d.screenshot(filepath.Join(screenshotDir, "knowledge.png"))

	d.open("http://" + hostport + "/delegations")
	d.waitFor("the delegation alice granted", `document.querySelector('#delegations-granted tr[data-id="review-bob"]') !== null`, 5*time.Second)
	d.waitFor("the delegation naming alice, checked usable", `document.querySelector('#delegations-held tr[data-id="review-alice"]') && document.querySelector('#delegations-held tr[data-id="review-alice"]').innerText.includes("usable")`, 5*time.Second)
	d.screenshot(filepath.Join(screenshotDir, "delegations.png"))
}
