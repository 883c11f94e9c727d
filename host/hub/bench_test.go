package hub_test

import (
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"

	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
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
