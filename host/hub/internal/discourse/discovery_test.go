package discourse_test

import (
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"testing"
	"time"

	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	"apconnect/host/identity"
	"apconnect/host/proto/adp"
)

// TestDiscoveryDocument: /.well-known/agent-discourse (ADP 15.1) is the
// kernel's discoveryDocument with truthful features.
func TestDiscoveryDocument(t *testing.T) {
	t.Parallel()
	f := newFx(t)
	r := f.h.Get(t, "/.well-known/agent-discourse", nil)
	wantStatus(t, r, 200)
	wantShape(t, "discoveryDocument", r.Body)
	d := decodeJSON(t, r.Body)
	features := []string{}
	for _, v := range d["features"].([]any) {
		features = append(features, v.(string))
	}
	want := []string{"rooms", "restricted-rooms", "private-rooms", "join-requests", "sse-event-stream", "agent-status",
		"archives", "redaction", "profiles", "registered-packs", "external-packs"}
	slices.Sort(features)
	slices.Sort(want)
	if !slices.Equal(features, want) {
		t.Fatalf("features %v", features)
	}
	packs := d["registered_packs"].([]any)
	if d["service"] != f.h.Origin() || len(packs) != 5 || packs[0] != "adp:reactions/1.0" {
		t.Fatalf("document %s", r.Body)
	}
	// D-06: the endpoints are rooms and my_rooms, as SDK 0.12.6 names them.
	ep := d["endpoints"].(map[string]any)
	if len(ep) != 2 || ep["rooms"] != f.h.Origin()+"/v1/rooms" || ep["my_rooms"] != f.h.Origin()+"/v1/me/rooms" {
		t.Fatalf("endpoints %v", ep)
	}
	// D-07: profile is the closed profileResolver {service, required?}.
	p := d["profile"].(map[string]any)
	if len(p) != 1 || p["service"] != f.h.Origin() {
		t.Fatalf("profile %v", p)
	}
	// The profile service it names answers.
	wantStatus(t, f.h.Get(t, "/.well-known/agent-profile", nil), 200)
	lim := d["limits"].(map[string]any)
	if lim["message_events_per_minute"] != float64(5) || lim["join_request_lifetime_ms"] != float64(24*3600_000) {
		t.Fatalf("published limits %v", lim)
	}

	g := newFx(t, hubtest.WithOptions(func(o *hub.Options) { o.NoExternalPacks = true }))
	d = decodeJSON(t, g.h.Get(t, "/.well-known/agent-discourse", nil).Body)
	if slices.Contains(d["features"].([]any), any("external-packs")) {
		t.Fatal("external-packs advertised without a pack fetcher")
	}
	wantError(t, g.h.Get(t, "/.well-known/agent-discourse?x=1", nil), 400, identity.CodeInvalidRequest)
}

// TestPublicDiscovery: ADP 17 — every filter, the recommended order, and
// private rooms never listed.
func TestPublicDiscovery(t *testing.T) {
	t.Parallel()
	f := newFx(t, withLimits(func(l *hub.Limits) { l.Discourse.Rules.ControlRate = 100 }))
	as := agents(170, 3)
	a, b := as[0], as[1]
	now := f.clock.Now().UnixMilli()
	hour := int64(3600_000)
	quiet := f.create(a, obj{"topic": "Quiet active room", "tags": arr{"general"}})
	busy := f.create(b, obj{"topic": "Busy active room", "agenda": "Quantum error correction", "language": "en", "tags": arr{"research"}})
	late := f.create(a, obj{"topic": "Later", "visibility": "restricted", "start_time": now + 2*hour, "end_time": now + 4*hour})
	soon := f.create(a, obj{"topic": "Soon", "start_time": now + hour, "end_time": now + 3*hour, "tags": arr{"research"}})
	f.create(a, obj{"topic": "Secret", "visibility": "private"})
	ended := f.create(a, obj{"topic": "Over"})
	f.must(a, ended, adp.TypeRoomClose, obj{})
	cancelled := f.create(a, obj{"topic": "Never", "start_time": now + hour, "end_time": now + 2*hour})
	f.must(a, cancelled, adp.TypeRoomCancel, obj{})
	f.clock.Advance(time.Second)
	wantStatus(t, f.message(b, busy, "activity"), 200)

	list := func(q string) []string {
		t.Helper()
		r := f.h.Get(t, "/v1/rooms?"+q, nil)
		wantStatus(t, r, 200)
		// The older path is an alias answering the same list.
		if alias := f.h.Get(t, "/v1/rooms/public?"+q, nil); alias.Status != 200 || string(alias.Body) != string(r.Body) {
			t.Fatalf("/v1/rooms/public?%s differs from /v1/rooms: %d %s", q, alias.Status, alias.Body)
		}
		var page struct {
			Result []map[string]any `json:"result"`
		}
		r.Decode(t, &page)
		out := []string{}
		for _, room := range page.Result {
			if room["head"] == nil || room["types"] == nil || room["url"] == nil {
				t.Fatalf("not a room resource: %v", room)
			}
			out = append(out, room["id"].(string))
		}
		return out
	}
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"", []string{busy, quiet, soon, late}},
		{"status=active", []string{busy, quiet}},
		{"status=scheduled", []string{soon, late}},
		{"status=ended", []string{ended}},
		{"status=cancelled", []string{cancelled}},
		{"tag=research", []string{busy, soon}},
		{"keyword=QUANTUM", []string{busy}},
		{"keyword=room", []string{busy, quiet}},
		{"keyword=" + url.QueryEscape("50%"), []string{}},
		{"creator=" + url.QueryEscape(b.ID), []string{busy}},
		{"starts_after=" + itoa(now), []string{soon, late}},
		{"ends_before=" + itoa(now+3*hour+1), []string{busy, quiet, soon}},
		{"ends_before=" + itoa(now+3*hour), []string{busy, quiet}},
		{"language=EN", []string{busy}},
		{"tag=research&status=scheduled", []string{soon}},
	} {
		if got := list(c.q); !slices.Equal(got, c.want) {
			t.Errorf("?%s = %v, want %v", c.q, got, c.want)
		}
	}
	// Pagination keeps the order and the filters.
	r := f.h.Get(t, "/v1/rooms?limit=3", nil)
	var page struct {
		Result []map[string]any `json:"result"`
		Next   string           `json:"next_cursor"`
	}
	r.Decode(t, &page)
	if len(page.Result) != 3 || page.Next == "" {
		t.Fatalf("first page %s", r.Body)
	}
	if got := list("limit=3&cursor=" + page.Next); !slices.Equal(got, []string{late}) {
		t.Fatalf("second page %v", got)
	}
	wantError(t, f.h.Get(t, "/v1/rooms?status=active&cursor="+page.Next, nil), 400, identity.CodeInvalidRequest)
	for _, bad := range []string{"status=open", "creator=bob", "starts_after=soon", "keyword=%20", "limit=-1", "sort=new"} {
		wantError(t, f.h.Get(t, "/v1/rooms?"+bad, nil), 400, identity.CodeInvalidRequest)
		wantError(t, f.h.Get(t, "/v1/rooms/public?"+bad, nil), 400, identity.CodeInvalidRequest)
	}
	// POST /v1/rooms is still room.create; other methods are refused.
	r = f.h.Do(http.MethodPut, "/v1/rooms", nil, nil)
	if r.Status != http.StatusMethodNotAllowed {
		t.Fatalf("PUT /v1/rooms: %d %s", r.Status, r.Body)
	}
}

// TestMeRooms: GET /v1/me/rooms lists every room related to the caller with
// its role and membership state, filtered by status and membership.
func TestMeRooms(t *testing.T) {
	t.Parallel()
	f := newFx(t, withLimits(func(l *hub.Limits) { l.Discourse.Rules.ControlRate = 100 }))
	as := agents(180, 3)
	me, other := as[0], as[1]
	now := f.clock.Now().UnixMilli()
	created := f.create(me, obj{"start_time": now + 3600_000, "end_time": now + 7200_000})
	member := f.create(other, nil)
	f.join(me, member, adp.RoleSpeaker)
	left := f.create(other, nil)
	f.join(me, left, adp.RoleObserver)
	f.must(me, left, adp.TypeRoomLeave, obj{})
	invited := f.create(other, obj{"visibility": "private", "policy": obj{"invites": obj{me.ID: "moderator"}}})
	pending := f.create(other, obj{"visibility": "restricted"})
	f.submitRequest(me, pending, adp.RoleSpeaker)
	rejected := f.create(other, obj{"visibility": "restricted"})
	j := f.submitRequest(me, rejected, adp.RoleSpeaker)
	wantStatus(t, f.review(other, rejected, j.Request, "reject", ""), 200)
	banned := f.create(other, nil)
	f.join(me, banned, adp.RoleSpeaker)
	f.must(other, banned, adp.TypeMemberRemove, obj{"member": me.ID, "ban": true})
	f.create(other, nil) // unrelated

	type summary struct {
		ID          string  `json:"id"`
		Status      string  `json:"status"`
		Role        *string `json:"role"`
		Membership  string  `json:"membership"`
		IsCreator   bool    `json:"is_creator"`
		JoinRequest *struct {
			Status string `json:"status"`
		} `json:"join_request"`
	}
	get := func(q string) map[string]summary {
		t.Helper()
		r := f.h.Get(t, "/v1/me/rooms?"+q, me)
		wantStatus(t, r, 200)
		var page struct{ Result []summary }
		r.Decode(t, &page)
		out := map[string]summary{}
		for _, s := range page.Result {
			out[s.ID] = s
		}
		return out
	}
	all := get("")
	role := func(s summary) string {
		if s.Role == nil {
			return ""
		}
		return *s.Role
	}
	for id, want := range map[string][2]string{
		created: {"active", "moderator"}, member: {"active", "speaker"}, left: {"left", ""}, invited: {"invited", "moderator"},
		pending: {"pending", ""}, rejected: {"rejected", ""}, banned: {"banned", ""},
	} {
		s, ok := all[id]
		if !ok || s.Membership != want[0] || role(s) != want[1] {
			t.Errorf("room %s: %+v (present %v), want membership %s role %q", id, s, ok, want[0], want[1])
		}
	}
	if len(all) != 7 || !all[created].IsCreator || all[created].Status != "scheduled" || all[pending].JoinRequest.Status != "pending" {
		t.Fatalf("all: %+v", all)
	}
	// D-05: every item is the full room resource (what GET /v1/rooms/{id}
	// returns) plus the agent's relation; role is omitted when there is
	// none (SDK 0.12.6 copies membership and role into its summary).
	var raw struct{ Result []map[string]any }
	f.h.Get(t, "/v1/me/rooms", me).Decode(t, &raw)
	for _, item := range raw.Result {
		id := item["id"].(string)
		for _, k := range []string{"id", "status", "url", "seq", "hash", "accepted_at", "head", "types", "policy", "membership", "is_creator"} {
			if _, ok := item[k]; !ok {
				t.Errorf("item %s lacks %q: %v", id, k, item)
			}
		}
		if r, ok := item["role"]; ok && r == nil {
			t.Errorf("item %s: role null, want it omitted", id)
		}
		res := decodeJSON(t, f.h.Get(t, "/v1/rooms/"+id, me).Body)
		for _, k := range []string{"membership", "role", "is_creator", "perspective", "join_request"} {
			delete(item, k)
		}
		if !reflect.DeepEqual(item, res) {
			t.Errorf("item %s is not the room resource:\n item %v\n room %v", id, item, res)
		}
	}
	for q, want := range map[string][]string{
		"membership=member":    {created, member},
		"membership=creator":   {created},
		"membership=moderator": {created},
		"membership=pending":   {pending},
		"membership=invited":   {invited},
		"membership=former":    {left, banned},
		"membership=left":      {left, banned},
		"status=scheduled":     {created},
	} {
		got := get(q)
		if len(got) != len(want) {
			t.Errorf("?%s: %d rooms, want %d", q, len(got), len(want))
		}
		for _, id := range want {
			if _, ok := got[id]; !ok {
				t.Errorf("?%s lacks %s", q, id)
			}
		}
	}
	// Pagination: newest first, three pages of 3, 3 and 1.
	seen := map[string]bool{}
	cursor := ""
	for pages := 0; ; pages++ {
		r := f.h.Get(t, "/v1/me/rooms?limit=3"+cursor, me)
		var page struct {
			Result []summary
			Next   string `json:"next_cursor"`
		}
		r.Decode(t, &page)
		for _, s := range page.Result {
			if seen[s.ID] {
				t.Fatalf("room %s listed twice", s.ID)
			}
			seen[s.ID] = true
		}
		if page.Next == "" {
			if pages != 2 || len(seen) != 7 {
				t.Fatalf("%d pages, %d rooms", pages+1, len(seen))
			}
			break
		}
		cursor = "&cursor=" + page.Next
	}
	wantError(t, f.h.Get(t, "/v1/me/rooms", nil), 401, identity.CodeInvalidToken)
	wantError(t, f.h.Get(t, "/v1/me/rooms?membership=owner", me), 400, identity.CodeInvalidRequest)
	if got := decodeJSON(t, f.h.Get(t, "/v1/me/rooms", other).Body)["result"].([]any); len(got) != 7 {
		t.Fatalf("the other agent relates to %d rooms, want 7", len(got))
	}
}

// TestReadVisibility: ADP 15 read access for public, restricted and
// private rooms, including an invited agent reading a private room's head.
func TestReadVisibility(t *testing.T) {
	t.Parallel()
	f := newFx(t)
	as := agents(190, 4)
	creator, member, invitee, stranger := as[0], as[1], as[2], as[3]
	pol := obj{"invites": obj{member.ID: "speaker", invitee.ID: "observer"}}
	rooms := map[string]string{}
	for _, v := range []string{"public", "restricted", "private"} {
		rooms[v] = f.create(creator, obj{"visibility": v, "policy": pol})
		f.join(member, rooms[v], adp.RoleSpeaker)
	}
	type want struct{ room, events int }
	for _, c := range []struct {
		vis    string
		reader *hubtest.Agent
		want   want
	}{
		{"public", nil, want{200, 200}},
		{"public", stranger, want{200, 200}},
		{"restricted", nil, want{200, 401}},
		{"restricted", stranger, want{200, 403}},
		{"restricted", invitee, want{200, 403}},
		{"restricted", member, want{200, 200}},
		{"restricted", creator, want{200, 200}},
		{"private", nil, want{404, 404}},
		{"private", stranger, want{404, 404}},
		{"private", invitee, want{200, 403}},
		{"private", member, want{200, 200}},
		{"private", creator, want{200, 200}},
	} {
		id := rooms[c.vis]
		name := c.vis + "/anonymous"
		if c.reader != nil {
			name = c.vis + "/" + c.reader.ID[10:18]
		}
		t.Run(name, func(t *testing.T) {
			codes := map[int]string{401: identity.CodeInvalidToken, 403: adp.CodeMembershipRequired, 404: adp.CodeRoomNotFound}
			r := f.h.Get(t, "/v1/rooms/"+id, c.reader)
			if c.want.room == 200 {
				wantStatus(t, r, 200)
				res := decodeJSON(t, r.Body)
				if res["head"] == nil || res["seq"] == nil {
					t.Fatalf("resource without head: %s", r.Body)
				}
			} else {
				wantError(t, r, c.want.room, codes[c.want.room])
			}
			for _, path := range []string{"/events", "/agent-status", "/archive", "/archive.jsonl", "/archive.md"} {
				r := f.h.Get(t, "/v1/rooms/"+id+path, c.reader)
				if c.want.events == 200 {
					wantStatus(t, r, 200)
				} else {
					wantError(t, r, c.want.events, codes[c.want.events])
				}
			}
			// An archived pack is read under the archive's permissions
			// (these rooms import none, so a permitted reader finds none).
			r = f.h.Get(t, "/v1/rooms/"+id+"/archive/packs/0", c.reader)
			if c.want.events == 200 {
				wantError(t, r, 404, identity.CodeNotFound)
			} else {
				wantError(t, r, c.want.events, codes[c.want.events])
			}
		})
	}
	t.Run("a bad token is refused even where none is needed", func(t *testing.T) {
		r := f.h.Do(http.MethodGet, "/v1/rooms/"+rooms["public"], nil, hubtest.Bearer("not-a-jwt"))
		wantError(t, r, 401, identity.CodeInvalidToken)
	})
	t.Run("the invitee anchors its join on the head it read", func(t *testing.T) {
		head, _ := f.h.RoomHead(t, rooms["private"], invitee)
		wantStatus(t, f.sendAt(invitee, rooms["private"], adp.TypeRoomJoin, obj{"role": "observer"}, head), 200)
		wantStatus(t, f.h.Get(t, "/v1/rooms/"+rooms["private"]+"/events", invitee), 200)
	})
}
