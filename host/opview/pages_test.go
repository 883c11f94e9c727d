package opview_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"apconnect/host/connector"
	"apconnect/host/connector/discourse"
	"apconnect/host/opview"
	"apconnect/host/store"
)

// inertHTML fails the test when a page carries any of the hostile markup
// unescaped, or a raw bidirectional override or control character.
func inertHTML(t *testing.T, what, body string) {
	t.Helper()
	for _, bad := range []string{"<script>alert", "<img src=x", "<b>bold", "\u202e", "\x1b", `href="javascript:`} {
		if strings.Contains(body, bad) {
			i := strings.Index(body, bad)
			t.Fatalf("%s renders %q raw: …%s…", what, bad, body[max(0, i-80):min(len(body), i+80)])
		}
	}
	// The only scripts are the view's own.
	if n := strings.Count(body, "<script"); n != strings.Count(body, `<script src="/static/app.js" defer></script>`) {
		t.Fatalf("%s has %d script elements", what, n)
	}
}

// Every page shows the state a real connector holds: the room, the pending
// mention, the grants, the plugins table and the processes, with every
// hostile string escaped and visibly marked.
func TestPagesShowTheConnectorState(t *testing.T) {
	t.Parallel()
	f := newFixture(t, opview.Options{}, connector.ProcessInfo{Command: "serve", Transport: "http", Interval: time.Second})
	hb := f.beat
	hb.Client("claude-code <x>", "1.2.3")
	hb.Called("agent_protocols_inbox_next")
	// A process that stopped beating a minute ago without exiting.
	now := time.Now().UnixMilli()
	if err := f.alice.Store().Write(bg, func(tx *store.Tx) error {
		return tx.PutHeartbeat(bg, &store.Heartbeat{ID: "h/4242/1", PID: 4242, Hostname: "h", Command: "mcp", Transport: "stdio",
			Identity: "default", ClientName: hostile, StartedAt: now - 120_000, BeatAt: now - 60_000, IntervalMS: 5000})
	}); err != nil {
		t.Fatal(err)
	}
	c := f.login(t, browser(t))
	f.waitFor(t, "the heartbeat's client", func() bool {
		return strings.Contains(f.get(t, c, "/", nil).body, "claude-code &lt;x&gt; 1.2.3")
	})
	status := f.get(t, c, "/", nil)
	inertHTML(t, "status", status.body)
	for _, want := range []string{f.hub.Origin(), "discourse.read", "discourse.write", `id="plugins"`, "No plugin is configured",
		`data-state="stale"`, `data-state="online"`, "4242", "this view", "agent_protocols_inbox_next", `id="count-pending">1<`} {
		if !strings.Contains(status.body, want) {
			t.Errorf("status page lacks %q", want)
		}
	}
	// The stale process is never called online.
	if row := rowWith(status.body, "4242"); !strings.Contains(row, `data-state="stale"`) || strings.Contains(row, ">online<") {
		t.Errorf("stale process row %s", row)
	}

	rooms := f.get(t, c, "/rooms", nil)
	inertHTML(t, "rooms", rooms.body)
	key := regexp.MustCompile(`data-room-key="(\d+)" data-room-id="` + f.roomID + `"`).FindStringSubmatch(rooms.body)
	if key == nil || !strings.Contains(rooms.body, "Topic &lt;script&gt;alert(1)&lt;/script&gt;") || !strings.Contains(rooms.body, "verified") {
		t.Fatalf("rooms page:\n%s", rooms.body)
	}

	room := f.get(t, c, "/rooms/"+key[1], nil)
	inertHTML(t, "room", room.body)
	mention := rowWith(room.body, "Alice, please look")
	for _, want := range []string{`class="item mention"`, "mentions this agent", "&lt;img src=x onerror=alert(2)&gt;", `\u{202e}evil\u{202c}`, `\x1b[31m`} {
		if !strings.Contains(mention, want) {
			t.Errorf("the mention lacks %q: %s", want, mention)
		}
	}
	if !strings.Contains(room.body, "this agent") || strings.Count(room.body, `<tr`) < 3 {
		t.Errorf("room members:\n%s", room.body)
	}

	inbox := f.get(t, c, "/inbox", nil)
	inertHTML(t, "inbox", inbox.body)
	if row := rowWith(inbox.body, "Alice, please look"); !strings.Contains(row, `data-kind="room.mention"`) || !strings.Contains(row, "pending") {
		t.Errorf("inbox lacks the pending mention:\n%s", inbox.body)
	}
}

// rowWith returns the table row or list item of body that contains s.
func rowWith(body, s string) string {
	i := strings.Index(body, s)
	if i < 0 {
		return ""
	}
	start := max(strings.LastIndex(body[:i], "<tr"), strings.LastIndex(body[:i], "<li"))
	end := strings.Index(body[i:], "</tr>")
	if e := strings.Index(body[i:], "</li>"); e >= 0 && (end < 0 || e < end) {
		end = e
	}
	if start < 0 || end < 0 {
		return ""
	}
	return body[start : i+end]
}

// A room that failed verification is impossible to miss: an alert on the
// status and rooms pages, the row marked, verification_failed on its page.
func TestFailedRoomIsLoud(t *testing.T) {
	t.Parallel()
	f := newFixture(t, opview.Options{})
	now := time.Now().UnixMilli()
	other, err := f.alice.Discourse().RoomCreate(bg, "s", discourse.RoomCreateInput{Host: f.hub.Origin(), Topic: "second",
		Visibility: "public", StartTime: now - 1000, EndTime: now + 3600_000})
	if err != nil {
		t.Fatal(err)
	}
	row, err := f.alice.Store().Read().RoomAt(bg, f.hub.Origin(), other.Room.RoomID)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.alice.Store().Write(bg, func(tx *store.Tx) error {
		return tx.MarkFailed(bg, row.Key, store.Failure{Seq: 2, Code: "invalid_signature", Message: "bad " + hostile, At: now})
	}); err != nil {
		t.Fatal(err)
	}
	c := f.login(t, browser(t))
	status := f.get(t, c, "/", nil)
	if !strings.Contains(status.body, `id="alert-failed"`) || !strings.Contains(status.body, "1 room failed verification") {
		t.Errorf("status page has no failure alert")
	}
	rooms := f.get(t, c, "/rooms", nil)
	inertHTML(t, "rooms", rooms.body)
	if !strings.Contains(rooms.body, `data-failed-room="`+strconv.FormatInt(row.Key, 10)+`"`) ||
		!strings.Contains(rowWith(rooms.body, `data-room-id="`+other.Room.RoomID+`"`), `class="room failed"`) {
		t.Errorf("rooms page does not mark the failed room:\n%s", rooms.body)
	}
	page := f.get(t, c, fmt.Sprintf("/rooms/%d", row.Key), nil)
	inertHTML(t, "failed room", page.body)
	if !strings.Contains(page.body, "verification_failed") || !strings.Contains(page.body, "invalid_signature") {
		t.Errorf("room page:\n%s", page.body)
	}
}

// The outbox shows pending entries, marks one held because its grant was
// withdrawn (its error says permission_denied), and shows failed and
// resolved ones; held drafts show what changed since their base.
func TestOutboxAndDrafts(t *testing.T) {
	t.Parallel()
	f := newFixture(t, opview.Options{})
	now := time.Now().UnixMilli()
	if err := f.alice.Store().Write(bg, func(tx *store.Tx) error {
		held, err := tx.AddOutbox(bg, &store.OutboxEntry{Kind: "room_event", Service: f.hub.Origin(), Ref: f.roomID, EventID: "ev-held",
			Nonce: 900, Envelope: []byte(`{}`), CreatedAt: now})
		if err != nil {
			return err
		}
		if err := tx.HoldOutbox(bg, held, now, now+60_000, "permission_denied: the operator has not granted discourse.write"); err != nil {
			return err
		}
		failed, err := tx.AddOutbox(bg, &store.OutboxEntry{Kind: "room_event", Service: f.hub.Origin(), Ref: f.roomID, EventID: "ev-failed",
			Nonce: 901, Envelope: []byte(`{}`), CreatedAt: now})
		if err != nil {
			return err
		}
		return tx.CloseOutbox(bg, failed, store.OutboxFailed, nil, "rejected: "+hostile, now)
	}); err != nil {
		t.Fatal(err)
	}
	// A draft held because the head moved (alice's own room.update from
	// another session) after the session "viewer" read the room.
	d := f.alice.Discourse()
	if _, err := d.RoomTimeline(bg, "viewer", discourse.RoomTimelineInput{RoomID: f.roomID, Refresh: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.RoomSubmitEvent(bg, "s", discourse.RoomSubmitEventInput{RoomID: f.roomID, Type: "room.update",
		Payload: map[string]any{"agenda": "agenda " + hostile}, OnHeadMismatch: "send_anyway"}); err != nil {
		t.Fatal(err)
	}
	res, err := d.RoomSendMessage(bg, "viewer", discourse.RoomSendMessageInput{RoomID: f.roomID, Content: "draft " + hostile})
	if err != nil {
		t.Fatal(err)
	}
	c := f.login(t, browser(t))
	out := f.get(t, c, "/outbox", nil)
	inertHTML(t, "outbox", out.body)
	if row := rowWith(out.body, "permission_denied"); !strings.Contains(row, "held: grant withdrawn") || !strings.Contains(row, "outbox pending held") {
		t.Errorf("held entry row: %s", row)
	}
	if !strings.Contains(rowWith(out.body, "rejected: "), "outbox failed") {
		t.Errorf("failed entry missing:\n%s", out.body)
	}
	if !strings.Contains(out.body, `id="outbox-done"`) || strings.Contains(rowWith(out.body, "room_create"), "failed") {
		t.Errorf("resolved entries missing:\n%s", out.body)
	}
	if res.Status == discourse.StatusHeld {
		if !strings.Contains(out.body, "draft &lt;script&gt;") || !strings.Contains(out.body, "since its base") {
			t.Errorf("held draft missing:\n%s", out.body)
		}
	} else {
		t.Errorf("the write was not held: %+v", res)
	}
	status := f.get(t, c, "/", nil)
	if !strings.Contains(status.body, "because a grant was withdrawn (permission_denied)") {
		t.Errorf("status page does not warn about the held entry")
	}
	if a := f.get(t, c, "/outbox?fragment=1", nil); a.status != http.StatusOK || strings.Contains(a.body, "<html") || !strings.Contains(a.body, "Held drafts") {
		t.Errorf("fragment: %d %s", a.status, a.body)
	}
}

// A host that goes away is never shown live: the room's stream turns
// retrying, with the failure, on the status and rooms pages.
func TestHostDownIsNotLive(t *testing.T) {
	t.Parallel()
	f := newFixture(t, opview.Options{})
	c := f.login(t, browser(t))
	f.waitFor(t, "the stream live", func() bool {
		return strings.Contains(rowWith(f.get(t, c, "/rooms", nil).body, f.roomID), `class="stream live"`)
	})
	f.hub.Close()
	f.waitFor(t, "the stream retrying", func() bool {
		body := f.get(t, c, "/", nil).body
		return strings.Contains(body, "1 retrying") && strings.Contains(body, `class="small bad-text"`)
	})
	if row := rowWith(f.get(t, c, "/rooms", nil).body, f.roomID); strings.Contains(row, `class="stream live"`) || !strings.Contains(row, "retrying") {
		t.Fatalf("rooms row with the host down: %s", row)
	}
}
