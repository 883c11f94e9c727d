package mail

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// letterBytes is the text of the benchmark's letter: 4 KiB.
const letterBytes = 4096

// sdkMailBench is the interop suite's cargo program (test/interop/rust),
// whose --mail-bench mode times the reference Rust SDK 0.12.6's
// encrypt_message and decrypt_packet; SDK_CONNECTOR_BIN overrides the path.
func sdkMailBench() string {
	if p := os.Getenv("SDK_CONNECTOR_BIN"); p != "" {
		return p
	}
	p, _ := filepath.Abs("../../../test/interop/rust/_target/speed-peer/sdk-connector-interop")
	return p
}

// BenchmarkSealOpen4KiB seals a 4 KiB letter to a card (HPKE, the packet
// signed and checked) and opens it (decrypted, the letter checked), as Seal
// and Open do for a sender and a recipient: ns/op over b.N rounds. With the
// interop cargo program built (make bench builds its speed-peer profile) it
// then times the reference Rust SDK 0.12.6's encrypt_message +
// decrypt_packet of the same letter (`sdk-connector-interop --mail-bench`,
// timed inside the Rust process) in chunks alternating with chunks of Go
// rounds, so both see the same machine, and reports the median chunk rates
// as go-letters/s and sdk-letters/s; make bench derives their ratio (target
// ≥ 1.0). Without the program only ns/op is reported.
func BenchmarkSealOpen4KiB(b *testing.B) {
	card := cardOf(b, 100, func(p *CardPayload) { p.MaxPacketBytes = 65536 })
	key := mustKey(b, bobSecret)
	m := letter(func(m *Message) { m.Parts = []Part{TextPart(strings.Repeat("x", letterBytes))} })
	var nonce int64
	round := func() {
		nonce++
		p, err := Seal(alice, m, card, nonce, t0)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Open(p, card, key, bob.AgentID(), t0); err != nil {
			b.Fatal(err)
		}
	}
	round()
	b.ResetTimer()
	for b.Loop() {
		round()
	}
	b.StopTimer()
	peer := sdkMailBench()
	if _, err := os.Stat(peer); err != nil {
		b.Logf("the Rust SDK program is not built (%v): make bench builds it; no comparison", err)
		return
	}
	const chunks, rounds = 7, 100
	var ours, sdk []float64
	for range chunks {
		start := time.Now()
		for range rounds {
			round()
		}
		ours = append(ours, rounds/time.Since(start).Seconds())
		sdk = append(sdk, sdkRate(b, peer, rounds))
	}
	median := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
	b.ReportMetric(median(ours), "go-letters/s")
	b.ReportMetric(median(sdk), "sdk-letters/s")
}

// sdkRate runs the Rust SDK's --mail-bench for rounds and returns its
// letters per second (timed inside its process: no start-up).
func sdkRate(b *testing.B, peer string, rounds int) float64 {
	out, err := exec.Command(peer, "--mail-bench", strconv.Itoa(rounds)).Output()
	if err != nil {
		b.Fatalf("%s --mail-bench: %v\n%s", peer, err, out)
	}
	var res struct {
		OK struct {
			Rounds int   `json:"rounds"`
			NS     int64 `json:"ns"`
		} `json:"ok"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(out), &res); err != nil || res.OK.Rounds != rounds || res.OK.NS <= 0 {
		b.Fatalf("%s --mail-bench: %v: %s", peer, err, out)
	}
	return float64(res.OK.Rounds) / (float64(res.OK.NS) / 1e9)
}
