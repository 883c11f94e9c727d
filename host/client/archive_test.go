package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"apconnect/host/proto/adp"
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

// packDoc is an external pack document whose pack id is url, with the
// digest an import of it carries.
func packDoc(t *testing.T, url string) ([]byte, string) {
	t.Helper()
	doc, err := json.Marshal(map[string]any{"protocol": "agent-discourse/1.0", "packs": []any{map[string]any{
		"id": url, "title": "P", "types": []any{map[string]any{"type": "p.note", "kind": "message", "title": "Note", "schema": map[string]any{"type": "object"}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	return doc, adp.PackDigest(doc)
}

// TestArchiveDownload: the current layout (D-21) — the manifest, its
// records-only jsonl (pin kept) and every manifest.packs[].url, each read
// with a request JWT.
func TestArchiveDownload(t *testing.T) {
	f := newFake(t)
	f.discovery(nil)
	recs := chain(t, f.origin, 3)
	link := f.origin + "/v1/rooms/room0001/archive.jsonl?last_seq=4"
	man := manifestFor(f.origin, recs, link)
	const pack = "https://packs.example/p.json"
	doc, digest := packDoc(t, pack)
	man["packs"] = []any{map[string]any{"pack": pack, "digest": digest, "url": f.origin + "/v1/rooms/room0001/archive/packs/0"}}
	body := jsonl(t, recs[0].Value(), recs[1].Value(), "", recs[2].Value(), recs[3].Value())
	authed := func(r *http.Request) {
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
			t.Errorf("%s read without a request JWT", r.URL.Path)
		}
	}
	f.handle("GET /v1/rooms/room0001/archive", func(w http.ResponseWriter, r *http.Request) { authed(r); writeJSON(w, 200, man) })
	f.handle("GET /v1/rooms/room0001/archive.jsonl", func(w http.ResponseWriter, r *http.Request) {
		authed(r)
		if r.URL.Query().Get("last_seq") != "4" {
			t.Errorf("pin lost: %v", r.URL.Query())
		}
		w.Header().Set("Content-Type", "application/jsonl")
		_, _ = w.Write([]byte(body))
	})
	f.handle("GET /v1/rooms/room0001/archive/packs/0", func(w http.ResponseWriter, r *http.Request) {
		authed(r)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(doc)
	})
	h := f.host()
	a, err := h.DownloadArchive(ctxT(t), fixtureRoom)
	if err != nil {
		t.Fatal(err)
	}
	if a.Layout != adp.ArchiveLayoutCurrent || len(a.Records) != 4 || a.Manifest.LastSeq != 4 || !bytes.Equal(a.Packs[pack], doc) || len(a.Manifest.Packs) != 1 {
		t.Fatalf("archive %+v", a)
	}
	rep, err := a.Verify(nil)
	if err != nil || !rep.OK() || rep.Records != 4 || rep.LastHash != recs[3].Hash {
		t.Fatalf("report %+v %v", rep, err)
	}
	// A pack served elsewhere is not fetched.
	f.mux.HandleFunc("GET /v1/rooms/room0002/archive", func(w http.ResponseWriter, r *http.Request) {
		m := manifestFor(f.origin, recs, f.origin+"/v1/rooms/room0001/archive.jsonl?last_seq=4")
		m["room_id"] = "room0002"
		m["packs"] = []any{map[string]any{"pack": pack, "digest": digest, "url": "https://cdn.example/p.json"}}
		writeJSON(w, 200, m)
	})
	if _, err := h.DownloadArchive(ctxT(t), "room0002"); !errors.Is(err, ErrOtherOrigin) {
		t.Fatalf("a pack on another origin: %v", err)
	}
}

// TestArchiveDownloadSelfContained: an older apconnect hub's jsonl (the
// manifest line, pack lines, records) is still read, and must agree with
// the manifest endpoint.
func TestArchiveDownloadSelfContained(t *testing.T) {
	f := newFake(t)
	f.discovery(nil)
	recs := chain(t, f.origin, 3)
	link := f.origin + "/v1/rooms/room0001/archive.jsonl"
	man := manifestFor(f.origin, recs, link)
	packLine := map[string]any{"type": "room.archive.pack", "pack": "https://packs.example/p.json", "digest": "sha256:x", "document": "{\"protocol\":\"agent-discourse/1.0\"}"}
	body := jsonl(t, man, packLine, recs[0].Value(), recs[1].Value(), "", recs[2].Value(), recs[3].Value())
	f.handle("GET /v1/rooms/room0001/archive", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, man) })
	f.handle("GET /v1/rooms/room0001/archive.jsonl", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(body)) })
	h := f.host()
	a, err := h.DownloadArchive(ctxT(t), fixtureRoom)
	if err != nil {
		t.Fatal(err)
	}
	if a.Layout != adp.ArchiveLayoutSelfContained || len(a.Records) != 4 || string(a.Packs["https://packs.example/p.json"]) != packLine["document"] {
		t.Fatalf("archive %+v", a)
	}
	if rep, err := a.Verify(nil); err != nil || !rep.OK() {
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
	pack := map[string]any{"type": "room.archive.pack", "pack": "https://p", "document": "{}"}
	// A record with a "type" member of its own is not a record line.
	typed := recs[1].Value()
	typed["type"] = "room.archive.other"
	cases := map[string]string{
		"descending":                    jsonl(t, recs[1].Value(), recs[0].Value()),
		"other room":                    jsonl(t, recs[0].Value(), otherRoom),
		"manifest after a record":       jsonl(t, recs[0].Value(), man),
		"pack line without manifest":    jsonl(t, pack, recs[0].Value()),
		"self-contained, descending":    jsonl(t, man, recs[1].Value(), recs[0].Value()),
		"self-contained, pack after":    jsonl(t, man, recs[0].Value(), pack),
		"self-contained, no document":   jsonl(t, man, map[string]any{"type": "room.archive.pack", "pack": "https://p"}),
		"self-contained, two documents": jsonl(t, man, pack, map[string]any{"type": "room.archive.pack", "pack": "https://p", "document": "{ }"}),
		"unknown line type":             jsonl(t, recs[0].Value(), typed),
		"garbage line":                  jsonl(t, recs[0].Value(), "{nope"),
		"array line":                    jsonl(t, "[]"),
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFake(t)
			f.discovery(nil)
			f.handle("GET /a.jsonl", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(body)) })
			_, err := f.host().ArchiveRecords(ctxT(t), f.origin+"/a.jsonl", fixtureRoom)
			var re *ResponseError
			if !errors.As(err, &re) {
				t.Fatalf("err %T %v", err, err)
			}
		})
	}
	t.Run("the same pack line twice is kept once", func(t *testing.T) {
		a, err := ReadArchiveJSONL(strings.NewReader(jsonl(t, man, pack, pack, recs[0].Value())), "")
		if err != nil || a.Layout != adp.ArchiveLayoutSelfContained || len(a.Packs) != 1 || string(a.Packs["https://p"]) != "{}" || len(a.Records) != 1 {
			t.Fatalf("%+v %v", a, err)
		}
	})
	t.Run("records only and empty are fine", func(t *testing.T) {
		for body, n := range map[string]int{jsonl(t, recs[0].Value(), recs[1].Value()): 2, "": 0, "\n\n": 0} {
			a, err := ReadArchiveJSONL(strings.NewReader(body), "")
			if err != nil || len(a.Records) != n || a.Layout != adp.ArchiveLayoutCurrent || a.Manifest != nil {
				t.Fatalf("%q: %+v %v", body, a, err)
			}
		}
	})
	t.Run("other origin", func(t *testing.T) {
		f := newFake(t)
		f.discovery(nil)
		_, err := f.host().ArchiveRecords(ctxT(t), "https://evil.example/a.jsonl", "")
		if !errors.Is(err, ErrOtherOrigin) {
			t.Fatalf("err %v", err)
		}
		if _, err := f.host().ArchiveRecords(ctxT(t), f.origin+"/a.jsonl#frag", ""); err == nil {
			t.Fatal("fragment accepted")
		}
	})
	t.Run("oversized", func(t *testing.T) {
		f := newFake(t)
		f.discovery(nil)
		body := jsonl(t, recs[0].Value(), recs[1].Value(), recs[2].Value())
		f.handle("GET /a.jsonl", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(body)) })
		_, err := f.host(func(o *Options) { o.MaxArchiveBytes = int64(len(body)) - 1 }).ArchiveRecords(ctxT(t), f.origin+"/a.jsonl", "")
		if !errors.Is(err, ErrResponseTooLarge) {
			t.Fatalf("err %v", err)
		}
		// Exactly at the bound is fine.
		a, err := f.host(func(o *Options) { o.MaxArchiveBytes = int64(len(body)) }).ArchiveRecords(ctxT(t), f.origin+"/a.jsonl", "")
		if err != nil || len(a.Records) != 3 {
			t.Fatalf("at the bound: %v", err)
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
