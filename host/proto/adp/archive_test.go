package adp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"
)

// manifestFor is the current-layout manifest of the fixture's records: the
// jsonl and markdown formats and every imported external pack served from
// {room}/archive/packs/{n}, as the hub lays it out.
func manifestFor(f *fixture) *ArchiveManifest {
	last := f.records[len(f.records)-1]
	room := testHost + "/v1/rooms/" + testRoom
	m := &ArchiveManifest{
		Protocol: Protocol, Type: "room.archive", RoomID: testRoom,
		URL: room, GeneratedAt: tEnd + 1000, LastSeq: last.Seq, LastHash: last.Hash,
		Formats: map[string]string{"jsonl": room + "/archive.jsonl", "markdown": room + "/archive.md"},
	}
	refs, _ := ReferencedPacks(f.records)
	for i, u := range sortedKeys(refs) {
		m.Packs = append(m.Packs, ArchivedPack{Pack: u, Digest: refs[u], URL: fmt.Sprintf("%s/archive/packs/%d", room, i)})
	}
	return m
}

// archivePack is an external pack document whose one pack has the import
// URL as its id (the pack a reader takes from it).
func archivePack(t testing.TB, id string) []byte {
	t.Helper()
	b, err := json.Marshal(obj{"protocol": "agent-discourse/1.0", "packs": arr{obj{
		"id": id, "title": "Triage",
		"types": arr{obj{"type": "triage.label", "kind": "signal", "title": "Label", "schema": obj{
			"type": "object", "required": arr{"label"}, "properties": obj{"label": obj{"type": "string"}},
		}}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// archiveDigest is the digest an import of doc carries.
func archiveDigest(t testing.TB, doc []byte) string {
	t.Helper()
	return PackDigest(doc)
}

// cloneRecords deep-copies records through their JSON form.
func cloneRecords(t *testing.T, recs []*Record) []*Record {
	t.Helper()
	out := make([]*Record, len(recs))
	for i, r := range recs {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if out[i], err = ParseRecord(b); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestVerifyArchive(t *testing.T) {
	const url = "https://packs.example/triage-1.0.json"
	doc := archivePack(t, url)
	f := busyRoom(t)
	f.rules.Packs = StaticPacks{url: doc}
	f.must("creator", TypeTypeDefine, obj{"pack": url, "digest": archiveDigest(t, doc)})
	f.must("alice", "triage.label", obj{"label": "bug"})
	f.must("creator", TypeRoomClose, obj{})
	docs := map[string][]byte{url: doc}

	t.Run("clean", func(t *testing.T) {
		rep, err := VerifyArchive(manifestFor(f), f.records, docs, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !rep.OK() {
			t.Fatalf("problems %+v", rep.Problems)
		}
		if len(rep.Redacted) != 1 || rep.Status != RoomEnded || rep.LastSeq != int64(len(f.records)) {
			t.Fatalf("report %+v", rep)
		}
		// Host limits can be applied too.
		lim := DefaultLimits()
		rep, _ = VerifyArchive(manifestFor(f), f.records, docs, &ArchiveOptions{Limits: &lim})
		if !rep.OK() {
			t.Fatalf("problems under host limits %+v", rep.Problems)
		}
	})

	t.Run("missing pack document", func(t *testing.T) {
		rep, _ := VerifyArchive(manifestFor(f), f.records, nil, nil)
		codes := problemCodes(rep)
		if !slices.Contains(codes, CodePackUnavailable) || !slices.Contains(codes, CodeTypeNotDefined) {
			t.Fatalf("problems %+v", rep.Problems)
		}
	})

	t.Run("every problem is reported", func(t *testing.T) {
		recs := cloneRecords(t, f.records)
		n := len(recs)
		recs[2].AcceptedAt++                                    // hash no longer matches: seq 3
		recs[4].Envelope.Signature = recs[5].Envelope.Signature // seq 5
		recs = slices.Delete(recs, 7, 8)                        // seq 8 missing
		recs = append(recs, recs[9])                            // a duplicate
		m := manifestFor(f)
		m.LastHash = recs[0].Hash
		rep, err := VerifyArchive(m, recs, docs, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := []Problem{
			{Seq: 0, Code: CodeChainBroken, Pointer: "/last_hash"},
			{Seq: 3, Code: CodeInvalidRecord, Pointer: "/hash"},
			{Seq: 5, Code: CodeInvalidSignature, Pointer: "/envelope/signature"},
			{Seq: 9, Code: CodeChainBroken, Pointer: "/seq"},  // seq 8 missing
			{Seq: 11, Code: CodeChainBroken, Pointer: "/seq"}, // duplicate
		}
		for _, w := range want {
			found := false
			for _, p := range rep.Problems {
				if p.Seq == w.Seq && p.Code == w.Code && p.Pointer == w.Pointer {
					found = true
				}
			}
			if !found {
				t.Errorf("missing problem %+v in %+v", w, rep.Problems)
			}
		}
		if rep.Records != n {
			t.Errorf("records %d", rep.Records)
		}
	})

	t.Run("a record the host should have rejected", func(t *testing.T) {
		g := activeRoom(t, nil)
		// A faulty host accepts an observer's message without Check.
		env := g.event("olga", TypeMessageCreate, obj{"content_type": "text/plain", "content": "sneaky"})
		rec, err := NewRecord(testRoom, g.room.Last.Link(), g.now, env)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.room.Apply(g.rules, rec); err != nil {
			t.Fatal(err)
		}
		g.records = append(g.records, rec)
		g.must("alice", TypeMessageCreate, obj{"content_type": "text/plain", "content": "after"})
		rep := Replay(nil, g.records)
		if len(rep.Problems) != 1 || rep.Problems[0].Seq != rec.Seq || rep.Problems[0].Code != CodePermissionDenied || rep.Problems[0].Pointer != "/envelope/event/actor" {
			t.Fatalf("problems %+v", rep.Problems)
		}
	})

	t.Run("a redacted membership record", func(t *testing.T) {
		recs := cloneRecords(t, f.records)
		recs[1].Envelope, recs[1].Redaction = nil, &Redaction{Hash: recs[1].Envelope.Hash, Type: TypeRoomJoin}
		rep := Replay(nil, recs)
		if !slices.Contains(problemCodes(rep), CodeInvalidRecord) {
			t.Fatalf("problems %+v", rep.Problems)
		}
	})

	t.Run("manifest of another host", func(t *testing.T) {
		m := manifestFor(f)
		m.URL = "https://elsewhere.example/v1/rooms/" + testRoom
		rep, _ := VerifyArchive(m, f.records, docs, nil)
		// room.create names another host, and the jsonl and pack URLs are
		// not on the manifest's origin.
		want := map[string]string{"/formats/jsonl": CodeInvalidRequest, "/packs/0/url": CodePackUnavailable}
		for _, p := range rep.Problems {
			if p.Seq == 1 && p.Code == CodeHostMismatch {
				delete(want, "host")
				continue
			}
			if want[p.Pointer] != p.Code {
				t.Fatalf("unexpected problem %+v", p)
			}
			delete(want, p.Pointer)
		}
		if len(want) != 0 || len(rep.Problems) != 3 {
			t.Fatalf("problems %+v", rep.Problems)
		}
	})

	t.Run("external packs (step 4)", func(t *testing.T) {
		other := archivePack(t, "https://packs.example/other.json")
		for _, c := range []struct {
			name    string
			edit    func(m *ArchiveManifest, docs map[string][]byte, o *ArchiveOptions)
			pointer string // "" when the archive verifies
		}{
			{"listed and served", func(*ArchiveManifest, map[string][]byte, *ArchiveOptions) {}, ""},
			{"not listed", func(m *ArchiveManifest, _ map[string][]byte, _ *ArchiveOptions) { m.Packs = nil }, "/packs"},
			{"not listed, self-contained layout", func(m *ArchiveManifest, _ map[string][]byte, o *ArchiveOptions) {
				m.Packs, o.SelfContained = nil, true
			}, ""},
			{"digest differs from the signed import", func(m *ArchiveManifest, _ map[string][]byte, _ *ArchiveOptions) {
				m.Packs[0].Digest = archiveDigest(t, other)
			}, "/packs/0/digest"},
			{"served on another origin", func(m *ArchiveManifest, _ map[string][]byte, _ *ArchiveOptions) {
				m.Packs[0].URL = "https://cdn.example/p.json"
			}, "/packs/0/url"},
			{"bytes do not match", func(_ *ArchiveManifest, d map[string][]byte, _ *ArchiveOptions) {
				d[url] = append(bytes.Clone(doc), ' ')
			}, "/packs/0/digest"},
			{"no pack with the import URL as id", func(m *ArchiveManifest, d map[string][]byte, _ *ArchiveOptions) {
				d[url] = other
				m.Packs[0].Digest = archiveDigest(t, other)
			}, "/packs/0/pack"},
			{"document not provided", func(_ *ArchiveManifest, d map[string][]byte, _ *ArchiveOptions) { delete(d, url) }, "/packs/0"},
			{"jsonl on another origin", func(m *ArchiveManifest, _ map[string][]byte, _ *ArchiveOptions) {
				m.Formats["jsonl"] = "https://cdn.example/a.jsonl"
			}, "/formats/jsonl"},
		} {
			t.Run(c.name, func(t *testing.T) {
				m, d, o := manifestFor(f), map[string][]byte{url: doc}, &ArchiveOptions{}
				c.edit(m, d, o)
				rep, err := VerifyArchive(m, f.records, d, o)
				if err != nil {
					t.Fatal(err)
				}
				if c.pointer == "" {
					if !rep.OK() {
						t.Fatalf("problems %+v", rep.Problems)
					}
					return
				}
				found := false
				for _, p := range rep.Problems {
					found = found || p.Seq == 0 && p.Pointer == c.pointer
				}
				if !found {
					t.Fatalf("no problem at %s: %+v", c.pointer, rep.Problems)
				}
			})
		}
	})

	t.Run("one URL imported with two digests", func(t *testing.T) {
		recs := cloneRecords(t, f.records)
		var define *Record
		for _, r := range recs {
			if r.Type() == TypeTypeDefine {
				define = r
			}
		}
		twin := *define
		env := *define.Envelope
		env.Event.Payload = obj{"pack": url, "digest": archiveDigest(t, []byte("another version"))}
		twin.Envelope, twin.Seq = &env, define.Seq+100
		refs, problems := ReferencedPacks(append(recs, &twin))
		if refs[url] != archiveDigest(t, doc) || len(problems) != 1 || problems[0].Seq != twin.Seq || problems[0].Code != CodePackUnavailable {
			t.Fatalf("refs %v problems %+v", refs, problems)
		}
	})

	t.Run("manifest fields", func(t *testing.T) {
		m := manifestFor(f)
		m.Protocol, m.Type, m.RoomID, m.LastSeq = "x", "y", "other", 2
		rep, _ := VerifyArchive(m, f.records, docs, &ArchiveOptions{HostOrigin: testHost})
		if got := problemCodes(rep); len(got) != 5 {
			t.Fatalf("problems %+v", rep.Problems)
		}
		if _, err := VerifyArchive(nil, f.records, docs, nil); ErrorCode(err) != CodeInvalidRequest {
			t.Fatal(err)
		}
	})

	t.Run("manifest parsing", func(t *testing.T) {
		want := manifestFor(f)
		b, _ := json.Marshal(want)
		m, err := ParseArchiveManifest(b)
		if err != nil || m.LastHash != f.records[len(f.records)-1].Hash || !reflect.DeepEqual(m.Packs, want.Packs) ||
			!reflect.DeepEqual(m.Formats, want.Formats) || len(m.Packs) != 1 {
			t.Fatalf("%v %+v", err, m)
		}
		_, err = ParseArchiveManifest([]byte(`{"protocol":"agent-discourse/1.0","type":"room.archive"}`))
		wantCode(t, err, CodeInvalidRequest)
		// formats.jsonl is required (0.12.6), and archived packs are closed.
		for _, edit := range []func(m map[string]any){
			func(m map[string]any) { delete(m, "formats") },
			func(m map[string]any) { m["formats"] = obj{"markdown": want.Formats["markdown"]} },
			func(m map[string]any) { m["formats"] = obj{"jsonl": "http://x.example/a.jsonl"} },
			func(m map[string]any) { m["packs"].([]any)[0].(map[string]any)["document"] = "{}" },
			func(m map[string]any) { delete(m["packs"].([]any)[0].(map[string]any), "url") },
		} {
			var m map[string]any
			json.Unmarshal(b, &m)
			edit(m)
			bad, _ := json.Marshal(m)
			_, err := ParseArchiveManifest(bad)
			wantCode(t, err, CodeInvalidRequest)
		}
	})

	t.Run("without genesis signatures still verify", func(t *testing.T) {
		recs := cloneRecords(t, f.records)[1:]
		recs[2].Envelope.Signature = recs[3].Envelope.Signature
		rep := Replay(nil, recs)
		if len(rep.Problems) != 2 || rep.Problems[0].Code != CodeChainBroken || rep.Problems[1].Code != CodeInvalidSignature || rep.Problems[1].Seq != 4 {
			t.Fatalf("problems %+v", rep.Problems)
		}
		if rep.Room != nil {
			t.Fatal("a room without genesis")
		}
	})

	t.Run("empty", func(t *testing.T) {
		if rep := Replay(nil, nil); rep.OK() {
			t.Fatal("an empty archive verified")
		}
	})
}

func problemCodes(rep *ArchiveReport) []string {
	var out []string
	for _, p := range rep.Problems {
		out = append(out, p.Code)
	}
	return out
}
