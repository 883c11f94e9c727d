package mcpserver

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	_ "modernc.org/sqlite"
)

// dumpState renders every row of every table of an agent's state database,
// so a test can tell whether anything at all changed.
func dumpState(t testing.TB, a *tagent) string {
	t.Helper()
	path := a.conn.Store().Path()
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	rows.Close()
	var b strings.Builder
	for _, table := range tables {
		r, err := db.Query(`SELECT * FROM "` + table + `"`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := r.Columns()
		var lines []string
		for r.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := r.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, fmt.Sprintf("%q", vals))
		}
		r.Close()
		sort.Strings(lines)
		fmt.Fprintf(&b, "== %s (%d rows)\n%s\n", table, len(lines), strings.Join(lines, "\n"))
	}
	return b.String()
}

// readResource reads one resource and decodes its JSON.
func readResource(t testing.TB, cs *mcp.ClientSession, uri string) obj {
	t.Helper()
	res, err := cs.ReadResource(bg, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 || res.Contents[0].URI != uri || res.Contents[0].MIMEType != "application/json" {
		t.Fatalf("read %s: contents %+v", uri, res.Contents)
	}
	var m obj
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &m); err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	return m
}

func roomURIs(roomID string) []string {
	base := uriRooms + "/" + roomID
	return []string{base, base + "/members", base + "/timeline", base + "/types", base + "/agent-status"}
}

func TestResourcesListed(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, "alice", 0xA1, agentOptions{})
	rl, err := alice.cs.ListResources(bg, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range rl.Resources {
		uris = append(uris, r.URI)
		if r.MIMEType != "application/json" || r.Description == "" {
			t.Errorf("resource %+v", r)
		}
	}
	slices.Sort(uris)
	if want := []string{uriDrafts, uriHosts, uriIdentity, uriInbox, uriLetters, uriMailboxes, uriRooms}; !slices.Equal(uris, want) {
		t.Errorf("resources %v, want %v", uris, want)
	}
	tl, err := alice.cs.ListResourceTemplates(bg, nil)
	if err != nil {
		t.Fatal(err)
	}
	var tmpls []string
	for _, r := range tl.ResourceTemplates {
		tmpls = append(tmpls, r.URITemplate)
	}
	slices.Sort(tmpls)
	if want := []string{tmplProfile, tmplRoom, tmplStatus, tmplArchive, tmplMembers, tmplTimeline, tmplTypes}; !slices.Equal(tmpls, want) {
		t.Errorf("templates %v, want %v", tmpls, want)
	}
}

// A resource read changes nothing: no host request, no database change —
// not even a pending deferral that has run out is released, an inbox item
// claimed or a head presented.
func TestResourceReadsChangeNothing(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, "alice", 0xA1, agentOptions{})
	bob := newAgent(t, h, "bob", 0xB0, agentOptions{})
	roomID := alice.createRoom("public", obj{"types": []any{obj{"use": "adp:reactions/1.0"}}})
	bob.call("room_join", obj{"host": h.Origin(), "room_id": roomID, "role": "speaker"})
	race(t, bob, alice, roomID, "alice speaks")
	alice.call("room_send_message", obj{"room_id": roomID, "content": "Bob?", "mentions": []any{bob.id}, "on_head_mismatch": "send_anyway"})
	alice.call("room_send_message", obj{"room_id": roomID, "content": "Anyone?", "on_head_mismatch": "send_anyway"})
	held := bob.call("room_send_message", obj{"room_id": roomID, "content": "late"})
	if held["status"] != "held" {
		t.Fatalf("want a held draft, got %v", held)
	}
	bob.call("agent_status_set", obj{"room_id": roomID, "state": "drafting"})
	bob.call("room_timeline", obj{"room_id": roomID, "refresh": true})
	inbox := bob.call("inbox_next", obj{"limit": 50})
	items := inbox["items"].([]any)
	if len(items) < 2 {
		t.Fatalf("want pending inbox items, got %v", inbox)
	}
	// Defer one item briefly: once the deferral ends, only a write releases it.
	bob.call("inbox_ack", obj{"ids": []any{get(items[0], "id")}, "action": "defer", "defer_until": time.Now().UnixMilli() + 30})
	time.Sleep(80 * time.Millisecond)

	before, reqs := dumpState(t, bob), bob.requests.Load()
	read := map[string]obj{}
	for _, uri := range append([]string{uriIdentity, uriHosts, uriRooms, uriInbox, uriDrafts}, roomURIs(roomID)...) {
		read[uri] = readResource(t, bob.cs, uri)
	}
	// A room that is not known locally is not found, and not fetched.
	unknown := "dzzzzzzzzzzzzzzzzzzz"
	for _, uri := range roomURIs(unknown) {
		if _, err := bob.cs.ReadResource(bg, &mcp.ReadResourceParams{URI: uri}); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("read %s: %v", uri, err)
		}
	}
	for _, uri := range []string{uriPrefix + "rooms/", uriPrefix + "rooms/bad id", roomURIs(roomID)[0] + "/nope", uriPrefix + "elsewhere"} {
		if _, err := bob.cs.ReadResource(bg, &mcp.ReadResourceParams{URI: uri}); err == nil {
			t.Errorf("read %s succeeded", uri)
		}
	}
	if after := dumpState(t, bob); after != before {
		t.Errorf("resource reads changed the state:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if n := bob.requests.Load(); n != reqs {
		t.Errorf("resource reads sent %d requests to the host", n-reqs)
	}

	// And they show the local state.
	if read[uriIdentity]["agent_id"] != bob.id || len(read[uriHosts]["hosts"].([]any)) != 1 {
		t.Errorf("identity %v hosts %v", read[uriIdentity], read[uriHosts])
	}
	if rooms := read[uriRooms]["rooms"].([]any); len(rooms) != 1 || get(rooms[0], "room_id") != roomID {
		t.Errorf("rooms %v", read[uriRooms])
	}
	if n := len(read[uriInbox]["items"].([]any)); n != len(items)-1 || num(read[uriInbox]["pending_count"]) != int64(n) {
		t.Errorf("inbox %v (one of %d items is deferred)", read[uriInbox], len(items))
	}
	if d := read[uriDrafts]["drafts"].([]any); len(d) != 1 || get(d[0], "id") != get(held, "draft", "id") {
		t.Errorf("drafts %v", read[uriDrafts])
	}
	base := uriRooms + "/" + roomID
	if get(read[base], "room", "room_id") != roomID || num(get(read[base], "sync", "head_seq")) == 0 || get(read[base], "sync", "presented_seq") != nil {
		t.Errorf("room %v", read[base])
	}
	if m := read[base+"/members"]["members"].([]any); len(m) != 2 {
		t.Errorf("members %v", read[base+"/members"])
	}
	tlItems := read[base+"/timeline"]["items"].([]any)
	if len(tlItems) == 0 || num(get(tlItems[len(tlItems)-1], "seq")) != num(get(read[base+"/timeline"], "sync", "synced_seq")) {
		t.Errorf("timeline %v", read[base+"/timeline"])
	}
	if len(read[base+"/types"]["types"].([]any)) == 0 {
		t.Errorf("types %v", read[base+"/types"])
	}
	if s := read[base+"/agent-status"]["statuses"].([]any); len(s) != 1 || get(s[0], "agent_id") != bob.id {
		t.Errorf("agent-status %v", read[base+"/agent-status"])
	}
}

// updates records the resource-updated notifications a client receives.
type updates struct {
	mu   sync.Mutex
	seen map[string]int
}

func (u *updates) on(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.seen[r.Params.URI]++
}

func (u *updates) String() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return fmt.Sprint(u.seen)
}

func (u *updates) count(uri string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.seen[uri]
}

func TestResourceSubscriptions(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			h := startHub(t)
			alice := newAgent(t, h, "alice", 0xA1, agentOptions{})
			u := &updates{seen: map[string]int{}}
			bob := newAgent(t, h, "bob", 0xB0, agentOptions{start: true, protocol: version, client: &mcp.ClientOptions{
				ResourceUpdatedHandler: u.on,
			}})
			if got := bob.cs.InitializeResult().ProtocolVersion; got != version {
				t.Fatalf("negotiated %s", got)
			}
			roomID := alice.createRoom("public", nil)
			bob.call("room_join", obj{"host": h.Origin(), "room_id": roomID, "role": "speaker"})
			base := uriRooms + "/" + roomID
			for _, uri := range []string{uriInbox, uriDrafts, base, base + "/timeline", base + "/agent-status"} {
				if err := bob.cs.Subscribe(bg, &mcp.SubscribeParams{URI: uri}); err != nil {
					t.Fatalf("subscribe %s: %v", uri, err)
				}
			}
			// A URI that is not one of ours cannot be subscribed to. (The
			// 2026-07-28 client does not report the refusal of a
			// subscriptions/listen stream, so look at the server's table.)
			err := bob.cs.Subscribe(bg, &mcp.SubscribeParams{URI: uriPrefix + "nothing/here"})
			if version < "2026-07-28" && err == nil {
				t.Error("subscribed to a resource that does not exist")
			}
			// (The 2026-07-28 Subscribe returns once its listen stream is
			// opened; the server subscribes asynchronously.)
			for _, uri := range []string{uriInbox, uriDrafts, base, base + "/timeline", base + "/agent-status"} {
				eventually(t, 5*time.Second, "the subscription to "+uri, func() bool { return bob.subscribed(uri) })
			}
			if bob.subscribed(uriPrefix + "nothing/here") {
				t.Error("the server subscribed to a resource that does not exist")
			}

			// Alice mentions bob: bob's live sync applies it; his inbox, the
			// timeline and the room change.
			alice.call("room_timeline", obj{"room_id": roomID, "refresh": true})
			alice.call("room_send_message", obj{"room_id": roomID, "content": "Bob, a question.", "mentions": []any{bob.id}})
			for _, uri := range []string{uriInbox, base + "/timeline", base} {
				eventually(t, 10*time.Second, "an update of "+uri+" "+u.String(), func() bool { return u.count(uri) > 0 })
			}
			// His status.
			bob.call("agent_status_set", obj{"room_id": roomID, "state": "drafting"})
			eventually(t, 5*time.Second, "an update of the agent status", func() bool { return u.count(base+"/agent-status") > 0 })
			// A held draft.
			bob.call("room_timeline", obj{"room_id": roomID, "unread_only": true, "mark_read": true})
			alice.call("room_submit_event", obj{"room_id": roomID, "type": "room.update", "payload": obj{"agenda": "Meanwhile."}, "on_head_mismatch": "send_anyway"})
			eventually(t, 10*time.Second, "bob sees alice's second message", func() bool {
				return num(get(readResource(t, bob.cs, base), "sync", "synced_seq")) >= 4 // (a read presents nothing)
			})
			if r := bob.call("room_send_message", obj{"room_id": roomID, "content": "my answer"}); r["status"] != "held" {
				t.Fatalf("want held, got %v", r)
			}
			eventually(t, 5*time.Second, "an update of the held drafts", func() bool { return u.count(uriDrafts) > 0 })

			// After unsubscribing, no more updates of that resource.
			if err := bob.cs.Unsubscribe(bg, &mcp.UnsubscribeParams{URI: base + "/timeline"}); err != nil {
				t.Fatal(err)
			}
			eventually(t, 5*time.Second, "the unsubscription", func() bool { return !bob.subscribed(base + "/timeline") })
			tl := u.count(base + "/timeline")
			inbox := u.count(uriInbox)
			alice.call("room_send_message", obj{"room_id": roomID, "content": "Bob, again.", "mentions": []any{bob.id}, "on_head_mismatch": "send_anyway"})
			eventually(t, 10*time.Second, "another inbox update", func() bool { return u.count(uriInbox) > inbox })
			time.Sleep(200 * time.Millisecond)
			if u.count(base+"/timeline") != tl {
				t.Error("updates of an unsubscribed resource")
			}
		})
	}
}

// The 0.12.6 tools' resources: the archive room_archive kept and the
// profile profiles_get pinned, read from local state only (a reader with
// nothing kept gets resource-not-found), and updated when kept again.
func TestArchiveAndProfileResources(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, "alice", 0xA1, agentOptions{})
	u := &updates{seen: map[string]int{}}
	bob := newAgent(t, h, "bob", 0xB2, agentOptions{protocol: "2025-11-25", client: &mcp.ClientOptions{ResourceUpdatedHandler: u.on}})
	roomID := alice.createRoom("public", nil)
	alice.call("room_send_message", obj{"room_id": roomID, "content": "For the record."})
	archURI := "agent-protocols://rooms/" + roomID + "/archive"
	if _, err := bob.cs.ReadResource(bg, &mcp.ReadResourceParams{URI: archURI}); err == nil {
		t.Fatal("an archive nobody kept was read")
	}
	kept := bob.call("room_archive", obj{"room_id": roomID, "host": h.Origin()})
	if get(kept, "archive", "uri") != archURI || num(get(kept, "archive", "records_count")) != 2 {
		t.Fatalf("room_archive: %v", kept["archive"])
	}
	arch := readJSON(t, bob, archURI)
	if arch["room_id"] != roomID || arch["verified"] != true || len(arch["records"].([]any)) != 2 || arch["state_verified"] != true {
		t.Fatalf("archive resource: %v", arch)
	}
	if err := bob.cs.Subscribe(bg, &mcp.SubscribeParams{URI: archURI}); err != nil {
		t.Fatal(err)
	}
	alice.call("room_send_message", obj{"room_id": roomID, "content": "And one more."})
	bob.call("room_archive", obj{"room_id": roomID, "include_records": false})
	eventually(t, 5*time.Second, "an update of the archive resource", func() bool { return u.count(archURI) > 0 })
	if arch := readJSON(t, bob, archURI); len(arch["records"].([]any)) != 3 {
		t.Fatalf("the archive kept again: %d records", len(arch["records"].([]any)))
	}

	profURI := "agent-protocols://profiles/" + alice.id
	if _, err := bob.cs.ReadResource(bg, &mcp.ReadResourceParams{URI: profURI}); err == nil {
		t.Fatal("a profile nobody pinned was read")
	}
	alice.call("profile_update", obj{"profile_service": h.Origin(), "profile": obj{"name": "Alice"}})
	bob.call("profiles_get", obj{"ids": []any{alice.id}})
	prof := readJSON(t, bob, profURI)
	if get(prof, "profile", "name") != "Alice" || prof["agent_id"] != alice.id || get(prof, "envelope", "hash") != prof["event_id"] {
		t.Fatalf("profile resource: %v", prof)
	}
	if enc := readJSON(t, bob, "agent-protocols://profiles/"+strings.ReplaceAll(alice.id, ":", "%3A")); enc["event_id"] != prof["event_id"] {
		t.Fatalf("the percent-encoded URI: %v", enc)
	}
	if _, err := bob.cs.ReadResource(bg, &mcp.ReadResourceParams{URI: "agent-protocols://profiles/not-an-id"}); err == nil {
		t.Fatal("a malformed profile URI was read")
	}
}

func readJSON(t *testing.T, a *tagent, uri string) obj {
	t.Helper()
	res, err := a.cs.ReadResource(bg, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	var m obj
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// A resource needs what its tool needs: with the hub's grants withdrawn, a
// room held locally, its archive and a profile pinned from the hub are
// refused with permission_denied, and nothing reaches the hub.
func TestResourcesNeedTheirToolsGrants(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	home := t.TempDir()
	alice := newAgent(t, h, "alice", 0xA1, agentOptions{home: home})
	now := time.Now().UnixMilli()
	roomID := alice.call("room_create", obj{"host": h.Origin(), "topic": "Grants", "visibility": "public",
		"start_time": now - 1000, "end_time": now + 3600_000})["room"].(map[string]any)["room_id"].(string)
	alice.call("room_archive", obj{"room_id": roomID, "include_records": false})
	alice.call("profile_update", obj{"profile_service": h.Origin(), "profile": obj{"name": "Alice"}})
	alice.call("profiles_get", obj{"profile_service": h.Origin()})
	alice.conn.Close()

	none := []string{}
	again := newAgent(t, h, "alice", 0xA1, agentOptions{home: home, grants: &none})
	before := again.requests.Load()
	for _, uri := range []string{"agent-protocols://rooms/" + roomID, "agent-protocols://rooms/" + roomID + "/timeline",
		"agent-protocols://rooms/" + roomID + "/archive", "agent-protocols://profiles/" + alice.id} {
		_, err := again.cs.ReadResource(bg, &mcp.ReadResourceParams{URI: uri})
		if err == nil || !strings.Contains(err.Error(), "permission_denied") {
			t.Errorf("%s: %v, want permission_denied", uri, err)
		}
	}
	if rooms := readJSON(t, again, "agent-protocols://rooms"); len(rooms["rooms"].([]any)) != 0 {
		t.Errorf("rooms of a host without discourse.read listed: %v", rooms)
	}
	if n := again.requests.Load() - before; n != 0 {
		t.Errorf("%d requests reached the hub", n)
	}
}
