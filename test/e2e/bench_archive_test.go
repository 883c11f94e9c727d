package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"apconnect/host/hub/hubtest"
	"apconnect/host/proto/adp"
)

// sdkBin is the interop suite's cargo program (test/interop/rust), whose
// --verify-archive mode runs the reference Rust SDK 0.12.6's
// verify_archive_records; SDK_CONNECTOR_BIN overrides the path.
func sdkBin() string {
	if p := os.Getenv("SDK_CONNECTOR_BIN"); p != "" {
		return p
	}
	p, _ := filepath.Abs("../interop/rust/_target/speed-peer/sdk-connector-interop")
	return p
}

// archiveFile writes the archive of a room of n records on a local hub in
// the self-contained layout (the manifest line, then one record per line)
// and returns its path.
func archiveFile(b *testing.B, n int) string {
	b.Helper()
	h := startHub(b)
	a := hubtest.NewAgent(0x71)
	now := time.Now()
	r := h.Post("/v1/rooms", a.ADPEvent(b, now, adp.TypeRoomCreate, "", nil, map[string]any{
		"host": h.Origin(), "topic": "archive bench", "visibility": "public",
		"start_time": now.UnixMilli() - 1000, "end_time": now.Add(24 * time.Hour).UnixMilli(),
	}))
	if r.Status != http.StatusCreated {
		b.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var room struct{ ID, Hash string }
	r.Decode(b, &room)
	head := adp.Link{Seq: 1, Hash: room.Hash}
	for i := 2; i <= n; i++ {
		r := h.Post("/v1/rooms/"+room.ID, a.ADPEvent(b, time.Now(), adp.TypeMessageCreate, room.ID, &head, map[string]any{
			"content_type": "text/plain", "content": fmt.Sprintf("message %d of the archive benchmark, a line of ordinary length.", i),
		}))
		if r.Status != http.StatusOK {
			b.Fatalf("post %d: %d %s", i, r.Status, r.Body)
		}
		var rec struct {
			Seq  int64
			Hash string
		}
		r.Decode(b, &rec)
		head = adp.Link{Seq: rec.Seq, Hash: rec.Hash}
	}
	man, err := adp.ParseArchiveManifest(h.Get(b, "/v1/rooms/"+room.ID+"/archive", nil).Body)
	if err != nil {
		b.Fatal(err)
	}
	line, _ := json.Marshal(man)
	jsonl := h.Get(b, strings.TrimPrefix(man.Formats["jsonl"], h.Origin()), nil).Body
	file := filepath.Join(b.TempDir(), "archive.jsonl")
	if err := os.WriteFile(file, append(append(line, '\n'), jsonl...), 0o600); err != nil {
		b.Fatal(err)
	}
	return file
}

// BenchmarkVerifyArchive verifies a 10,000-record archive file with
// `apconnect verify-archive` and with the reference Rust SDK 0.12.6's
// verify_archive_records (the interop cargo program's --verify-archive:
// strict JSON per line, decode, chain, hashes and signatures; built with
// opt-level 3 in its speed-peer profile), alternately, each as a process of
// its own from start to exit. apconnect also replays the room state (ADP 18 step 5), which the
// SDK function leaves to its caller. Metrics: apconnect-records/s and
// sdk-records/s (from the median runs); make bench derives their ratio
// (target ≥ 1.3).
func BenchmarkVerifyArchive(b *testing.B) {
	const records = 10000
	peer := sdkBin()
	if _, err := os.Stat(peer); err != nil {
		b.Skipf("the Rust SDK program is not built (%v): make bench builds it (cargo build --profile speed-peer in test/interop/rust)", err)
	}
	file := archiveFile(b, records)
	run := func(name string, args ...string) time.Duration {
		cmd := exec.Command(name, args...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		err := cmd.Run()
		d := time.Since(start)
		if err != nil {
			b.Fatalf("%s: %v\n%s", filepath.Base(name), err, out.Bytes())
		}
		if !bytes.Contains(out.Bytes(), []byte("archive verified")) && !bytes.Contains(out.Bytes(), []byte(fmt.Sprintf(`"records":%d`, records))) {
			b.Fatalf("%s did not verify the archive:\n%s", filepath.Base(name), out.Bytes())
		}
		return d
	}
	// Warm the page cache and both binaries.
	run(bin, "verify-archive", file)
	run(peer, "--verify-archive", file)
	var ours, sdk []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			ours = append(ours, run(bin, "verify-archive", file))
			sdk = append(sdk, run(peer, "--verify-archive", file))
		} else {
			sdk = append(sdk, run(peer, "--verify-archive", file))
			ours = append(ours, run(bin, "verify-archive", file))
		}
	}
	median := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
	b.ReportMetric(records/median(ours).Seconds(), "apconnect-records/s")
	b.ReportMetric(records/median(sdk).Seconds(), "sdk-records/s")
}
