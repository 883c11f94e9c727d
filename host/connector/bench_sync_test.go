package connector_test

import (
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"apconnect/host/adp"
	"apconnect/host/connector"
	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	"apconnect/host/identity"
)

// benchHub starts a hub with every quota off and logs discarded.
func benchHub(b *testing.B) *hubtest.Hub {
	return hubtest.Start(b, hubtest.WithLogger(slog.New(slog.DiscardHandler)), hubtest.WithOptions(func(o *hub.Options) {
		o.Limits.Discourse.Rules.MessageRate = -1
		o.Limits.Discourse.Rules.SignalRate = -1
		o.Limits.Discourse.Rules.ControlRate = -1
	}))
}

// fillRoom creates a public room on h and posts n-1 messages to it
// directly (n records in all), each on the head the previous one made.
func fillRoom(b *testing.B, h *hubtest.Hub, a *hubtest.Agent, n int) string {
	b.Helper()
	now := time.Now()
	r := h.Post("/v1/rooms", a.ADPEvent(b, now, adp.TypeRoomCreate, "", nil, map[string]any{
		"host": h.Origin(), "topic": "bench", "visibility": "public",
		"start_time": now.UnixMilli() - 1000, "end_time": now.Add(24 * time.Hour).UnixMilli(),
	}))
	if r.Status != http.StatusCreated {
		b.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var created struct {
		ID   string `json:"id"`
		Hash string `json:"hash"`
	}
	if err := json.Unmarshal(r.Body, &created); err != nil {
		b.Fatal(err)
	}
	head := adp.Link{Seq: 1, Hash: created.Hash}
	for i := 2; i <= n; i++ {
		r := h.Post("/v1/rooms/"+created.ID, a.ADPEvent(b, time.Now(), adp.TypeMessageCreate, created.ID, &head, map[string]any{
			"content_type": "text/plain", "content": fmt.Sprintf("message %d of the catch-up benchmark, a line of ordinary length.", i),
		}))
		if r.Status != http.StatusOK && r.Status != http.StatusCreated {
			b.Fatalf("post %d: %d %s", i, r.Status, r.Body)
		}
		var rec struct {
			Seq  int64  `json:"seq"`
			Hash string `json:"hash"`
		}
		if err := json.Unmarshal(r.Body, &rec); err != nil {
			b.Fatal(err)
		}
		head = adp.Link{Seq: rec.Seq, Hash: rec.Hash}
	}
	return created.ID
}

// verifyRate measures single-core strict Ed25519 verifications per second.
func verifyRate(b *testing.B) float64 {
	key := ed25519.NewKeyFromSeed(make([]byte, 32))
	msg := make([]byte, 32)
	sig := ed25519.Sign(key, msg)
	pub := key.Public().(ed25519.PublicKey)
	const n = 3000
	start := time.Now()
	for i := 0; i < n; i++ {
		if err := identity.VerifyStrict(pub, msg, sig); err != nil {
			b.Fatal(err)
		}
	}
	return n / time.Since(start).Seconds()
}

// BenchmarkCatchUpSync measures a catch-up sync of a 10,000-record room
// from the local hub over HTTPS — room resource, history pages, record hash,
// link, envelope hash and strict signature of every record (in parallel),
// the ADP rules, materialization and the store — and compares it with one
// core's strict Ed25519 verification rate measured in the same run.
// Metrics: records/s, verify/s (single core) and sync/verify-ratio (target
// ≥ 0.5, aim ≥ 1.0).
func BenchmarkCatchUpSync(b *testing.B) {
	const records = 10000
	h := benchHub(b)
	creator := hubtest.NewAgent(0x31)
	roomID := fillRoom(b, h, creator, records)
	var total time.Duration
	n := 0
	vr0 := verifyRate(b)
	for b.Loop() {
		b.StopTimer()
		a := newAgent(b, h, 0x32, "")
		b.StartTimer()
		n++
		start := time.Now()
		res, err := a.RoomOpen(ctx, "bench", connector.RoomOpenInput{Host: h.Origin(), RoomID: roomID})
		total += time.Since(start)
		if err != nil || res.Sync.SyncedSeq != records {
			b.Fatalf("sync: %v %+v", err, res)
		}
		b.StopTimer()
		a.Close()
		b.StartTimer()
	}
	b.StopTimer()
	rate := float64(records*n) / total.Seconds()
	// The machine may be shared: the verification rate is measured before
	// and after the syncs and averaged.
	vr := (vr0 + verifyRate(b)) / 2
	b.ReportMetric(rate, "records/s")
	b.ReportMetric(vr, "verify/s")
	b.ReportMetric(rate/vr, "sync/verify-ratio")
}

// BenchmarkSendMessage measures the send_message round trip to the local
// hub: build, local checks, nonce and outbox, sign, POST over HTTPS, verify
// and apply the accepted record, present it. Metrics: p50-ms and p99-ms
// (target p50 ≤ 10 ms).
func BenchmarkSendMessage(b *testing.B) {
	h := benchHub(b)
	a := newAgent(b, h, 0x33, "")
	roomID := createRoom(b, a, h, "public", nil)
	var lat latencies
	for b.Loop() {
		t0 := time.Now()
		res, err := a.RoomSendMessage(ctx, a.sess, connector.RoomSendMessageInput{RoomID: roomID, Content: "benchmark message"})
		lat = append(lat, time.Since(t0))
		if err != nil || res.Status != connector.StatusSent {
			b.Fatalf("send: %v %+v", err, res)
		}
	}
	b.ReportMetric(lat.pct(0.5), "p50-ms")
	b.ReportMetric(lat.pct(0.99), "p99-ms")
}
