package client

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"apconnect/host/adp"
)

// Archive format faults come from an httptest TLS fake; TestHubArchive
// reads a real archive from the hub.

func manifestFor(origin string, recs []*adp.Record, jsonl string) map[string]any {
	last := recs[len(recs)-1]
	return map[string]any{"protocol": "agent-discourse/1.0", "type": "room.archive", "room_id": fixtureRoom,
		"url": origin + "/v1/rooms/" + fixtureRoom, "generated_at": fixtureT0 + 10_000, "last_seq": last.Seq, "last_hash": last.Hash,
		"formats": map[string]any{"jsonl": jsonl}, "extra": map[string]any{"final": true}}
}

func jsonl(t *testing.T, lines ...any) string {
	var b strings.Builder
	for _, l := range lines {
		if s, ok := l.(string); ok {
			b.WriteString(s)
		} else {
			enc, err := json.Marshal(l)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(enc)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func TestArchiveDownload(t *testing.T) {
	f := newFake(t)
	f.discovery(nil)
	recs := chain(t, f.origin, 3)
	link := f.origin + "/v1/rooms/room0001/archive.jsonl?last_seq=4"
	man := manifestFor(f.origin, recs, link)
	pack := map[string]any{"type": "room.archive.pack", "pack": "https://packs.example/p.json", "digest": "sha256:x", "document": "{\"protocol\":\"agent-discourse/1.0\"}"}
	body := jsonl(t, man, pack, recs[0].Value(), recs[1].Value(), "", recs[2].Value(), recs[3].Value())
	f.handle("GET /v1/rooms/room0001/archive", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, man) })
	f.handle("GET /v1/rooms/room0001/archive.jsonl", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("last_seq") != "4" {
			t.Errorf("pin lost: %v", r.URL.Query())
		}
		w.Header().Set("Content-Type", "application/jsonl")
		_, _ = w.Write([]byte(body))
	})
	h := f.host()
	a, err := h.DownloadArchive(ctxT(t), fixtureRoom)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Records) != 4 || a.Manifest.LastSeq != 4 || string(a.Packs["https://packs.example/p.json"]) != pack["document"] {
		t.Fatalf("archive %+v", a)
	}
	rep, err := adp.VerifyArchive(a.Manifest, a.Records, nil, nil)
	if err != nil || !rep.OK() || rep.Records != 4 || rep.LastHash != recs[3].Hash {
		t.Fatalf("report %+v %v", rep, err)
	}
	// A manifest from the JSON endpoint whose jsonl disagrees is refused.
	stale := manifestFor(f.origin, recs[:3], link)
	f.mux.HandleFunc("GET /v1/rooms/room0002/archive", func(w http.ResponseWriter, r *http.Request) {
		stale["room_id"] = "room0002"
		writeJSON(w, 200, stale)
	})
	if _, err := h.DownloadArchive(ctxT(t), "room0002"); err == nil {
		t.Fatal("a jsonl archive of another room was accepted")
	}
}

func TestArchiveRefusals(t *testing.T) {
	recs := chain(t, "https://example.invalid", 2)
	man := manifestFor("https://example.invalid", recs, "https://example.invalid/x")
	otherRoom := recs[2].Value()
	otherRoom["room_id"] = "room0002"
	cases := map[string]string{
		"no manifest":       jsonl(t, recs[0].Value()),
		"empty":             "",
		"descending":        jsonl(t, man, recs[1].Value(), recs[0].Value()),
		"other room":        jsonl(t, man, recs[0].Value(), otherRoom),
		"pack after record": jsonl(t, man, recs[0].Value(), map[string]any{"type": "room.archive.pack", "pack": "https://p", "document": "{}"}),
		"pack no document":  jsonl(t, man, map[string]any{"type": "room.archive.pack", "pack": "https://p"}),
		"garbage line":      jsonl(t, man, "{nope"),
		"array line":        jsonl(t, man, "[]"),
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFake(t)
			f.discovery(nil)
			f.handle("GET /a.jsonl", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(body)) })
			_, err := f.host().ArchiveRecords(ctxT(t), f.origin+"/a.jsonl")
			var re *ResponseError
			if !errors.As(err, &re) {
				t.Fatalf("err %T %v", err, err)
			}
		})
	}
	t.Run("other origin", func(t *testing.T) {
		f := newFake(t)
		f.discovery(nil)
		_, err := f.host().ArchiveRecords(ctxT(t), "https://evil.example/a.jsonl")
		if !errors.Is(err, ErrOtherOrigin) {
			t.Fatalf("err %v", err)
		}
		if _, err := f.host().ArchiveRecords(ctxT(t), f.origin+"/a.jsonl#frag"); err == nil {
			t.Fatal("fragment accepted")
		}
	})
	t.Run("oversized", func(t *testing.T) {
		f := newFake(t)
		f.discovery(nil)
		f.handle("GET /a.jsonl", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(jsonl(t, man, recs[0].Value(), recs[1].Value(), recs[2].Value())))
		})
		_, err := f.host(func(o *Options) { o.MaxArchiveBytes = 2048 }).ArchiveRecords(ctxT(t), f.origin+"/a.jsonl")
		if !errors.Is(err, ErrResponseTooLarge) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("manifest of another room", func(t *testing.T) {
		f := newFake(t)
		f.discovery(nil)
		f.handle("GET /v1/rooms/room0002/archive", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, man) })
		if _, err := f.host().Archive(ctxT(t), "room0002"); err == nil {
			t.Fatal("manifest of room0001 accepted for room0002")
		}
	})
}
