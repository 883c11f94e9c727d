package mail

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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
	p, _ := filepath.Abs("../../../test/interop/rust/target/speed-peer/sdk-connector-interop")
	return p
}

// BenchmarkSealOpen4KiB seals a 4 KiB letter to a card (HPKE, the packet
// signed) and opens it (the packet verified, decrypted, the letter
// checked), as Seal and Open do for a sender and a recipient. Metric:
// go-letters/s; with the interop cargo program built (make bench builds its
// speed-peer profile) also sdk-letters/s, the reference Rust SDK's
// encrypt_message + decrypt_packet of the same letter in the same run
// (`sdk-connector-interop --mail-bench`), whose ratio make bench reports
// (target ≥ 1.0).
func BenchmarkSealOpen4KiB(b *testing.B) {
	card := cardOf(b, 100, func(p *CardPayload) { p.MaxPacketBytes = 65536 })
	key := mustKey(b, bobSecret)
	m := letter(func(m *Message) { m.Parts = []Part{TextPart(strings.Repeat("x", letterBytes))} })
	round := func(nonce int64) {
		p, err := Seal(alice, m, card, nonce, t0)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Open(p, card, key, bob.AgentID(), t0); err != nil {
			b.Fatal(err)
		}
	}
	round(1)
	var nonce int64 = 1
	b.ResetTimer()
	for b.Loop() {
		nonce++
		round(nonce)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "go-letters/s")
	peer := sdkMailBench()
	if _, err := os.Stat(peer); err != nil {
		b.Logf("the Rust SDK program is not built (%v): make bench builds it; sdk-letters/s not measured", err)
		return
	}
	rounds := max(b.N, 200)
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
	b.ReportMetric(float64(res.OK.Rounds)/(float64(res.OK.NS)/1e9), "sdk-letters/s")
}
