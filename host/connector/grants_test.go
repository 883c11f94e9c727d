package connector_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"apconnect/host/capability"
	"apconnect/host/connector/discourse"
	"apconnect/host/connector/internal/connectortest"
	"apconnect/host/engine"
	"apconnect/host/store"
	"apconnect/host/toolcatalog"
)

var ctx = context.Background()

// args are schema-valid arguments of every tool that needs a grant and
// names its origin in its input ({origin} stands for the hub), or reaches
// a room known locally.
var args = map[string]string{
	"rooms_search":        `{"host":"{origin}"}`,
	"rooms_list":          `{"host":"{origin}","scope":"mine"}`,
	"room_open":           `{"host":"{origin}","room_id":"{room}"}`,
	"room_state":          `{"host":"{origin}","room_id":"{room}","refresh":true}`,
	"room_timeline":       `{"host":"{origin}","room_id":"{room}","refresh":true}`,
	"room_members_list":   `{"host":"{origin}","room_id":"{room}"}`,
	"room_member_get":     `{"host":"{origin}","room_id":"{room}","agent_id":"{agent}"}`,
	"room_mark_read":      `{"host":"{origin}","room_id":"{room}","through_seq":1}`,
	"room_archive":        `{"host":"{origin}","room_id":"{room}"}`,
	"room_watch":          `{"host":"{origin}","room_id":"{room}","types":["poll.create"]}`,
	"agent_status_list":   `{"host":"{origin}","room_id":"{room}","refresh":true}`,
	"agent_status_get":    `{"host":"{origin}","room_id":"{room}","agent_id":"{agent}"}`,
	"agent_status_set":    `{"host":"{origin}","room_id":"{room}","state":"drafting"}`,
	"room_create":         `{"host":"{origin}","topic":"t","visibility":"public","start_time":1,"end_time":4102444800000}`,
	"room_join":           `{"host":"{origin}","room_id":"{room}","role":"speaker"}`,
	"room_leave":          `{"host":"{origin}","room_id":"{room}"}`,
	"room_send_message":   `{"host":"{origin}","room_id":"{room}","content":"hi"}`,
	"room_submit_event":   `{"host":"{origin}","room_id":"{room}","type":"room.update","payload":{"agenda":"x"}}`,
	"join_requests_list":  `{"host":"{origin}","room_id":"{room}"}`,
	"join_request_review": `{"host":"{origin}","room_id":"{room}","request_id":"{hash}","decision":"approve","role":"speaker"}`,
	"profiles_get":        `{"profile_service":"{origin}"}`,
	"profile_history":     `{"profile_service":"{origin}"}`,
	"profile_update":      `{"profile_service":"{origin}","profile":{"name":"x"}}`,
	"principal_resolve":   `{"url":"{origin}/principals/acme"}`,
	"delegation_check":    `{"principal_id":"{origin}/principals/acme","audience":"{origin}"}`,
	"delegations_list":    `{"delegation_service":"{origin}"}`,
	"delegation_grant":    `{"id":"d","principal_id":"{origin}/principals/acme","subject":"{agent}","scopes":["review"],"audiences":["{origin}"]}`,
	"delegation_revoke":   `{"id":"d","principal_id":"{origin}/principals/acme"}`,
	"delegation_history":  `{"principal_id":"{origin}/principals/acme","id":"d"}`,
	// Agent Mail: the origin is a route, an address's relay, or (for local
	// reads) the only configured origin.
	"mail_mailboxes_list":  `{"host":"{origin}"}`,
	"mail_mailbox_publish": `{"routes":["{origin}"]}`,
	"mail_send":            `{"to":"{agent}/mail/AAECAwQFBgcICQoLDA0ODw?route={origin}","text":"hi"}`,
	"mail_sync":            `{}`,
	"mail_list":            `{}`,
	"mail_resolve":         `{"agent_id":"{agent}","card_url":"{origin}/v1/mailboxes/AAECAwQFBgcICQoLDA0ODw/card"}`,
	"knowledge_submit":     `{"services":["{origin}"],"type":"knowledge.retract","payload":{"target":"{hash}","reason":"x"}}`,
	"knowledge_query":      `{"service":"{origin}"}`,
	"knowledge_get":        `{"service":"{origin}","ids":["{hash}"]}`,
	"knowledge_search":     `{"service":"{origin}","text":"x","mode":"lexical"}`,
	"knowledge_status":     `{"service":"{origin}","id":"{hash}"}`,
}

// Every tool that needs a grant is refused, with the grant withdrawn,
// before anything reaches the host and before a nonce is used: by the MCP
// layer's preflight when its input names the origin, and by the module
// itself when it is called directly. draft_commit, whose origin is its
// draft's room, is refused by the module.
func TestEveryToolIsRefusedWithoutItsGrant(t *testing.T) {
	t.Parallel()
	h := connectortest.StartHub(t)
	p := connectortest.NewProxy(t, h)
	env := connectortest.NewAgent(t, h, 0xA1, "")
	room, draft := roomWithHeldDraft(t, env, p)
	env.Cfg.Hosts[0].Grants = []string{}
	c := env.Open(connectortest.WithHTTP(p.Client))
	before := p.Requests.Load()
	nonce, _ := c.Store().Read().LastNonce(ctx)
	origin := h.Origin()

	tools := map[string]engine.Tool{}
	for _, tool := range c.StandardTools() {
		tools[tool.Name] = tool
	}
	checked := 0
	for _, name := range toolcatalog.Names() {
		info, _ := toolcatalog.Info(name)
		if !info.Capability.Valid() {
			continue
		}
		short := strings.TrimPrefix(name, "agent_protocols_")
		in := args[short]
		if short == "draft_commit" {
			in = `{"draft_id":"` + draft + `","action":"send_as_is"}`
		}
		if in == "" {
			t.Errorf("%s needs a grant and has no test arguments", name)
			continue
		}
		in = strings.NewReplacer("{origin}", origin, "{room}", room, "{agent}", env.ID, "{hash}", strings.Repeat("A", 43)).Replace(in)
		if s, _ := toolcatalog.InputSchema(name); s.ValidateJSON(json.RawMessage(in)) != nil {
			t.Fatalf("%s: test arguments %s do not match the input schema", name, in)
		}
		if info.OriginInput != "" {
			wantDenied(t, name+" (preflight)", c.Preflight(name, json.RawMessage(in)), info.Capability, origin)
		}
		_, _, err := tools[name].Call(ctx, "s1", json.RawMessage(in))
		wantDenied(t, name, err, info.Capability, origin)
		checked++
	}
	if want := len(args) + 1; checked != want {
		t.Errorf("checked %d tools, want %d", checked, want)
	}
	if n := p.Requests.Load() - before; n != 0 {
		t.Errorf("%d requests reached the host", n)
	}
	if after, _ := c.Store().Read().LastNonce(ctx); after != nonce {
		t.Errorf("nonce moved from %d to %d", nonce, after)
	}
}

// wantDenied checks a permission_denied refusal naming the capability and
// origin.
func wantDenied(t *testing.T, what string, err error, c capability.Capability, origin string) {
	t.Helper()
	var e *engine.Error
	if !errors.As(err, &e) || e.Code != engine.CodePermissionDenied {
		t.Errorf("%s: %v, want permission_denied", what, err)
		return
	}
	// A write needs its write grant; its read is implied by it, so a
	// refused write may be refused for the read it needs first.
	got, _ := e.Data["capability"].(string)
	if got != c.String() && got != c.Protocol().Read().String() || e.Data["origin"] != origin {
		t.Errorf("%s: data %v, want capability %s, origin %s", what, e.Data, c, origin)
	}
}

// roomWithHeldDraft makes, with every grant, a room the agent follows live,
// a held draft in it and a signed message whose outcome stays unknown (its
// outbox entry pending), and closes the connector. It returns the room and
// the draft.
func roomWithHeldDraft(t *testing.T, env *connectortest.Agent, p *connectortest.Proxy) (room, draft string) {
	t.Helper()
	c := env.Open(connectortest.WithHTTP(p.Client))
	d := c.Discourse()
	now := time.Now().UnixMilli()
	created := connectortest.Must[*discourse.RoomCreateResult](t, "agent_protocols_room_create")(d.RoomCreate(ctx, "s1",
		discourse.RoomCreateInput{Host: env.Cfg.Hosts[0].URL, Topic: "Grants", Visibility: "public", StartTime: now - 1000, EndTime: now + 3600_000}))
	room = created.Room.RoomID
	genesis := created.Sync
	connectortest.Must[*discourse.RoomOpenResult](t, "agent_protocols_room_open")(d.RoomOpen(ctx, "s1",
		discourse.RoomOpenInput{Host: genesis.Host, RoomID: room, Subscribe: engine.Ptr(true)}))
	connectortest.Must[*discourse.WriteResult](t, "agent_protocols_room_submit_event")(d.RoomSubmitEvent(ctx, "s1",
		discourse.RoomSubmitEventInput{RoomID: room, Type: "room.update", Payload: map[string]any{"agenda": "moved"}}))
	held := connectortest.Must[*discourse.WriteResult](t, "agent_protocols_room_send_message")(d.RoomSendMessage(ctx, "s1",
		discourse.RoomSendMessageInput{RoomID: room, Content: "late", BaseSeq: engine.Ptr(genesis.HeadSeq), BaseHash: engine.Ptr(genesis.HeadHash)}))
	if held.Status != discourse.StatusHeld || held.Draft == nil {
		t.Fatalf("not held: %+v", held)
	}
	p.BlackholePosts.Store(true)
	if _, err := d.RoomSendMessage(ctx, "s1", discourse.RoomSendMessageInput{RoomID: room, Content: "lost"}); connectortest.Code(err) != engine.CodeSubmissionPending {
		t.Fatalf("want a pending submission, got %v", err)
	}
	p.BlackholePosts.Store(false)
	c.Close()
	return room, held.Draft.ID
}

// With the grants withdrawn in the config, a restarted connector with a
// live room, a held draft and a pending outbox entry on that origin sends
// nothing there in the background and uses no nonce; the outbox entry stays
// pending with the refusal as its error, and the room's sync state lists
// what is refused.
func TestWithdrawnGrantStopsBackgroundWork(t *testing.T) {
	t.Parallel()
	h := connectortest.StartHub(t)
	p := connectortest.NewProxy(t, h)
	env := connectortest.NewAgent(t, h, 0xA2, "")
	room, _ := roomWithHeldDraft(t, env, p)
	env.Cfg.Hosts[0].Grants = []string{"agent.profile.read"}
	c := env.Open(connectortest.WithHTTP(p.Client))
	before := p.Requests.Load()
	nonce, _ := c.Store().Read().LastNonce(ctx)
	c.Start(ctx)
	var pending []*store.OutboxEntry
	connectortest.Eventually(t, 5*time.Second, "the outbox entry refused", func() bool {
		pending, _ = c.Store().Read().OutboxEntries(ctx, store.OutboxPending)
		return len(pending) == 1 && strings.Contains(pending[0].Error, "permission_denied")
	})
	time.Sleep(1500 * time.Millisecond) // a live reconcile and a join poll
	if n := p.Requests.Load() - before; n != 0 {
		t.Errorf("%d requests reached the host", n)
	}
	if after, _ := c.Store().Read().LastNonce(ctx); after != nonce {
		t.Errorf("nonce moved from %d to %d", nonce, after)
	}
	if streams, polled := c.Discourse().Following(); streams+polled != 0 {
		t.Errorf("following %d rooms live and polling %d", streams, polled)
	}
	// Restored, everything resumes: the room is followed again and the
	// entry is resolved.
	env.Cfg.Hosts[0].Grants = nil
	c.Close()
	c = env.Open(connectortest.WithHTTP(p.Client))
	c.Start(ctx)
	st := connectortest.Must[*discourse.RoomStateResult](t, "agent_protocols_room_state")(c.Discourse().RoomState(ctx, "s1",
		discourse.RoomStateInput{RoomID: room}))
	if len(st.Sync.Refused) != 0 {
		t.Errorf("refused %v with every grant", st.Sync.Refused)
	}
	connectortest.Eventually(t, 10*time.Second, "the outbox entry resolved", func() bool {
		pending, _ = c.Store().Read().OutboxEntries(ctx, store.OutboxPending)
		return len(pending) == 0
	})
}

// A host granted only discourse.read shows discourse.write as refused in
// its rooms' sync state, and a write is refused without a nonce.
func TestReadOnlyHostRefusesWrites(t *testing.T) {
	t.Parallel()
	h := connectortest.StartHub(t)
	owner := connectortest.NewAgent(t, h, 0xB1, "").Open()
	now := time.Now().UnixMilli()
	created := connectortest.Must[*discourse.RoomCreateResult](t, "agent_protocols_room_create")(owner.Discourse().RoomCreate(ctx, "s1",
		discourse.RoomCreateInput{Host: h.Origin(), Topic: "Read only", Visibility: "public", StartTime: now - 1000, EndTime: now + 3600_000,
			Policy: map[string]any{"open_roles": []any{"speaker", "observer"}}}))
	env := connectortest.NewAgent(t, h, 0xB2, "")
	env.Cfg.Hosts[0].Grants = []string{"discourse.read"}
	c := env.Open()
	st := connectortest.Must[*discourse.RoomOpenResult](t, "agent_protocols_room_open")(c.Discourse().RoomOpen(ctx, "s1",
		discourse.RoomOpenInput{Host: h.Origin(), RoomID: created.Room.RoomID}))
	if len(st.Sync.Refused) != 1 || st.Sync.Refused[0] != "discourse.write" {
		t.Errorf("refused %v", st.Sync.Refused)
	}
	_, err := c.Discourse().RoomJoin(ctx, "s1", discourse.RoomJoinInput{Host: h.Origin(), RoomID: created.Room.RoomID, Role: "speaker"})
	wantDenied(t, "room_join", err, capability.DiscourseWrite, h.Origin())
	if n, _ := c.Store().Read().LastNonce(ctx); n != 0 {
		t.Errorf("nonce %d used", n)
	}
}
