package hub_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	"apconnect/host/proto/adp"
)

// BenchmarkProfileWrites measures accepted profile.update writes over
// loopback HTTPS through the whole live-write pipeline, one agent per
// parallel worker.
func BenchmarkProfileWrites(b *testing.B) {
	h := hubtest.Start(b, hubtest.WithLogger(slog.New(slog.DiscardHandler)), hubtest.WithOptions(func(o *hub.Options) {
		o.Limits.Profile.UpdatesPerMinute = -1
	}))
	var seed atomic.Int32
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		a := hubtest.NewAgent(byte(100 + seed.Add(1)))
		nonce := int64(0)
		for pb.Next() {
			nonce++
			r := h.Do(http.MethodPost, "/v1/profiles", a.ProfileUpdate(b, h.Now(), nonce, payloadFor(a, "bench")), nil)
			if r.Status != 200 {
				b.Errorf("%d %s", r.Status, r.Body)
				return
			}
		}
	})
}

// BenchmarkDiscourseWrites measures sustained accepted message.create
// writes per second with 8 concurrent agents over loopback HTTPS, through
// the whole path: client signing, TLS, the live-write pipeline (envelope
// verification, resubmission lookup, window, nonce cache), adp Check under
// the room lock, the record and room rows in one IMMEDIATE transaction,
// Apply and fan-out. The message quota is switched off.
//
// Sub-benchmarks: "rooms=8" gives each agent its own room (no contention
// on a head); "rooms=1" puts all 8 in one room, where each head accepts one
// write and the others retry from the head the room_head_mismatch data
// names (ADP 5.1), so only accepted writes count.
//
// Metrics: writes/s (accepted), verify-share (time the hub spent in
// envelope hash and signature verification, divided by wall time × CPUs:
// the share of the machine's capacity it used) and verify-µs/write.
func BenchmarkDiscourseWrites(b *testing.B) {
	for _, rooms := range []int{8, 1} {
		b.Run(fmt.Sprintf("rooms=%d", rooms), func(b *testing.B) { benchDiscourse(b, rooms) })
	}
}

func benchDiscourse(b *testing.B, rooms int) {
	const workers = 8
	h := hubtest.Start(b, hubtest.WithLogger(slog.New(slog.DiscardHandler)), hubtest.WithOptions(func(o *hub.Options) {
		o.Limits.Discourse.Rules.MessageRate = -1
	}))
	as := make([]*hubtest.Agent, workers)
	for i := range as {
		as[i] = hubtest.NewAgent(byte(150 + i))
	}
	now := time.Now()
	roomIDs := make([]string, rooms)
	for i := range roomIDs {
		r := h.Post("/v1/rooms", as[i].ADPEvent(b, time.Now(), adp.TypeRoomCreate, "", nil, map[string]any{
			"host": h.Origin(), "topic": "bench", "visibility": "public",
			"start_time": now.UnixMilli() - 1000, "end_time": now.Add(24 * time.Hour).UnixMilli(),
			"policy": map[string]any{"open_roles": []any{"speaker", "observer"}}, // the others join as speakers
		}))
		if r.Status != http.StatusCreated {
			b.Fatalf("create: %d %s", r.Status, r.Body)
		}
		var res struct{ ID string }
		r.Decode(b, &res)
		roomIDs[i] = res.ID
	}
	for i := rooms; i < workers; i++ {
		head, _ := h.RoomHead(b, roomIDs[0], as[0])
		r := h.Post("/v1/rooms/"+roomIDs[0], as[i].ADPEvent(b, time.Now(), adp.TypeRoomJoin, roomIDs[0], &head, map[string]any{"role": "speaker"}))
		if r.Status != http.StatusOK {
			b.Fatalf("join: %d %s", r.Status, r.Body)
		}
	}
	per := b.N/workers + 1
	var rejected atomic.Int64
	vCount0, vTotal0 := h.Pipeline().VerifyStats()
	tx0, w0 := h.DB().CommitStats()
	cpu0 := processCPU()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for i, a := range as {
		wg.Add(1)
		go func(a *hubtest.Agent, roomID string) {
			defer wg.Done()
			head, _ := h.RoomHead(b, roomID, a)
			for n := 0; n < per; {
				r := h.Post("/v1/rooms/"+roomID, a.ADPEvent(b, time.Now(), adp.TypeMessageCreate, roomID, &head,
					map[string]any{"content_type": "text/plain", "content": "benchmark message"}))
				var next struct {
					Seq         int64  `json:"seq"`
					Hash        string `json:"hash"`
					CurrentSeq  int64  `json:"current_seq"`
					CurrentHash string `json:"current_hash"`
				}
				switch r.Status {
				case http.StatusOK:
					n++
					json.Unmarshal(r.Body, &next)
					head = adp.Link{Seq: next.Seq, Hash: next.Hash}
				case http.StatusConflict:
					rejected.Add(1)
					var e struct {
						Error struct {
							Data json.RawMessage `json:"data"`
						} `json:"error"`
					}
					json.Unmarshal(r.Body, &e)
					json.Unmarshal(e.Error.Data, &next)
					head = adp.Link{Seq: next.CurrentSeq, Hash: next.CurrentHash}
				default:
					b.Errorf("%d %s", r.Status, r.Body)
					return
				}
			}
		}(a, roomIDs[i%rooms])
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := processCPU() - cpu0
	b.StopTimer()
	vCount, vTotal := h.Pipeline().VerifyStats()
	tx, w := h.DB().CommitStats()
	accepted := float64(per * workers)
	b.ReportMetric(accepted/elapsed.Seconds(), "writes/s")
	if tx > tx0 {
		b.ReportMetric(float64(w-w0)/float64(tx-tx0), "writes/commit")
	}
	// CPU time of the whole process (the 8 clients signing and sending too)
	// per accepted write.
	b.ReportMetric(float64(cpu.Microseconds())/accepted, "cpu-µs/write")
	b.ReportMetric(float64(vTotal-vTotal0)/(float64(elapsed)*float64(runtime.GOMAXPROCS(0))), "verify-share")
	if n := vCount - vCount0; n > 0 {
		b.ReportMetric(float64((vTotal-vTotal0).Microseconds())/float64(n), "verify-µs/write")
	}
	if rooms == 1 {
		b.ReportMetric(float64(rejected.Load())/accepted, "head-retries/write")
	}
}

// processCPU returns the CPU time the process used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
