package knowledge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"apconnect/host/hub/hubtest"
	"apconnect/host/hub/internal/knowledge"
	"apconnect/host/identity"
	rules "apconnect/host/proto/knowledge"
)

// benchItems is the size of the benchmark corpus.
const benchItems = 100_000

// vocabulary returns n pronounceable words, deterministic.
func vocabulary(n int) []string {
	cons, vow := "bcdfghklmnprstvz", "aeiou"
	rng := rand.New(rand.NewPCG(7, 11))
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		var b strings.Builder
		for range 2 + rng.IntN(2) {
			b.WriteByte(cons[rng.IntN(len(cons))])
			b.WriteByte(vow[rng.IntN(len(vow))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// benchCorpus signs n publications of words drawn from vocab with a Zipf
// distribution (titles of 4 words, statements of 20, bases of 6), on all
// cores.
func benchCorpus(b testing.TB, n int, vocab []string, at time.Time) []*identity.Envelope {
	out := make([]*identity.Envelope, n)
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			agent := hubtest.NewAgent(byte(0x60 + w))
			zipf := rand.NewZipf(rand.New(rand.NewPCG(uint64(w), 3)), 1.1, 4, uint64(len(vocab)-1))
			words := func(k int) string {
				ws := make([]string, k)
				for i := range ws {
					ws[i] = vocab[zipf.Uint64()]
				}
				return strings.Join(ws, " ")
			}
			for i := w; i < n; i += workers {
				p := obj{"license": license, "kind": "observation", "title": words(4), "statement": words(20), "language": "en",
					"context": obj{"scope": words(3), "conditions": list{}, "limitations": list{}}, "basis": words(6)}
				ev := rules.NewEvent(rules.TypePublish, agent.ID, at.UnixMilli(), int64(i+1), value(b, p))
				env, err := identity.SignEvent(agent.Signer, ev)
				if err != nil {
					panic(err)
				}
				out[i] = env
			}
		})
	}
	wg.Wait()
	return out
}

// p50 returns the median of ds in milliseconds.
func p50(ds []time.Duration) float64 {
	s := append([]time.Duration{}, ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return float64(s[len(s)/2].Microseconds()) / 1000
}

// timed sends one request and reads the whole answer, failing on anything
// but 200.
func timed(b *testing.B, h *hubtest.Hub, method, path string, body []byte) ([]byte, time.Duration) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, _ := http.NewRequest(method, h.URL(path), r)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	t0 := time.Now()
	resp, err := h.Client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	out, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	d := time.Since(t0)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("%s %s: %d %s %v", method, path, resp.StatusCode, out, err)
	}
	return out, d
}

// BenchmarkHub measures the knowledge service of a hub holding 100,000
// publications, over loopback HTTPS (each answer read in full):
//
//   - search: a lexical search of two words of middling frequency in the
//     corpus (limit 20: candidates from the trigram index, ranked by BM25,
//     checked with the match rule), and, interleaved in the same loop, a
//     batch read of one item. Metrics search-p50-ms and batch-p50-ms, and their ratio
//     search-over-batch-p50 (issue 22: ≤ 20).
//   - submit: a submission of a new publication (submit-p50-ms) and,
//     interleaved, the time from sending a submission until a query after
//     the previous checkpoint returns it (visible-p50-ms): seq is allocated
//     at commit and the answer sent after it, so the first query sees it.
//     Their ratio is visible-over-submit-p50 (issue 22: ≤ 2).
func BenchmarkHub(b *testing.B) {
	dir := b.TempDir()
	at := time.Now()
	vocab := vocabulary(3000)
	start := time.Now()
	corpus := benchCorpus(b, benchItems, vocab, at.Add(-time.Hour))
	signed := time.Since(start)
	if err := knowledge.Seed(context.Background(), dir, corpus, at.Add(-time.Hour).UnixMilli()); err != nil {
		b.Fatal(err)
	}
	b.Logf("corpus of %d items: signed in %v, stored in %v", benchItems, signed, time.Since(start)-signed)
	h := hubtest.Start(b, hubtest.WithDir(dir))

	b.Run("search", func(b *testing.B) {
		rng := rand.New(rand.NewPCG(5, 8))
		var search, batch []time.Duration
		hits := 0
		for b.Loop() {
			// Two words of middling frequency (ranks 30 to 300).
			text := vocab[30+rng.IntN(270)] + " " + vocab[30+rng.IntN(270)]
			body, d := timed(b, h, http.MethodPost, "/v1/knowledge/search", []byte(`{"text":"`+text+`","mode":"lexical"}`))
			search = append(search, d)
			hits += bytes.Count(body, []byte(`{"record":`))
			id := corpus[rng.IntN(len(corpus))].Hash
			_, d = timed(b, h, http.MethodPost, "/v1/knowledge/batch", []byte(`{"hashes":["`+id+`"]}`))
			batch = append(batch, d)
		}
		b.ReportMetric(p50(search), "search-p50-ms")
		b.ReportMetric(p50(batch), "batch-p50-ms")
		b.ReportMetric(p50(search)/p50(batch), "search-over-batch-p50")
		b.ReportMetric(float64(hits)/float64(len(search)), "hits/search")
	})

	b.Run("submit", func(b *testing.B) {
		agent := hubtest.NewAgent(0x5F)
		var submit, visible []time.Duration
		checkpoint := int64(benchItems)
		for i := 0; b.Loop(); i++ {
			env := func(n int) []byte {
				p := obj{"license": license, "kind": "observation", "title": fmt.Sprintf("new %d/%d", i, n), "statement": "A fresh observation.",
					"language": "en", "context": context3(), "basis": "Measured."}
				now := time.Now()
				raw, _ := json.Marshal(agent.Sign(b, rules.NewEvent(rules.TypePublish, agent.ID, now.UnixMilli(), agent.NextNonce(now), value(b, p))))
				return raw
			}
			first, second := env(0), env(1)
			_, d := timed(b, h, http.MethodPost, "/v1/knowledge/events", first)
			submit = append(submit, d)
			checkpoint++
			t0 := time.Now()
			timed(b, h, http.MethodPost, "/v1/knowledge/events", second)
			checkpoint++
			for {
				page, _ := timed(b, h, http.MethodGet, fmt.Sprintf("/v1/knowledge/query?after_seq=%d", checkpoint-1), nil)
				if bytes.Contains(page, []byte(`"seq":`+fmt.Sprint(checkpoint))) {
					break
				}
			}
			visible = append(visible, time.Since(t0))
		}
		b.ReportMetric(p50(submit), "submit-p50-ms")
		b.ReportMetric(p50(visible), "visible-p50-ms")
		b.ReportMetric(p50(visible)/p50(submit), "visible-over-submit-p50")
	})
}
