package discourse_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"apconnect/host/client"
	"apconnect/host/config"
	"apconnect/host/connector"
	"apconnect/host/connector/discourse"
	"apconnect/host/connector/internal/connectortest"
	"apconnect/host/engine"
	"apconnect/host/hub/hubtest"
	"apconnect/host/identity"
	"apconnect/host/proto/adp"
	"apconnect/host/store"
)

// endlessHost is a hostile ADP host: a public room whose history never
// ends. Every record is validly signed by the room's creator and chained, so
// nothing fails verification; the host just always has another page. (The
// real hub cannot be made to do this, hence a small fake of our own.)
type endlessHost struct {
	t       *testing.T
	srv     *httptest.Server
	roomID  string
	creator *hubtest.Agent
	start   int64

	mu      sync.Mutex
	records []json.RawMessage // records[i] is seq i+1
	last    adp.Link
	genesis adp.Link
	room    *adp.Room
	served  int64 // highest seq served
}

func newEndlessHost(t *testing.T) *endlessHost {
	e := &endlessHost{t: t, roomID: "d8ftedhpqhsusbg001tg", creator: hubtest.NewAgent(0xE1), start: time.Now().UnixMilli() - 60_000}
	e.srv = httptest.NewTLSServer(http.HandlerFunc(e.serve))
	t.Cleanup(e.srv.Close)
	payload := map[string]any{"host": e.srv.URL, "topic": "Never ends", "visibility": "public",
		"start_time": e.start, "end_time": e.start + 24*3600_000}
	env := e.creator.Sign(t, identity.Event{Protocol: adp.Protocol, Type: adp.TypeRoomCreate, CreatedAt: e.start, Nonce: e.start, Payload: hubtest.JSONValue(t, payload)})
	rec, err := adp.NewRecord(e.roomID, adp.Link{}, e.start, env)
	if err != nil {
		t.Fatal(err)
	}
	if e.room, err = adp.NewRoom(nil, rec); err != nil {
		t.Fatal(err)
	}
	e.add(rec)
	e.genesis = rec.Link()
	return e
}

func (e *endlessHost) add(rec *adp.Record) {
	raw, err := json.Marshal(rec)
	if err != nil {
		e.t.Error(err)
	}
	e.records = append(e.records, raw)
	e.last = rec.Link()
}

// upTo makes sure records 1..seq exist (messages by the creator, each on
// the genesis record, which stays the head).
func (e *endlessHost) upTo(seq int64) {
	for int64(len(e.records)) < seq {
		n := int64(len(e.records)) + 1
		ev := identity.Event{Protocol: adp.Protocol, Type: adp.TypeMessageCreate, CreatedAt: e.start + n, Nonce: e.start + n,
			Payload: map[string]any{"content_type": "text/plain", "content": "again " + strconv.FormatInt(n, 10)}, Fields: adp.Fields{RoomID: e.roomID, Base: &adp.Link{Seq: e.genesis.Seq, Hash: e.genesis.Hash}}.Map()}
		env := e.creator.Sign(e.t, ev)
		rec, err := adp.NewRecord(e.roomID, e.last, e.start+n, env)
		if err != nil {
			e.t.Error(err)
			return
		}
		e.add(rec)
	}
}

func (e *endlessHost) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	room := "/v1/rooms/" + e.roomID
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case r.URL.Path == "/.well-known/agent-discourse":
		json.NewEncoder(w).Encode(map[string]any{"protocol": "agent-discourse/1.0", "service": e.srv.URL,
			"endpoints": map[string]any{"rooms": e.srv.URL + "/v1/rooms"}})
	case r.URL.Path == room:
		res := e.room.Resource(time.Now().UnixMilli(), e.srv.URL+room)
		res["seq"], res["hash"] = e.last.Seq+1_000_000, e.last.Hash // "much more to come"
		json.NewEncoder(w).Encode(res)
	case r.URL.Path == room+"/events":
		after, _ := strconv.ParseInt(r.URL.Query().Get("after_seq"), 10, 64)
		limit, _ := strconv.ParseInt(r.URL.Query().Get("limit"), 10, 64)
		if limit <= 0 || limit > 1000 {
			limit = 1000
		}
		e.upTo(after + limit)
		e.served = max(e.served, after+limit)
		page := e.records[after : after+limit]
		fmt.Fprintf(w, `{"result":[%s],"next_cursor":"c%d"}`, joinRaw(page), after+limit)
	default:
		http.Error(w, `{"error":{"code":"not_found","message":"no"}}`, http.StatusNotFound)
	}
}

func joinRaw(rs []json.RawMessage) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = string(r)
	}
	return strings.Join(parts, ",")
}

// agentFor connects an agent to the endless host.
func (e *endlessHost) agentFor(t *testing.T, o connector.Options) *connector.Connector {
	home := t.TempDir()
	ca := filepath.Join(home, "endless-ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: e.srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Default(home, config.DefaultOptions{HostURL: e.srv.URL, HostCAFile: ca})
	if err != nil {
		t.Fatal(err)
	}
	o.Config, o.Signer = cfg, hubtest.NewAgent(0xB0).Signer
	c, err := connector.New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// A host serving an endless, validly signed history cannot hold room_open:
// the sync stops at its per-call bound of records (or of time), answers with
// what it verified and catching_up, and goes on in the background until the
// connector closes.
func TestEndlessHistoryIsBoundedPerCall(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts connector.Options
	}{
		{"records", connector.Options{HistoryPage: 50, SyncRecordsPerCall: 200, SyncTimePerCall: time.Hour}},
		{"time", connector.Options{HistoryPage: 50, SyncRecordsPerCall: 1 << 30, SyncTimePerCall: 50 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEndlessHost(t)
			c := e.agentFor(t, tc.opts)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			open, err := c.Discourse().RoomOpen(ctx, "s", discourse.RoomOpenInput{Host: e.srv.URL, RoomID: e.roomID})
			if err != nil {
				t.Fatalf("room_open did not return within its bound: %v", err)
			}
			s := open.Sync
			if !s.CatchingUp || s.SyncedSeq < 2 || s.SyncedSeq >= s.RemoteSeq || s.Verification != nil {
				t.Fatalf("sync %+v: want a partial, clean, catching-up sync", s)
			}
			if tc.name == "records" && s.SyncedSeq > 200+50 {
				t.Fatalf("verified %d records in one call, bound 200", s.SyncedSeq)
			}
			// It goes on in the background.
			eventually(t, 20*time.Second, "background catch-up", func() bool {
				st, err := c.Discourse().RoomState(ctx, "s", discourse.RoomStateInput{RoomID: e.roomID})
				return err == nil && st.Sync.SyncedSeq > s.SyncedSeq+100 && st.Sync.CatchingUp
			})
			// Close stops it (and returns).
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			e.mu.Lock()
			stopped := e.served
			e.mu.Unlock()
			time.Sleep(200 * time.Millisecond)
			e.mu.Lock()
			defer e.mu.Unlock()
			if e.served != stopped {
				t.Fatalf("history still read after Close: %d -> %d", stopped, e.served)
			}
		})
	}
}

// gate holds the first caller of hold until release is closed.
type gate struct {
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func newGate() *gate { return &gate{entered: make(chan struct{}), release: make(chan struct{})} }

// hold blocks the first caller until release is closed.
func (g *gate) hold() {
	first := false
	g.once.Do(func() { first = true })
	if !first {
		return
	}
	close(g.entered)
	<-g.release
}

// A slow host does not stall the agent's writes to another host: each
// service has its own submission lock. And a write waiting for a room's lock
// gives up when its context ends.
func TestSlowHostDoesNotStallOtherWrites(t *testing.T) {
	t.Parallel()
	slowHub, fastHub := startHub(t), startHub(t)
	alice := newAgent(t, slowHub, 0xA1, "")
	slowRoom := createRoom(t, alice, slowHub, "public", nil)
	// A second connector of the same Agent ID on both hubs, whose writes to
	// the slow hub go through a proxy that holds a POST.
	home := t.TempDir()
	cfg, err := config.Default(home, config.DefaultOptions{HostURL: slowHub.Origin(), HostCAFile: slowHub.CAFile()})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Hosts = append(cfg.Hosts, config.Host{URL: fastHub.Origin(), Label: "fast", CAFile: fastHub.CAFile()})
	p := connectortest.NewProxy(t, slowHub)
	g := newGate()
	p.Lock()
	p.BeforePost = g.hold
	p.Unlock()
	c, err := connector.New(ctx, connector.Options{Config: cfg, Signer: alice.sig, WriteLimits: &adp.Limits{},
		HTTPClient: func(origin string, roots *x509.CertPool) (*http.Client, error) {
			if origin == slowHub.Origin() {
				return p.Client(origin, roots)
			}
			return client.NewHTTPClient(roots, 0), nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	now := time.Now().UnixMilli()
	fast := must[*discourse.RoomCreateResult](t, "agent_protocols_room_create")(c.Discourse().RoomCreate(ctx, "s", discourse.RoomCreateInput{
		Host: fastHub.Origin(), Topic: "Fast", Visibility: "public", StartTime: now - 1000, EndTime: now + 3600_000}))
	must[*discourse.RoomOpenResult](t, "agent_protocols_room_open")(c.Discourse().RoomOpen(ctx, "s", discourse.RoomOpenInput{Host: slowHub.Origin(), RoomID: slowRoom}))

	slowDone := make(chan error, 1)
	go func() {
		_, err := c.Discourse().RoomSendMessage(ctx, "s", discourse.RoomSendMessageInput{RoomID: slowRoom, Content: "to the slow host"})
		slowDone <- err
	}()
	<-g.entered // the slow host holds that write's POST
	// (With one lock for every service this write would wait for the slow
	// host forever; the deadline only turns that into a failure.)
	fctx, fcancel := context.WithTimeout(ctx, 20*time.Second)
	defer fcancel()
	res, err := c.Discourse().RoomSendMessage(fctx, "s", discourse.RoomSendMessageInput{RoomID: fast.Room.RoomID, Content: "to the fast host"})
	if err != nil || res.Status != discourse.StatusSent {
		t.Fatalf("the write to the fast host: %v %+v", err, res)
	}
	select {
	case err := <-slowDone:
		t.Fatalf("the slow write finished before its host answered: %v", err)
	default:
	}
	// Another write to the slow room waits for the room; its context ends.
	wctx, cancel := context.WithCancel(ctx)
	waited := make(chan error, 1)
	go func() {
		_, err := c.Discourse().RoomSendMessage(wctx, "s", discourse.RoomSendMessageInput{RoomID: slowRoom, Content: "behind the first"})
		waited <- err
	}()
	cancel()
	select {
	case err := <-waited:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("a cancelled wait for the room's lock: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a write waiting for a busy room ignored its cancelled context")
	}
	close(g.release)
	if err := <-slowDone; err != nil {
		t.Fatalf("the slow write: %v", err)
	}
}

// An outbox entry whose tool call was cancelled mid-submission is released
// (not left leased for a minute): the bookkeeping write runs detached from
// the cancelled context.
func TestCancelledSubmissionReleasesItsOutboxEntry(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	p := connectortest.NewProxy(t, h)
	alice := newAgent(t, h, 0xA1, "", withHTTP(p.Client))
	roomID := createRoom(t, alice, h, "public", nil)
	g := newGate()
	p.Lock()
	p.BeforePost = g.hold
	p.Unlock()
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := alice.RoomSendMessage(wctx, alice.sess, discourse.RoomSendMessageInput{RoomID: roomID, Content: "cancelled"})
		done <- err
	}()
	<-g.entered
	cancel()
	err := <-done
	close(g.release)
	if code(err) != engine.CodeSubmissionPending {
		t.Fatalf("want submission_pending, got %v", err)
	}
	pending, err2 := alice.Store.Read().OutboxEntries(ctx, store.OutboxPending)
	if err2 != nil {
		t.Fatal(err2)
	}
	if len(pending) != 1 || pending[0].LeaseUntil > time.Now().UnixMilli() {
		t.Fatalf("the entry is not released for resubmission: %+v", pending)
	}
}
