package adp

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func TestParseArchiveLine(t *testing.T) {
	f := newFixture(t, nil)
	rec := f.records[0]
	man := snapshot(t, manifestFor(f))

	t.Run("kinds", func(t *testing.T) {
		l, err := ParseArchiveLine(man)
		if err != nil || l.Type != ArchiveManifestType || l.Manifest == nil || l.Manifest.RoomID != testRoom || l.Record != nil || l.Pack != "" {
			t.Fatalf("manifest line: %+v %v", l, err)
		}
		l, err = ParseArchiveLine(snapshot(t, rec))
		if err != nil || l.Type != "" || l.Record == nil || l.Record.Hash != rec.Hash || l.Seq != 1 || l.Manifest != nil {
			t.Fatalf("record line: %+v %v", l, err)
		}
		l, err = ParseArchiveLine([]byte(`{"type":"room.archive.pack","pack":"https://p.example/a","digest":"sha256:x","document":"{\"a\":1}"}`))
		if err != nil || l.Type != ArchivePackLineType || l.Pack != "https://p.example/a" || string(l.Document) != `{"a":1}` || l.Record != nil {
			t.Fatalf("pack line: %+v %v", l, err)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		bad := rec.Value()
		bad["hash"] = "sha256:" + string(bytes.Repeat([]byte("0"), 64))
		cases := []struct {
			name, line, code string
			seq              int64
		}{
			{"not JSON", `{nope`, CodeInvalidRecord, 0},
			{"duplicate key", `{"seq":1,"seq":2}`, CodeInvalidRecord, 0},
			{"not an object", `[1]`, CodeInvalidRecord, 0},
			{"unknown type", `{"type":"room.other"}`, CodeInvalidRecord, 0},
			{"non-string type", `{"type":7}`, CodeInvalidRecord, 0},
			{"bad manifest", `{"type":"room.archive","protocol":"agent-discourse/1.0"}`, CodeInvalidRequest, 0},
			{"pack without document", `{"type":"room.archive.pack","pack":"https://p"}`, CodePackUnavailable, 0},
			{"pack without URL", `{"type":"room.archive.pack","pack":"","document":"{}"}`, CodePackUnavailable, 0},
			{"bad record keeps its seq", string(snapshot(t, bad)), CodeInvalidRecord, 1},
			{"record without seq", `{"room_id":"r"}`, CodeInvalidRecord, 0},
		}
		for _, c := range cases {
			l, err := ParseArchiveLine([]byte(c.line))
			if _, ok := err.(*Error); !ok {
				t.Errorf("%s: err %T %v, want an *Error", c.name, err, err)
				continue
			}
			if ErrorCode(err) != c.code || l.Seq != c.seq || l.Record != nil || l.Manifest != nil {
				t.Errorf("%s: %+v %v, want code %s seq %d", c.name, l, err, c.code, c.seq)
			}
		}
	})

	t.Run("in parallel equals one by one", func(t *testing.T) {
		var lines [][]byte
		for i := range 100 { // enough lines for several workers
			switch i % 3 {
			case 0:
				lines = append(lines, snapshot(t, rec))
			case 1:
				lines = append(lines, []byte(`{nope`))
			default:
				lines = append(lines, man)
			}
		}
		got, errs := ParseArchiveLines(lines)
		for i, line := range lines {
			want, werr := ParseArchiveLine(line)
			if !reflect.DeepEqual(got[i], want) || ErrorCode(errs[i]) != ErrorCode(werr) || (errs[i] == nil) != (werr == nil) {
				t.Fatalf("line %d: %+v %v, want %+v %v", i, got[i], errs[i], want, werr)
			}
		}
	})
}

func TestArchiveLines(t *testing.T) {
	f := newFixture(t, nil)
	f.must("alice", TypeRoomJoin, obj{"role": "speaker"})
	r1, r2 := snapshot(t, f.records[0]), snapshot(t, f.records[1])
	man := snapshot(t, manifestFor(f))
	pack := func(u, doc string) []byte {
		return snapshot(t, obj{"type": ArchivePackLineType, "pack": u, "digest": "sha256:x", "document": doc})
	}
	// feed takes lines in order and returns the records handed on and the
	// codes of the refused lines ("" for a taken line).
	feed := func(s *ArchiveLines, lines ...[]byte) (recs []*Record, codes []string) {
		for _, line := range lines {
			rec, err := s.Take(ParseArchiveLine(line))
			if err != nil && rec != nil {
				t.Fatalf("a record and an error: %v", err)
			}
			if rec != nil {
				recs = append(recs, rec)
			}
			codes = append(codes, ErrorCode(err))
		}
		return recs, codes
	}

	t.Run("self-contained", func(t *testing.T) {
		var s ArchiveLines
		recs, codes := feed(&s, man, pack("https://p/a", "A"), pack("https://p/b", "B"), r1, r2)
		if !reflect.DeepEqual(codes, []string{"", "", "", "", ""}) || len(recs) != 2 || recs[1].Seq != 2 {
			t.Fatalf("codes %v, %d records", codes, len(recs))
		}
		if s.Layout() != ArchiveLayoutSelfContained || s.Manifest() == nil || s.Manifest().LastSeq != 2 ||
			!reflect.DeepEqual(s.Packs(), map[string][]byte{"https://p/a": []byte("A"), "https://p/b": []byte("B")}) {
			t.Fatalf("layout %s manifest %+v packs %q", s.Layout(), s.Manifest(), s.Packs())
		}
	})
	t.Run("records only", func(t *testing.T) {
		var s ArchiveLines
		recs, codes := feed(&s, r1, r2)
		if !reflect.DeepEqual(codes, []string{"", ""}) || len(recs) != 2 || s.Layout() != ArchiveLayoutRecordsOnly || s.Manifest() != nil || s.Packs() != nil {
			t.Fatalf("codes %v, %d records, layout %s", codes, len(recs), s.Layout())
		}
	})
	t.Run("ordering", func(t *testing.T) {
		cases := map[string]struct {
			lines [][]byte
			codes []string
		}{
			"manifest after a record":      {[][]byte{r1, man}, []string{"", CodeInvalidRequest}},
			"manifest after a bad line":    {[][]byte{[]byte("{nope"), man, r1}, []string{CodeInvalidRecord, CodeInvalidRequest, ""}},
			"two manifests":                {[][]byte{man, man}, []string{"", CodeInvalidRequest}},
			"pack line without a manifest": {[][]byte{pack("https://p/a", "A"), r1}, []string{CodePackUnavailable, ""}},
			"pack line after the records":  {[][]byte{man, r1, pack("https://p/a", "A")}, []string{"", "", CodePackUnavailable}},
			"the same pack line twice":     {[][]byte{man, pack("https://p/a", "A"), pack("https://p/a", "A"), r1}, []string{"", "", "", ""}},
			"two documents for a pack":     {[][]byte{man, pack("https://p/a", "A"), pack("https://p/a", "B"), r1}, []string{"", "", CodePackUnavailable, ""}},
			"a bad manifest is no layout":  {[][]byte{[]byte(`{"type":"room.archive"}`), pack("https://p/a", "A")}, []string{CodeInvalidRequest, CodePackUnavailable}},
		}
		for name, c := range cases {
			var s ArchiveLines
			_, codes := feed(&s, c.lines...)
			if !reflect.DeepEqual(codes, c.codes) {
				t.Errorf("%s: codes %q, want %q", name, codes, c.codes)
			}
		}
		// Place is checked before content: a bad manifest or pack line out
		// of place is reported as out of place.
		var p ArchiveLines
		feed(&p, r1)
		if _, err := p.Take(ParseArchiveLine([]byte(`{"type":"room.archive"}`))); err == nil || !strings.Contains(err.Error(), "only allowed first") {
			t.Errorf("a bad manifest after a record: %v", err)
		}
		if _, err := p.Take(ParseArchiveLine([]byte(`{"type":"room.archive.pack"}`))); err == nil || !strings.Contains(err.Error(), "belongs to the self-contained layout") {
			t.Errorf("a bad pack line without a manifest: %v", err)
		}
		// The document kept for a pack refused a second time is the first.
		var s ArchiveLines
		feed(&s, man, pack("https://p/a", "A"), pack("https://p/a", "B"))
		if string(s.Packs()["https://p/a"]) != "A" {
			t.Fatalf("packs %q", s.Packs())
		}
	})
}
