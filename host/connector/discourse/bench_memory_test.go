package discourse_test

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"apconnect/host/connector/discourse"
	"apconnect/host/hub/hubtest"
	"apconnect/host/proto/adp"
)

// rssMB returns the process's resident set size in MiB.
func rssMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// parallelDo runs fn(w, i) for i in 0..n-1 on workers goroutines, w
// naming the goroutine.
func parallelDo(n, workers int, fn func(w, i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(w, i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// BenchmarkMemoryAfterSync measures the connector's resident memory after
// joining and syncing 10,000 rooms (3 records each before the join) in
// which it is then an active member, with background live sync running (16
// streams, the rest polled). The hub runs in a child process so that the
// connector's memory is measured alone. Metrics: rss-MB of the benchmark
// process (target ≤ 200), rss-delta-MB (over the process before the
// connector opened), heap-MB (Go heap in use), streams and polled.
func BenchmarkMemoryAfterSync(b *testing.B) {
	const rooms, perRoom = 10000, 3
	h := startChildHub(b)
	// One creator per worker: each signs its writes in nonce order.
	var creators [8]*hubtest.Agent
	for i := range creators {
		creators[i] = hubtest.NewAgent(byte(0x60 + i))
	}
	now := time.Now()
	ids := make([]string, rooms)
	start := time.Now()
	parallelDo(rooms, len(creators), func(w, i int) {
		creator := creators[w]
		status, out := h.post(b, "/v1/rooms", creator.ADPEvent(b, time.Now(), adp.TypeRoomCreate, "", nil, map[string]any{
			"host": h.origin, "topic": fmt.Sprintf("room %d", i), "visibility": "public",
			"start_time": now.UnixMilli() - 1000, "end_time": now.Add(24 * time.Hour).UnixMilli(),
			"policy": map[string]any{"open_roles": []any{"speaker", "observer"}}}))
		var res struct {
			ID   string `json:"id"`
			Hash string `json:"hash"`
		}
		if err := json.Unmarshal(out, &res); err != nil || status >= 300 {
			b.Errorf("create: %d %s", status, out)
			return
		}
		ids[i] = res.ID
		head := adp.Link{Seq: 1, Hash: res.Hash}
		for j := 2; j <= perRoom; j++ {
			status, out := h.post(b, "/v1/rooms/"+res.ID, creator.ADPEvent(b, time.Now(), adp.TypeMessageCreate, res.ID, &head,
				map[string]any{"content_type": "text/plain", "content": fmt.Sprintf("message %d", j)}))
			if status >= 300 || status == 0 {
				b.Errorf("post: %d %s", status, out)
				return
			}
		}
	})
	if b.Failed() {
		b.FailNow()
	}
	b.Logf("filled %d rooms in %v", rooms, time.Since(start))
	h.hc.CloseIdleConnections()
	runtime.GC()
	debug.FreeOSMemory()
	before := rssMB()

	c := h.agent(b, 0x52)
	defer c.Close()
	start = time.Now()
	parallelDo(rooms, 8, func(_, i int) {
		res, err := c.Discourse().RoomJoin(ctx, "bench", discourse.RoomJoinInput{Host: h.origin, RoomID: ids[i], Role: "speaker"})
		if err != nil || res.Status != discourse.JoinJoined {
			b.Errorf("join %s: %v %+v", ids[i], err, res)
		}
	})
	if b.Failed() {
		b.FailNow()
	}
	b.Logf("joined and synced %d rooms in %v", rooms, time.Since(start))
	c.Start(ctx)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if s, p := c.Discourse().Following(); s+p == rooms {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(2 * time.Second)
	streams, polled := c.Discourse().Following()
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	after := rssMB()
	for b.Loop() {
		// The figures are states, not rates: nothing to repeat.
	}
	b.ReportMetric(after, "rss-MB")
	b.ReportMetric(after-before, "rss-delta-MB")
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MB")
	b.ReportMetric(float64(streams), "streams")
	b.ReportMetric(float64(polled), "polled")
}
