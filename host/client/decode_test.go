package client

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"apconnect/host/identity"
	"apconnect/host/proto/adp"
)

// Malformed host data, served by an httptest TLS fake: the real hub never
// sends it, and the client must refuse it rather than pass it on.

func TestEventsRefusesBadPages(t *testing.T) {
	recs := chain(t, "https://example.invalid", 3)
	tampered := recs[2].Value()
	tampered["accepted_at"] = int64(5)
	otherRoom := recs[1].Value()
	otherRoom["room_id"] = "room0002"
	cases := []struct {
		name string
		body any
		q    EventsQuery
		code string
	}{
		{"record hash", map[string]any{"result": []any{recs[1].Value(), tampered}}, EventsQuery{AfterSeq: 1}, adp.CodeInvalidRecord},
		{"other room", map[string]any{"result": []any{otherRoom}}, EventsQuery{AfterSeq: 1}, ""},
		{"descending", map[string]any{"result": []any{recs[2].Value(), recs[1].Value()}}, EventsQuery{AfterSeq: 1}, ""},
		{"duplicate", map[string]any{"result": []any{recs[1].Value(), recs[1].Value()}}, EventsQuery{AfterSeq: 1}, ""},
		{"not after after_seq", map[string]any{"result": []any{recs[1].Value()}}, EventsQuery{AfterSeq: 2}, ""},
		{"over limit", map[string]any{"result": []any{recs[1].Value(), recs[2].Value()}}, EventsQuery{AfterSeq: 1, Limit: 1}, ""},
		{"no result", map[string]any{"records": []any{}}, EventsQuery{}, ""},
		{"empty cursor", map[string]any{"result": []any{}, "next_cursor": ""}, EventsQuery{}, ""},
		{"not an object", []any{}, EventsQuery{}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t)
			f.discovery(nil)
			f.handle("GET /v1/rooms/room0001/events", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, c.body) })
			_, err := f.host().Events(ctxT(t), fixtureRoom, c.q)
			var re *ResponseError
			if !errors.As(err, &re) {
				t.Fatalf("err %T %v", err, err)
			}
			if c.code != "" && adp.ErrorCode(err) != c.code {
				t.Fatalf("code %q, want %q (%v)", adp.ErrorCode(err), c.code, err)
			}
		})
	}
}

func TestEventsQueryAndPaging(t *testing.T) {
	f := newFake(t)
	f.discovery(nil)
	recs := chain(t, f.origin, 4)
	f.handle("GET /v1/rooms/room0001/events", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		switch q.Get("cursor") {
		case "":
			if q.Get("after_seq") != "1" || q.Get("limit") != "2" {
				t.Errorf("query %v", q)
			}
			writeJSON(w, 200, recordsList(recs[1:3], "page2"))
		case "page2":
			writeJSON(w, 200, recordsList(recs[3:5], ""))
		}
	})
	h := f.host()
	p1, err := h.Events(ctxT(t), fixtureRoom, EventsQuery{AfterSeq: 1, Limit: 2})
	if err != nil || len(p1.Items) != 2 || p1.NextCursor != "page2" {
		t.Fatalf("page 1 %+v %v", p1, err)
	}
	p2, err := h.Events(ctxT(t), fixtureRoom, EventsQuery{AfterSeq: 3, Limit: 2, Cursor: p1.NextCursor})
	if err != nil || len(p2.Items) != 2 || p2.Items[1].Seq != 5 || p2.NextCursor != "" {
		t.Fatalf("page 2 %+v %v", p2, err)
	}
	// records are passed on unverified but intact: they verify, and page
	// 1's still equal what was served after page 2 was read into the
	// buffer page 1 was read into
	for _, r := range append(p1.Items, p2.Items...) {
		if err := r.Envelope.Verify(); err != nil {
			t.Fatal(err)
		}
	}
	if h.svc.pageBuf.Load() == nil {
		t.Fatal("the page buffer was not kept")
	}
	for i, r := range append(p1.Items, p2.Items...) {
		got, _ := r.MarshalJSON()
		want, _ := recs[1+i].MarshalJSON()
		if string(got) != string(want) {
			t.Fatalf("record %d:\n%s\nwant\n%s", r.Seq, got, want)
		}
	}
	if _, err := h.Events(ctxT(t), fixtureRoom, EventsQuery{AfterSeq: -1}); err == nil {
		t.Fatal("negative after_seq sent")
	}
}

func TestRoomResourceDecoding(t *testing.T) {
	recs := chain(t, "https://example.invalid", 1)
	alice := testSigner("alice").AgentID()
	good := map[string]any{
		"id": "room0001", "status": "active", "url": "https://example.invalid/v1/rooms/room0001", "creator": alice,
		"created_at": fixtureT0, "topic": "t", "visibility": "public", "start_time": 1, "end_time": 2,
		"tags": []string{"a"}, "policy": map[string]any{"open_roles": []string{"speaker"}, "max_speakers": 9007199254740991},
		"types": []any{map[string]any{"type": "x.y", "kind": "signal", "schema": map[string]any{"type": "object"}}},
		"seq":   2, "pre_hash": recs[0].Hash, "hash": recs[1].Hash, "accepted_at": recs[1].AcceptedAt,
		"head": map[string]any{"seq": 2, "hash": recs[1].Hash}, "vendor_extension": map[string]any{"k": "v"},
	}
	bodies := map[string]map[string]any{"good": good}
	mut := func(k string, v any) map[string]any {
		m := map[string]any{}
		for kk, vv := range good {
			m[kk] = vv
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	bodies["other room"] = mut("id", "room0002")
	bodies["bad id"] = mut("id", "../../x")
	bodies["bad hash"] = mut("hash", "abc")
	bodies["bad head"] = mut("head", map[string]any{"seq": 3, "hash": recs[1].Hash})
	bodies["seq fraction"] = mut("seq", 1.5)
	bodies["bad creator"] = mut("creator", "did:agent:x")
	bodies["topic not string"] = mut("topic", 5)
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			f := newFake(t)
			f.discovery(nil)
			f.handle("GET /v1/rooms/room0001", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, body) })
			room, err := f.host().Room(ctxT(t), fixtureRoom)
			if name == "good" {
				if err != nil {
					t.Fatal(err)
				}
				if room.Head.Seq != 2 || room.Seq != 2 || room.Creator != alice || room.Visibility != adp.VisibilityPublic ||
					room.Raw["vendor_extension"] == nil || len(room.Types) != 1 || fmt.Sprint(room.Policy["max_speakers"]) != "9007199254740991" {
					t.Fatalf("room %+v", room)
				}
				return
			}
			var re *ResponseError
			if !errors.As(err, &re) {
				t.Fatalf("err %T %v", err, err)
			}
		})
	}
}

func TestJoinRequestDecoding(t *testing.T) {
	f := newFake(t)
	f.discovery(nil)
	bob := testSigner("bob")
	room := fixtureRoom
	req := signEv(t, bob, identity.Event{Type: adp.TypeJoinRequest, CreatedAt: fixtureT0, Nonce: fixtureT0,
		Payload: jsonValue(t, map[string]any{"role": "speaker", "reason": "hi"}), Fields: adp.Fields{RoomID: room}.Map()})
	resource := func(edit func(m map[string]any)) map[string]any {
		m := map[string]any{"id": req.Hash, "request": req.Value(), "status": "pending", "expires_at": fixtureT0 + 1000,
			"reviewed_by": nil, "reviewed_at": nil, "review_event_id": nil}
		if edit != nil {
			edit(m)
		}
		return m
	}
	var served map[string]any
	f.handle("POST /v1/rooms/room0001/join-requests", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			t.Error("join request submission sent a JWT")
		}
		w.Header().Set("Max-Seen-Nonce", itoa64(fixtureT0))
		writeJSON(w, 201, served)
	})
	f.handle("GET /v1/rooms/room0001/join-requests/{id}", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, served) })
	f.handle("GET /v1/rooms/room0001/join-requests", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("status") != "pending" || r.Header.Get("Authorization") == "" {
			t.Errorf("query %v", r.URL.Query())
		}
		writeJSON(w, 200, map[string]any{"result": []any{served}})
	})
	h := f.host()
	ctx := ctxT(t)
	served = resource(nil)
	res, err := h.SubmitJoinRequest(ctx, fixtureRoom, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.JoinRequest.ID != req.Hash || res.JoinRequest.Status != adp.JoinPending || res.MaxSeenNonce != itoa64(fixtureT0) ||
		res.JoinRequest.Request.Hash != req.Hash || res.JoinRequest.ReviewedBy != "" {
		t.Fatalf("result %+v", res.JoinRequest)
	}
	if err := res.JoinRequest.Request.Verify(); err != nil {
		t.Fatal(err)
	}
	jr, err := h.JoinRequest(ctx, fixtureRoom, req.Hash)
	if err != nil || jr.ID != req.Hash {
		t.Fatalf("get %+v %v", jr, err)
	}
	page, err := h.JoinRequests(ctx, fixtureRoom, JoinRequestQuery{Status: "pending"})
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("list %+v %v", page, err)
	}
	alice := testSigner("alice").AgentID()
	served = resource(func(m map[string]any) {
		m["status"] = "approved"
		m["reviewed_by"] = alice
		m["reviewed_at"] = fixtureT0 + 5
		m["review_event_id"] = req.Hash
	})
	if jr, err := h.JoinRequest(ctx, fixtureRoom, req.Hash); err != nil || jr.ReviewedBy != alice || jr.ReviewedAt != fixtureT0+5 {
		t.Fatalf("reviewed %+v %v", jr, err)
	}
	for name, edit := range map[string]func(m map[string]any){
		"id mismatch":  func(m map[string]any) { m["id"] = strings.Repeat("A", 43) },
		"bad status":   func(m map[string]any) { m["status"] = "maybe" },
		"no expiry":    func(m map[string]any) { delete(m, "expires_at") },
		"not envelope": func(m map[string]any) { m["request"] = map[string]any{"hash": req.Hash} },
		"bad reviewer": func(m map[string]any) { m["reviewed_by"] = "someone" },
	} {
		t.Run(name, func(t *testing.T) {
			served = resource(edit)
			_, err := h.JoinRequest(ctx, fixtureRoom, req.Hash)
			var re *ResponseError
			if !errors.As(err, &re) {
				t.Fatalf("err %T %v", err, err)
			}
		})
	}
	if _, err := h.JoinRequest(ctx, fixtureRoom, "not-a-hash"); err == nil {
		t.Fatal("invalid request id accepted")
	}
	if _, err := h.SubmitJoinRequest(ctx, fixtureRoom, chain(t, f.origin, 1)[1].Envelope); err == nil {
		t.Fatal("SubmitJoinRequest took a message")
	}
}

func TestAgentStatusDecoding(t *testing.T) {
	f := newFake(t)
	f.discovery(nil)
	alice := testSigner("alice").AgentID()
	bob := testSigner("bob").AgentID()
	st := func(agent string) map[string]any {
		return map[string]any{"room_id": "room0001", "agent_id": agent, "state": "working", "seen_seq": 3,
			"expires_at": fixtureT0 + 300_000, "updated_at": fixtureT0, "extra": map[string]any{"x": 1}}
	}
	f.handle("GET /v1/rooms/room0001/agent-status", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("cursor") == "" {
			writeJSON(w, 200, map[string]any{"result": []any{st(alice)}, "next_cursor": "more"})
			return
		}
		writeJSON(w, 200, map[string]any{"result": []any{st(bob)}})
	})
	f.handle("GET /v1/rooms/room0001/agent-status/{agent}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("agent") == bob {
			writeError(w, 404, "agent_status_not_found", "none", nil)
			return
		}
		writeJSON(w, 200, st(alice))
	})
	f.handle("PUT /v1/rooms/room0001/agent-status", func(w http.ResponseWriter, r *http.Request) {
		body := string(mustRead(r.Body))
		if r.Header.Get("Authorization") == "" || !strings.Contains(body, `"state":"working"`) || strings.Contains(body, "summary") {
			t.Errorf("PUT body %s", body)
		}
		writeJSON(w, 200, st(alice))
	})
	h := f.host()
	ctx := ctxT(t)
	all, err := h.AgentStatuses(ctx, fixtureRoom)
	if err != nil || len(all) != 2 || all[1].AgentID != bob || all[0].SeenSeq != 3 {
		t.Fatalf("list %+v %v", all, err)
	}
	one, err := h.AgentStatus(ctx, fixtureRoom, alice)
	if err != nil || one.State != "working" || one.Extra["x"] == nil {
		t.Fatalf("get %+v %v", one, err)
	}
	if _, err := h.AgentStatus(ctx, fixtureRoom, bob); ErrorCode(err) != adp.CodeAgentStatusNotFound {
		t.Fatalf("missing status: %v", err)
	}
	put, err := h.PutAgentStatus(ctx, fixtureRoom, AgentStatusInput{State: "working", SeenSeq: 3})
	if err != nil || put.AgentID != alice {
		t.Fatalf("put %+v %v", put, err)
	}
	if _, err := h.PutAgentStatus(ctx, fixtureRoom, AgentStatusInput{}); err == nil {
		t.Fatal("empty state sent")
	}
	if _, err := h.AgentStatus(ctx, fixtureRoom, "did:agent:x"); err == nil {
		t.Fatal("invalid agent id accepted")
	}
	f.handle("GET /v1/rooms/room0002/agent-status", func(w http.ResponseWriter, r *http.Request) {
		a, b := st(alice), st(alice)
		a["room_id"], b["room_id"] = "room0002", "room0002"
		writeJSON(w, 200, map[string]any{"result": []any{a, b}})
	})
	var re *ResponseError
	if _, err := h.AgentStatuses(ctx, "room0002"); !errors.As(err, &re) {
		t.Fatalf("duplicate statuses: %v", err)
	}
}
