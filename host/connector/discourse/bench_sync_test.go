package discourse_test

import (
	"crypto/ed25519"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"apconnect/host/connector/discourse"
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
// from a local hub over HTTPS — room resource, history pages, record hash,
// link, envelope hash and strict signature of every record (on every
// core), the ADP rules, materialization and the store — and compares it
// with one core's strict Ed25519 verification rate, measured before and
// after every sync of the same run.
//
// The hub runs in a child process on the same cores: it competes with the
// sync for them as a local `apconnect hub` would, and its CPU time is
// reported apart (hub-cpu-share) instead of being hidden in the ratio.
//
// Metrics: records/s, verify/s (one core), sync/verify-ratio (target ≥ 1.0,
// aim 1.5), hub-cpu-share and sync-cpu-share (CPU time over wall time ×
// cores while syncing), and cpu-per-record-verifies: the connector's CPU
// time per record in single verifications (1 would be nothing but the
// signature check).
func BenchmarkCatchUpSync(b *testing.B) {
	const records = 10000
	h := startChildHub(b)
	roomID := fillRoom(b, h.poster(b), h.origin, hubtest.NewAgent(0x31), records)
	var wall, hubCPU, syncCPU time.Duration
	var verify float64
	n, rates := 0, 0
	measure := func() { verify += verifyRate(b); rates++ }
	for b.Loop() {
		b.StopTimer()
		a := h.agent(b, 0x32)
		measure()
		b.StartTimer()
		n++
		hub0, self0, start := h.cpu(b), selfCPU(), time.Now()
		res, err := a.Discourse().RoomOpen(ctx, "bench", discourse.RoomOpenInput{Host: h.origin, RoomID: roomID})
		wall += time.Since(start)
		hubCPU, syncCPU = hubCPU+h.cpu(b)-hub0, syncCPU+selfCPU()-self0
		if err != nil || res.Sync.SyncedSeq != records {
			b.Fatalf("sync: %v %+v", err, res)
		}
		b.StopTimer()
		a.Close()
		measure()
		b.StartTimer()
	}
	b.StopTimer()
	rate := float64(records*n) / wall.Seconds()
	vr := verify / float64(rates)
	capacity := wall.Seconds() * float64(runtime.GOMAXPROCS(0))
	b.ReportMetric(rate, "records/s")
	b.ReportMetric(vr, "verify/s")
	b.ReportMetric(rate/vr, "sync/verify-ratio")
	b.ReportMetric(hubCPU.Seconds()/capacity, "hub-cpu-share")
	b.ReportMetric(syncCPU.Seconds()/capacity, "sync-cpu-share")
	b.ReportMetric(syncCPU.Seconds()/float64(records*n)*vr, "cpu-per-record-verifies")
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
		res, err := a.RoomSendMessage(ctx, a.sess, discourse.RoomSendMessageInput{RoomID: roomID, Content: "benchmark message"})
		lat = append(lat, time.Since(t0))
		if err != nil || res.Status != discourse.StatusSent {
			b.Fatalf("send: %v %+v", err, res)
		}
	}
	b.ReportMetric(lat.pct(0.5), "p50-ms")
	b.ReportMetric(lat.pct(0.99), "p99-ms")
}
