package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	"apconnect/host/proto/adp"
)

// archiveRoom runs a small room on a test hub and closes it, returning the
// hub, the room id and the seq of a message record.
func archiveRoom(t *testing.T) (*hubtest.Hub, string, int64) {
	t.Helper()
	clock := hubtest.NewClock(time.UnixMilli(1_800_000_000_000))
	h := hubtest.Start(t, hubtest.WithClock(clock))
	creator, sp := hubtest.NewAgent(1), hubtest.NewAgent(2)
	now := clock.Now()
	r := h.Post("/v1/rooms", creator.ADPEvent(t, now, adp.TypeRoomCreate, "", nil, map[string]any{
		"host": h.Origin(), "topic": "archive test", "visibility": "public",
		"start_time": now.UnixMilli() - 1000, "end_time": now.UnixMilli() + 3600_000,
		"types":  []any{map[string]any{"use": "adp:reactions/1.0"}},
		"policy": map[string]any{"open_roles": []any{"speaker", "observer"}},
	}))
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var room struct{ ID string }
	r.Decode(t, &room)
	send := func(a *hubtest.Agent, typ string, payload map[string]any) *adp.Record {
		head, _ := h.RoomHead(t, room.ID, nil)
		r := h.Post("/v1/rooms/"+room.ID, a.ADPEvent(t, clock.Now(), typ, room.ID, &head, payload))
		if r.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", typ, r.Status, r.Body)
		}
		rec, err := adp.ParseRecord(r.Body)
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	send(sp, adp.TypeRoomJoin, map[string]any{"role": "speaker"})
	msg := send(sp, adp.TypeMessageCreate, map[string]any{"content_type": "text/plain", "content": "hello"})
	send(creator, "reaction.create", map[string]any{"event_id": msg.EnvelopeHash(), "reaction": "agree"})
	send(creator, adp.TypeMessageCreate, map[string]any{"content_type": "text/plain", "content": "closing"})
	send(creator, adp.TypeRoomClose, map[string]any{})
	return h, room.ID, msg.Seq
}

// selfContained builds the older self-contained layout of a room's archive
// from the hub's current one: the manifest line, a pack line per external
// pack document, then the records.
func selfContained(t *testing.T, h *hubtest.Hub, id string) []byte {
	t.Helper()
	man, err := adp.ParseArchiveManifest(h.Get(t, "/v1/rooms/"+id+"/archive", nil).Body)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	line, _ := json.Marshal(man)
	b.Write(line)
	b.WriteByte('\n')
	for _, p := range man.Packs {
		doc := h.Get(t, strings.TrimPrefix(p.URL, h.Origin()), nil).Body
		line, _ := json.Marshal(map[string]any{"type": "room.archive.pack", "pack": p.Pack, "digest": p.Digest, "document": string(doc)})
		b.Write(line)
		b.WriteByte('\n')
	}
	b.Write(h.Get(t, strings.TrimPrefix(man.Formats["jsonl"], h.Origin()), nil).Body)
	return b.Bytes()
}

// download fetches a path of the hub into a file.
func download(t *testing.T, h *hubtest.Hub, path, file string) []byte {
	t.Helper()
	resp, err := h.Client.Get(h.URL(path))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestVerifyArchiveRoundTrip(t *testing.T) {
	t.Parallel()
	h, id, msgSeq := archiveRoom(t)
	dir := t.TempDir()

	t.Run("manifest URL", func(t *testing.T) {
		code, out, errOut := runCLI(t, "verify-archive", "--ca", h.CAFile(), h.URL("/v1/rooms/"+id+"/archive"))
		if code != 0 || !strings.Contains(out, "archive verified") || !strings.Contains(out, "room:       "+id) ||
			!strings.Contains(out, "records:    6 (last seq 6)") || !strings.Contains(out, "redactions: none") ||
			!strings.Contains(out, "layout:     current (") {
			t.Fatalf("exit %d\n%s%s", code, out, errOut)
		}
	})
	t.Run("room URL and JSON report", func(t *testing.T) {
		code, out, _ := runCLI(t, "verify-archive", "--ca", h.CAFile(), "--json", h.URL("/v1/rooms/"+id))
		if code != 0 || !strings.Contains(out, `"ok": true`) || !strings.Contains(out, `"status": "ended"`) || !strings.Contains(out, `"layout": "current"`) {
			t.Fatalf("exit %d\n%s", code, out)
		}
	})
	t.Run("local self-contained JSONL", func(t *testing.T) {
		file := filepath.Join(dir, "room.jsonl")
		os.WriteFile(file, selfContained(t, h, id), 0o600)
		code, out, errOut := runCLI(t, "verify-archive", file)
		if code != 0 || !strings.Contains(out, "archive verified") || !strings.Contains(out, "layout:     self-contained (") {
			t.Fatalf("exit %d\n%s%s", code, out, errOut)
		}
	})
	t.Run("a records-only JSONL has no commitment", func(t *testing.T) {
		file := filepath.Join(dir, "records.jsonl")
		download(t, h, "/v1/rooms/"+id+"/archive.jsonl", file)
		for _, src := range []string{file, h.URL("/v1/rooms/" + id + "/archive.jsonl")} {
			args := []string{"verify-archive", src}
			if strings.HasPrefix(src, "https://") {
				args = []string{"verify-archive", "--ca", h.CAFile(), src}
			}
			code, out, _ := runCLI(t, args...)
			if code != 1 || !strings.Contains(out, "layout:     records only") || !strings.Contains(out, "has no manifest") ||
				!strings.Contains(out, "records:    6 (last seq 6)") {
				t.Fatalf("%s: exit %d\n%s", src, code, out)
			}
		}
	})
	t.Run("tampered archive lists every problem", func(t *testing.T) {
		file := filepath.Join(dir, "tampered.jsonl")
		b := selfContained(t, h, id)
		lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
		// Line 0 is the manifest, then records 1..6. Change the message's
		// content (its event hash no longer matches), and drop record 5.
		lines[msgSeq] = bytes.Replace(lines[msgSeq], []byte(`"hello"`), []byte(`"HELLO"`), 1)
		lines = append(lines[:5], lines[6:]...)
		os.WriteFile(file, append(bytes.Join(lines, []byte("\n")), '\n'), 0o600)
		code, out, _ := runCLI(t, "verify-archive", file)
		if code != 1 || !strings.Contains(out, "archive verification FAILED") {
			t.Fatalf("exit %d\n%s", code, out)
		}
		for _, want := range []string{
			"seq 3 [invalid_event_hash]", // the edited message
			"seq 6 [chain_broken] /seq: record 5 is missing",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("report lacks %q:\n%s", want, out)
			}
		}
		if n := strings.Count(out, "\n  - "); n < 2 {
			t.Errorf("%d problems listed:\n%s", n, out)
		}
	})
	t.Run("a forged last_hash is caught", func(t *testing.T) {
		file := filepath.Join(dir, "forged.jsonl")
		b := selfContained(t, h, id)
		lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
		lines = lines[:len(lines)-1] // drop the last record, keep the manifest
		os.WriteFile(file, bytes.Join(lines, []byte("\n")), 0o600)
		code, out, _ := runCLI(t, "verify-archive", file)
		if code != 1 || !strings.Contains(out, "[chain_broken] /last_seq") || !strings.Contains(out, "[chain_broken] /last_hash") {
			t.Fatalf("exit %d\n%s", code, out)
		}
	})
	t.Run("redacted record is reported", func(t *testing.T) {
		code, out, errOut := runCLI(t, "hub", "redact", "--data", h.DataDir(), "--room", id, "--seq", "3")
		if code != 0 || !strings.Contains(out, "redacted record 3") {
			t.Fatalf("hub redact: exit %d\n%s%s", code, out, errOut)
		}
		code, out, _ = runCLI(t, "verify-archive", "--ca", h.CAFile(), h.URL("/v1/rooms/"+id+"/archive"))
		if code != 0 || !strings.Contains(out, "redactions: 1 record(s) redacted by the host: seq 3") {
			t.Fatalf("exit %d\n%s", code, out)
		}
		// Redaction is idempotent; state-bearing records are refused.
		if code, out, _ := runCLI(t, "hub", "redact", "--data", h.DataDir(), "--room", id, "--seq", "3"); code != 0 || !strings.Contains(out, "already redacted") {
			t.Fatalf("second redact: %d %s", code, out)
		}
		if code, _, errOut := runCLI(t, "hub", "redact", "--data", h.DataDir(), "--room", id, "--seq", "2"); code != 1 || !strings.Contains(errOut, "cannot be redacted") {
			t.Fatalf("redacting room.join: %d %s", code, errOut)
		}
		if code, _, _ := runCLI(t, "hub", "redact", "--data", h.DataDir(), "--room", id); code != 2 {
			t.Fatalf("redact without --seq: exit %d", code)
		}
		// The hub serves the redacted form, also to an exact resubmission.
		recs := h.Get(t, "/v1/rooms/"+id+"/events", nil)
		if !bytes.Contains(recs.Body, []byte(`"redacted":true`)) || bytes.Contains(recs.Body, []byte(`"hello"`)) {
			t.Fatalf("events after redaction: %s", recs.Body)
		}
	})
	t.Run("usage errors", func(t *testing.T) {
		if code, _, _ := runCLI(t, "verify-archive"); code != 2 {
			t.Fatalf("no argument: exit %d", code)
		}
		if code, _, _ := runCLI(t, "verify-archive", "http://127.0.0.1/x"); code != 2 {
			t.Fatalf("http URL: exit %d", code)
		}
		if code, _, errOut := runCLI(t, "verify-archive", filepath.Join(dir, "missing.jsonl")); code != 1 || errOut == "" {
			t.Fatalf("missing file: exit %d", code)
		}
	})
}

// TestRedactOnStoppedHub: redaction works on the data directory of a hub
// that is not running, and the content is gone from the database files.
func TestRedactOnStoppedHub(t *testing.T) {
	t.Parallel()
	h, id, msgSeq := archiveRoom(t)
	dir := h.DataDir()
	h.Close()
	code, out, errOut := runCLI(t, "hub", "redact", "--data", dir, "--room", id, "--seq", strconv.FormatInt(msgSeq, 10))
	if code != 0 || !strings.Contains(out, "message.create") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, name := range []string{"hub.db", "hub.db-wal"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(`"hello"`)) {
			t.Fatalf("the redacted content is still in %s", name)
		}
	}
	if code, _, errOut := runCLI(t, "hub", "redact", "--data", t.TempDir(), "--room", id, "--seq", "1"); code != 1 || !strings.Contains(errOut, "no hub database") {
		t.Fatalf("empty data directory: exit %d %s", code, errOut)
	}
}

// TestVerifyArchiveExternalPack: a room that imported an external pack.
// Its current layout (manifest URL → formats.jsonl + manifest.packs) and
// the self-contained layout built from it (manifest line, pack line,
// records) both verify, and each report names its layout; the
// self-contained file without its pack line does not.
func TestVerifyArchiveExternalPack(t *testing.T) {
	t.Parallel()
	var doc []byte
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(doc)
	}))
	defer srv.Close()
	packURL := srv.URL + "/notes.json"
	doc, _ = json.Marshal(map[string]any{"protocol": "agent-discourse/1.0", "packs": []any{map[string]any{
		"id": packURL, "title": "Notes", "types": []any{map[string]any{"type": "notes.add", "kind": "message", "title": "Note",
			"schema": map[string]any{"type": "object", "required": []any{"text"}, "properties": map[string]any{"text": map[string]any{"type": "string"}}}}}}}})
	digest := adp.PackDigest(doc)
	clock := hubtest.NewClock(time.UnixMilli(1_800_000_000_000))
	h := hubtest.Start(t, hubtest.WithClock(clock), hubtest.WithOptions(func(o *hub.Options) {
		o.PackFetcher = &adp.HTTPSPackFetcher{Client: srv.Client(), AllowPrivateAddresses: true}
	}))
	creator := hubtest.NewAgent(3)
	now := clock.Now()
	r := h.Post("/v1/rooms", creator.ADPEvent(t, now, adp.TypeRoomCreate, "", nil, map[string]any{
		"host": h.Origin(), "topic": "pack archive", "visibility": "public",
		"start_time": now.UnixMilli() - 1000, "end_time": now.UnixMilli() + 3600_000,
		"types": []any{map[string]any{"pack": packURL, "digest": digest}},
	}))
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var room struct{ ID string }
	r.Decode(t, &room)
	head, _ := h.RoomHead(t, room.ID, nil)
	if r := h.Post("/v1/rooms/"+room.ID, creator.ADPEvent(t, clock.Now(), "notes.add", room.ID, &head, map[string]any{"text": "kept"})); r.Status != http.StatusOK {
		t.Fatalf("note: %d %s", r.Status, r.Body)
	}
	srv.Close() // the archive serves the pack; the original host is gone

	code, out, errOut := runCLI(t, "verify-archive", "--ca", h.CAFile(), h.URL("/v1/rooms/"+room.ID+"/archive"))
	if code != 0 || !strings.Contains(out, "layout:     current (") || !strings.Contains(out, "packs:      1 external pack document(s)") {
		t.Fatalf("current layout: exit %d\n%s%s", code, out, errOut)
	}
	dir := t.TempDir()
	full := selfContained(t, h, room.ID)
	file := filepath.Join(dir, "self-contained.jsonl")
	os.WriteFile(file, full, 0o600)
	code, out, errOut = runCLI(t, "verify-archive", file)
	if code != 0 || !strings.Contains(out, "layout:     self-contained (") || !strings.Contains(out, "packs:      1 external pack document(s)") {
		t.Fatalf("self-contained layout: exit %d\n%s%s", code, out, errOut)
	}
	lines := bytes.Split(bytes.TrimSpace(full), []byte("\n"))
	os.WriteFile(file, append(bytes.Join(append(lines[:1:1], lines[2:]...), []byte("\n")), '\n'), 0o600)
	code, out, _ = runCLI(t, "verify-archive", file)
	if code != 1 || !strings.Contains(out, "[pack_unavailable]") {
		t.Fatalf("without the pack line: exit %d\n%s", code, out)
	}
}

// The streamed verification reports what the whole-archive one reports, on
// clean, tampered, shuffled (read again whole and sorted) and records-only
// archives, and in chunks of any size.
//
// Serial: it swaps the package-level archiveChunk, which every in-process
// verify-archive reads.
func TestVerifyArchiveStreamMatchesWhole(t *testing.T) {
	h, id, msgSeq := archiveRoom(t)
	dir := t.TempDir()
	full := selfContained(t, h, id)
	lines := bytes.Split(bytes.TrimSpace(full), []byte("\n"))
	join := func(ls [][]byte) []byte { return append(bytes.Join(ls, []byte("\n")), '\n') }
	tampered := slices.Clone(lines)
	tampered[msgSeq] = bytes.Replace(tampered[msgSeq], []byte(`"hello"`), []byte(`"HELLO"`), 1)
	tampered = append(tampered[:5], tampered[6:]...)
	shuffled := slices.Clone(lines)
	shuffled[2], shuffled[4] = shuffled[4], shuffled[2]
	files := map[string][]byte{
		"clean": full, "tampered": join(tampered), "shuffled": join(shuffled), "records only": join(lines[1:]),
		"bad lines": join(append(slices.Clone(lines), []byte("{not json"), []byte(`{"type":"room.archive.pack","pack":"x","document":"{}"}`))),
	}
	defer func(n int) { archiveChunk = n }(archiveChunk)
	for name, data := range files {
		file := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".jsonl")
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
		src, err := resolveArchive(context.Background(), file, "", defaultArchiveMaxBytes)
		if err != nil {
			t.Fatal(err)
		}
		whole, err := src.verify(context.Background(), true)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(whole)
		for _, chunk := range []int{1, 2, 512} {
			archiveChunk = chunk
			rep, err := verifyArchiveSource(context.Background(), file, "", defaultArchiveMaxBytes)
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := json.Marshal(rep); !bytes.Equal(got, want) {
				t.Errorf("%s in chunks of %d:\n got %s\nwant %s", name, chunk, got, want)
			}
			if name == "shuffled" && !rep.OK {
				t.Errorf("the shuffled archive does not verify: %+v", rep.Problems)
			}
			if name == "tampered" && rep.OK {
				t.Errorf("the tampered archive verifies")
			}
		}
	}
	if _, err := verifyArchiveSource(context.Background(), filepath.Join(dir, "clean.jsonl"), "", 100); err == nil || !strings.Contains(err.Error(), "larger than --max-bytes 100") {
		t.Errorf("an archive past --max-bytes: %v", err)
	}
}

// A manifest URL whose JSONL is out of seq order: the manifest is fetched
// once, the JSONL read as it streams, then again whole, and the report is
// the whole-archive one, the pack problems (found once the layout is known)
// included once.
func TestVerifyArchiveURLOutOfOrder(t *testing.T) {
	t.Parallel()
	h, id, _ := archiveRoom(t)
	man, err := adp.ParseArchiveManifest(h.Get(t, "/v1/rooms/"+id+"/archive", nil).Body)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(h.Get(t, strings.TrimPrefix(man.Formats["jsonl"], h.Origin()), nil).Body), []byte("\n"))
	lines[1], lines[3] = lines[3], lines[1]
	shuffled := append(bytes.Join(lines, []byte("\n")), '\n')
	var mu sync.Mutex
	hits := map[string]int{}
	var srv *httptest.Server
	srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		switch r.URL.Path {
		case "/v1/rooms/" + id + "/archive":
			m := *man
			m.Formats = map[string]string{"jsonl": srv.URL + "/v1/rooms/" + id + "/archive.jsonl"}
			m.Packs = []adp.ArchivedPack{{Pack: "https://packs.example/p.json", Digest: strings.Repeat("A", 43), URL: "https://elsewhere.example/p.json"}}
			json.NewEncoder(w).Encode(&m)
		case "/v1/rooms/" + id + "/archive.jsonl":
			w.Write(shuffled)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rep, err := verifyArchiveSource(ctx, srv.URL+"/v1/rooms/"+id, ca, defaultArchiveMaxBytes)
	if err != nil {
		t.Fatal(err)
	}
	if hits["/v1/rooms/"+id+"/archive"] != 1 || hits["/v1/rooms/"+id+"/archive.jsonl"] != 2 {
		t.Fatalf("requests %v: want the manifest once and the JSONL streamed, then whole", hits)
	}
	src, err := resolveArchive(ctx, srv.URL+"/v1/rooms/"+id+"/archive", ca, defaultArchiveMaxBytes)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := src.verify(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(rep)
	want, _ := json.Marshal(whole)
	if !bytes.Equal(got, want) {
		t.Fatalf("streamed then whole:\n got %s\nwant %s", got, want)
	}
	offOrigin := 0
	for _, p := range rep.Problems {
		if p.Pointer == "/packs/0/url" {
			offOrigin++
		}
	}
	if rep.OK || rep.Layout != adp.ArchiveLayoutCurrent || rep.Records != 6 || offOrigin != 2 {
		// The pack URL is refused twice: not fetched (here), and not on the
		// host origin (adp.VerifyArchive).
		t.Fatalf("report %s", got)
	}
}
