package mail_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"apconnect/host/client"
	"apconnect/host/config"
	"apconnect/host/connector"
	"apconnect/host/connector/internal/connectortest"
	"apconnect/host/connector/mail"
	"apconnect/host/store"
)

// isDelivery is a packet delivery request.
func isDelivery(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/packets")
}

// packetTap records the packet bodies of deliveries and, while fail is set,
// answers them itself as fail says.
type packetTap struct {
	mu     sync.Mutex
	bodies [][]byte
	fail   atomic.Value // "", "503", "429", "cut"
}

func (p *packetTap) intercept(w http.ResponseWriter, r *http.Request) bool {
	if !isDelivery(r) {
		return false
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	p.mu.Lock()
	p.bodies = append(p.bodies, body)
	p.mu.Unlock()
	switch mode, _ := p.fail.Load().(string); mode {
	case "503":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error":{"code":"unavailable","message":"relay restarting"}}`))
	case "429":
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"error":{"code":"rate_limited","message":"slow down"}}`))
	case "cut":
		panic(http.ErrAbortHandler)
	default:
		return false
	}
	return true
}

func (p *packetTap) sent() [][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.bodies
}

// A relay that cannot be reached (a 5xx, a 429, a cut connection) leaves the
// letter queued; the next sync resends the very same bytes, and Bob gets
// one letter.
func TestQueuedLettersAreResentByteForByte(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"503", "429", "cut"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			h := connectortest.StartHub(t)
			p := connectortest.NewProxy(t, h)
			tap := &packetTap{}
			p.SetIntercept(tap.intercept)
			alice, bob := newAgent(t, h, 0xD1, via(p)), newAgent(t, h, 0xD2, via(p))
			box := bob.mailbox(h.Origin())
			tap.fail.Store(mode)
			sent := alice.send(mail.SendInput{To: box.Address, Text: ptr("are you there?")})
			if sent.Status != "queued" || sent.Message.Delivery.Status != "queued" || sent.Message.Delivery.LastError == nil {
				t.Fatalf("send: %+v", sent)
			}
			nonce, _ := alice.conn.Store().Read().LastNonce(ctx)
			// Still failing: still queued, nothing new signed.
			again := alice.sync()
			if again.Queued != 1 || len(again.Delivered) != 0 || len(again.Errors) != 0 {
				t.Fatalf("sync while failing: %+v", again)
			}
			tap.fail.Store("")
			done := alice.sync()
			if done.Queued != 0 || len(done.Delivered) != 1 || done.Delivered[0] != sent.Message.MessageID {
				t.Fatalf("sync after recovery: %+v", done)
			}
			if after, _ := alice.conn.Store().Read().LastNonce(ctx); after != nonce {
				t.Errorf("a retry signed again: nonce %d -> %d", nonce, after)
			}
			bodies := tap.sent()
			if len(bodies) < 3 {
				t.Fatalf("%d deliveries", len(bodies))
			}
			for _, b := range bodies[1:] {
				if !bytes.Equal(b, bodies[0]) {
					t.Fatalf("a resent packet differs:\n%s\n%s", bodies[0], b)
				}
			}
			if got := bob.sync(); len(got.Received) != 1 || got.Received[0].MessageID != sent.Message.MessageID {
				t.Fatalf("Bob's sync: %+v", got)
			}
			l := alice.list(mail.ListInput{Direction: "sent"})
			if l.Messages[0].Delivery.Status != "delivered" || l.Messages[0].Delivery.LastError != nil {
				t.Fatalf("sent letter: %+v", l.Messages[0].Delivery)
			}
		})
	}
}

// A queued letter past its expires_at is reported as expired by the next
// sync and dropped.
func TestQueuedLetterExpires(t *testing.T) {
	t.Parallel()
	h := connectortest.StartHub(t)
	p := connectortest.NewProxy(t, h)
	tap := &packetTap{}
	p.SetIntercept(tap.intercept)
	alice, bob := newAgent(t, h, 0xD3, via(p)), newAgent(t, h, 0xD4, via(p))
	box := bob.mailbox(h.Origin())
	tap.fail.Store("503")
	exp := time.Now().UnixMilli() + 60_000
	sent := alice.send(mail.SendInput{To: box.Address, Text: ptr("soon stale"), ExpiresAt: &exp})
	if sent.Status != "queued" {
		t.Fatalf("send: %+v", sent)
	}
	tap.fail.Store("")
	later := time.UnixMilli(exp + 1)
	alice = alice.reopen(via(p), func(o *connector.Options) { o.Clock = func() time.Time { return later } })
	got := alice.sync()
	if len(got.Expired) != 1 || got.Expired[0] != sent.Message.MessageID || got.Queued != 0 || len(got.Delivered) != 0 {
		t.Fatalf("sync: %+v", got)
	}
	if n := len(tap.sent()); n != 1 {
		t.Errorf("an expired letter was resent (%d deliveries)", n)
	}
}

// A stale_card refusal makes the card read once more and the letter sealed
// again to the newer card.
func TestStaleCardReseals(t *testing.T) {
	t.Parallel()
	h := connectortest.StartHub(t)
	p := connectortest.NewProxy(t, h)
	alice, bob := newAgent(t, h, 0xD5, via(p)), newAgent(t, h, 0xD6, via(p))
	box := bob.mailbox(h.Origin())
	must[*mail.ResolveResult](t, "agent_protocols_mail_resolve")(alice.Resolve(ctx, "s", mail.ResolveInput{AgentID: bob.id, Address: box.Address}))
	rot := must[*mail.MailboxPublishResult](t, "agent_protocols_mail_mailbox_publish")(bob.MailboxPublish(ctx, "s",
		mail.MailboxPublishInput{MailboxID: box.MailboxID, Routes: []string{h.Origin()}, RotateKey: true}))
	// The card reads fail until a packet is delivered, so Alice seals to
	// her pinned (old) card first.
	tap := &packetTap{}
	p.SetIntercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/card") && len(tap.sent()) == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return true
		}
		return tap.intercept(w, r)
	})
	stable := strings.Split(box.Address, "?")[0]
	sent := alice.send(mail.SendInput{To: stable, Text: ptr("hello after your rotation")})
	if sent.Status != "delivered" {
		t.Fatalf("send: %+v", sent)
	}
	bodies := tap.sent()
	if len(bodies) != 2 || bytes.Equal(bodies[0], bodies[1]) || !bytes.Contains(bodies[1], []byte(rot.Mailbox.CardHash)) {
		t.Fatalf("%d deliveries; want the old packet then one sealed to the new card", len(bodies))
	}
	if got := bob.sync(); len(got.Received) != 1 {
		t.Fatalf("Bob's sync: %+v", got)
	}
	failed, _ := alice.conn.Store().Read().OutboxEntries(ctx, store.OutboxFailed)
	done, _ := alice.conn.Store().Read().OutboxEntries(ctx, store.OutboxDone)
	if len(failed) != 1 || failed[0].Kind != mail.OutboxMailPacket || len(done) != 1 || done[0].Nonce <= failed[0].Nonce {
		t.Errorf("want the superseded packet failed and the resealed one done: %+v %+v", failed, done)
	}
}

// A route that does not take the card is pending: the next sync publishes
// it there.
func TestPendingRoutesRepublished(t *testing.T) {
	t.Parallel()
	h1, h2 := connectortest.StartHub(t), connectortest.StartHub(t)
	p1, p2 := connectortest.NewProxy(t, h1), connectortest.NewProxy(t, h2)
	env := connectortest.NewAgent(t, h1, 0xD7, "")
	env.Cfg.Hosts = append(env.Cfg.Hosts, config.Host{URL: h2.Origin(), Label: "second", CAFile: h2.CAFile()})
	var down atomic.Bool
	down.Store(true)
	p2.SetIntercept(func(w http.ResponseWriter, r *http.Request) bool {
		if !down.Load() {
			return false
		}
		w.WriteHeader(http.StatusBadGateway)
		return true
	})
	bob := open(t, env, viaEach(map[string]*connectortest.Proxy{h1.Origin(): p1, h2.Origin(): p2}))
	r := must[*mail.MailboxPublishResult](t, "agent_protocols_mail_mailbox_publish")(bob.MailboxPublish(ctx, "s",
		mail.MailboxPublishInput{Routes: []string{h1.Origin(), h2.Origin()}}))
	if len(r.Published) != 1 || len(r.Failed) != 1 || r.Failed[0].Route != h2.Origin() || len(r.Mailbox.PendingRoutes) != 1 {
		t.Fatalf("publish: %+v", r)
	}
	if got := bob.sync(); len(got.Errors) == 0 {
		t.Fatalf("a sync while the route is down reports it: %+v", got)
	}
	down.Store(false)
	if got := bob.sync(); len(got.Errors) != 0 {
		t.Fatalf("sync: %+v", got)
	}
	boxes := must[*mail.MailboxesListResult](t, "agent_protocols_mail_mailboxes_list")(bob.MailboxesList(ctx, "s", mail.MailboxesListInput{}))
	if len(boxes.Mailboxes[0].PendingRoutes) != 0 {
		t.Fatalf("still pending: %+v", boxes.Mailboxes[0])
	}
	if res := h2.Do(http.MethodGet, "/v1/mailboxes/"+r.Mailbox.MailboxID+"/card", nil, nil); res.Status != 200 || !bytes.Contains(res.Body, []byte(r.Mailbox.CardHash)) {
		t.Fatalf("the second relay: %d %s", res.Status, res.Body)
	}
}

// The send budgets stop a letter before anything is signed or sent.
func TestSendBudgets(t *testing.T) {
	t.Parallel()
	h := connectortest.StartHub(t)
	p := connectortest.NewProxy(t, h)
	env := connectortest.NewAgent(t, h, 0xD8, "")
	env.Cfg.Limits.MailSendsPerRecipientPerMinute = new(1)
	alice, bob, carol := open(t, env, via(p)), newAgent(t, h, 0xD9, via(p)), newAgent(t, h, 0xDA, via(p))
	bobBox, carolBox := bob.mailbox(h.Origin()), carol.mailbox(h.Origin())
	alice.send(mail.SendInput{To: bobBox.Address, Text: ptr("one")})
	nonce, _ := alice.conn.Store().Read().LastNonce(ctx)
	before := p.Requests.Load()
	_, err := alice.Send(ctx, "s", mail.SendInput{To: bobBox.Address, Text: ptr("two")})
	if code(err) != "rate_limited" {
		t.Fatalf("second letter to Bob: %v", err)
	}
	if after, _ := alice.conn.Store().Read().LastNonce(ctx); after != nonce {
		t.Errorf("a refused letter used a nonce")
	}
	if n := p.Requests.Load() - before; n > 1 {
		t.Errorf("%d requests for a refused letter (a card read at most)", n)
	}
	alice.send(mail.SendInput{To: carolBox.Address, Text: ptr("another recipient")})
}

// A blocked sender's packets are deleted unopened and never reach the
// inbox.
func TestBlockedSender(t *testing.T) {
	t.Parallel()
	h := connectortest.StartHub(t)
	alice := newAgent(t, h, 0xDB)
	env := connectortest.NewAgent(t, h, 0xDC, "")
	env.Cfg.Mail.BlockedSenders = []string{alice.id}
	bob := open(t, env)
	box := bob.mailbox(h.Origin())
	alice.send(mail.SendInput{To: box.Address, Text: ptr("let me in")})
	if got := bob.sync(); len(got.Received) != 0 || len(got.Errors) != 0 || got.PendingInboxCount != 0 {
		t.Fatalf("sync: %+v", got)
	}
	// Unblocked, nothing is left at the relay: it was deleted.
	env.Cfg.Mail.BlockedSenders = []string{}
	bob = bob.reopen()
	if got := bob.sync(); len(got.Received) != 0 {
		t.Fatalf("the blocked packet was kept: %+v", got)
	}
}

// A relay refusing the packet listing with a 429 is a route error of the
// sync, and the result's Err unwraps to the relay's answer: the background
// sync (host/wake) backs off on it for the time the relay asked.
func TestSyncErrCarriesTheRelaysRefusal(t *testing.T) {
	t.Parallel()
	h := connectortest.StartHub(t)
	p := connectortest.NewProxy(t, h)
	var refused atomic.Bool
	p.SetIntercept(func(w http.ResponseWriter, r *http.Request) bool {
		if !refused.Load() || r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/packets") {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "120")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"error":{"code":"rate_limited","message":"slow down"}}`))
		return true
	})
	bob := newAgent(t, h, 0xD7, via(p))
	bob.mailbox(h.Origin())
	if got := bob.sync(); got.Err() != nil || len(got.Errors) != 0 {
		t.Fatalf("a clean sync: %+v, %v", got, got.Err())
	}
	refused.Store(true)
	got := bob.sync()
	var ce *client.Error
	if len(got.Errors) != 1 || got.Errors[0].Route != h.Origin() || !errors.As(got.Err(), &ce) ||
		ce.Status != http.StatusTooManyRequests || ce.RetryAfter != 120*time.Second {
		t.Fatalf("sync: %+v, err %v (%+v)", got, got.Err(), ce)
	}
}
