package hub_test

import (
	"bytes"
	"crypto/sha3"
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
	"apconnect/host/identity"
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
// The agents run in the benchmark's process, so their CPU counts in
// cpu-µs/write. They sign more cheaply than hubtest's helpers (benchAgent):
// the message payload is parsed once, and each envelope is written from
// the event's canonical form directly, without identity.SignEvent's
// re-parse of the event or a JSON encoder. Every envelope is still a fresh
// event signed with Ed25519, and the bytes sent are exactly what
// Agent.ADPEvent returns for it (checked before the run): the hub's path is
// the same.
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

// benchRooms creates the rooms of benchDiscourse, one per agent up to
// rooms, and has the other agents join the first as speakers.
func benchRooms(b *testing.B, h *hubtest.Hub, as []*hubtest.Agent, rooms int) []string {
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
	for i := rooms; i < len(as); i++ {
		head, _ := h.RoomHead(b, roomIDs[0], as[0])
		r := h.Post("/v1/rooms/"+roomIDs[0], as[i].ADPEvent(b, time.Now(), adp.TypeRoomJoin, roomIDs[0], &head, map[string]any{"role": "speaker"}))
		if r.Status != http.StatusOK {
			b.Fatalf("join: %d %s", r.Status, r.Body)
		}
	}
	return roomIDs
}

// benchAgent is one agent of BenchmarkDiscourseWrites, posting messages to
// its room.
type benchAgent struct {
	*hubtest.Agent
	roomID  string
	payload any // the message payload, parsed once
}

func newBenchAgent(b *testing.B, a *hubtest.Agent, roomID string) *benchAgent {
	return &benchAgent{Agent: a, roomID: roomID,
		payload: hubtest.JSONValue(b, map[string]any{"content_type": "text/plain", "content": "benchmark message"})}
}

// message returns a message.create envelope on head, created now, signed
// with the agent's next nonce: JCS of the envelope, as Agent.ADPEvent
// returns it, written from the event's canonical form.
func (a *benchAgent) message(b *testing.B, now time.Time, head adp.Link) []byte {
	ev := adp.NewEvent(adp.TypeMessageCreate, a.ID, now.UnixMilli(), a.payload, adp.Fields{RoomID: a.roomID, Base: &head})
	ev.Nonce = a.NextNonce(now)
	canon, err := ev.Canonical()
	if err != nil {
		b.Fatalf("canonical event: %v", err)
	}
	digest := sha3.Sum256(canon)
	env := identity.Envelope{Hash: identity.EncodeBase64URL(digest[:]), Signature: identity.EncodeBase64URL(a.Signer.SignDigest(digest[:]))}
	return env.AppendCanonical(make([]byte, 0, len(canon)+160), canon)
}

// checkMessage fails the benchmark unless message writes what
// Agent.ADPEvent does for the same event (Ed25519 signatures are
// deterministic), comparing the two for a probe agent of its own: nothing
// is sent.
func (a *benchAgent) checkMessage(b *testing.B, head adp.Link) {
	now := time.UnixMilli(1_800_000_000_000)
	probe := &benchAgent{Agent: hubtest.NewAgent(0x01), roomID: a.roomID, payload: a.payload}
	got := probe.message(b, now, head)
	want := hubtest.NewAgent(0x01).ADPEvent(b, now, adp.TypeMessageCreate, a.roomID, &head,
		map[string]any{"content_type": "text/plain", "content": "benchmark message"})
	if !bytes.Equal(got, want) {
		b.Fatalf("benchmark envelope\n%s\nis not Agent.ADPEvent's\n%s", got, want)
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
	roomIDs := benchRooms(b, h, as, rooms)
	head, _ := h.RoomHead(b, roomIDs[0], as[0])
	newBenchAgent(b, as[0], roomIDs[0]).checkMessage(b, head)
	per := b.N/workers + 1
	var rejected atomic.Int64
	vCount0, vTotal0 := h.Pipeline().VerifyStats()
	tx0, w0 := h.DB().CommitStats()
	cpu0 := processCPU()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for i, a := range as {
		ba := newBenchAgent(b, a, roomIDs[i%rooms])
		wg.Add(1)
		go func() {
			defer wg.Done()
			head, _ := h.RoomHead(b, ba.roomID, a)
			ba.post(b, h, head, per, &rejected)
		}()
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

// post sends messages on head until n are accepted, moving to each
// accepted record, or, after a room_head_mismatch, to the head its data
// names (counted in rejected).
func (a *benchAgent) post(b *testing.B, h *hubtest.Hub, head adp.Link, n int, rejected *atomic.Int64) {
	path := "/v1/rooms/" + a.roomID
	for accepted := 0; accepted < n; {
		r := h.Post(path, a.message(b, time.Now(), head))
		var next struct {
			Seq         int64  `json:"seq"`
			Hash        string `json:"hash"`
			CurrentSeq  int64  `json:"current_seq"`
			CurrentHash string `json:"current_hash"`
		}
		switch r.Status {
		case http.StatusOK:
			accepted++
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
}

// processCPU returns the CPU time the process used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
