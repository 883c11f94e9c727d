package discourse_test

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	"apconnect/host/hub/internal/discourse"
	"apconnect/host/identity"
	"apconnect/host/proto/adp"
)

// packServer serves the triage pack document over HTTPS on loopback, with
// the import URL as its pack id, and returns that URL, the document, its
// digest and the hub option that trusts the server.
func packServer(t *testing.T) (string, string, string, hubtest.Option) {
	t.Helper()
	var doc string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(doc))
	}))
	t.Cleanup(srv.Close)
	url := srv.URL + "/triage-1.0.json"
	doc = triageDoc(url)
	opt := hubtest.WithOptions(func(o *hub.Options) {
		o.PackFetcher = &adp.HTTPSPackFetcher{Client: srv.Client(), AllowPrivateAddresses: true}
	})
	return url, doc, packDigest(t, doc), opt
}

// triagePack is an external pack document with a hostile title and
// instructions (rendered in the Markdown export); $ID stands for its pack
// id, which is the URL it is imported from.
const triagePack = `{"protocol":"agent-discourse/1.0","packs":[{"id":"$ID","title":"Triage","types":[
 {"type":"triage.label","kind":"signal","title":"<b>Label</b>","instructions":"<script>alert('pack')</script>",
  "schema":{"type":"object","required":["label"],"properties":{"label":{"type":"string"}}}}]}]}
`

// triageDoc is triagePack imported from url.
func triageDoc(url string) string { return strings.ReplaceAll(triagePack, "$ID", url) }

// packDigest is the digest an import of doc carries.
func packDigest(t testing.TB, doc string) string {
	t.Helper()
	return adp.PackDigest([]byte(doc))
}

// hostile are agent-controlled strings that must never render as HTML,
// links or images in the Markdown export.
var hostile = []string{
	"<script>alert(1)</script>",
	"<img src=x onerror=alert(1)>",
	"[click me](javascript:alert(1))",
	"![tracker](https://evil.example/pixel.png)",
	"<!-- hidden comment -->",
	"```\n<script>fence breakout</script>\n```",
	"~~~\n<iframe src=https://evil.example></iframe>\n~~~",
	"`` inline ` breakout ``<svg onload=alert(1)>",
	"<https://evil.example/autolink>",
	"visit https://evil.example/bare now",
	"line one\n\n# injected heading\n<div>html block</div>",
	"nul\x00byte and \u2028 separator",
}

// readArchiveJSONL reads a records-only archive.jsonl (ADP 18 as SDK
// 0.12.6 reads it): every non-blank line is a server record.
func readArchiveJSONL(t *testing.T, body []byte) []*adp.Record {
	t.Helper()
	var recs []*adp.Record
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		rec, err := adp.ParseRecord(line)
		if err != nil {
			t.Fatalf("archive line is not a server record: %v\n%s", err, line)
		}
		recs = append(recs, rec)
	}
	return recs
}

// fetchedArchive is an archive read the way SDK 0.12.6's room_archive
// reads it.
type fetchedArchive struct {
	body     []byte // the manifest as served
	manifest *adp.ArchiveManifest
	records  []*adp.Record
	packs    map[string][]byte // manifest.packs[].pack → the bytes at its url
}

// fetchArchive reads a room's archive as agent a (anonymously when nil):
// the manifest, its formats.jsonl, and every manifest.packs[].url, all on
// the hub's origin.
func (f *fx) fetchArchive(t *testing.T, roomID string, a *hubtest.Agent) *fetchedArchive {
	t.Helper()
	get := func(u string) []byte {
		t.Helper()
		path, ok := strings.CutPrefix(u, f.h.Origin())
		if !ok {
			t.Fatalf("%s is not on the hub's origin %s", u, f.h.Origin())
		}
		r := f.h.Get(t, path, a)
		wantStatus(t, r, 200)
		return r.Body
	}
	body := get(f.h.Origin() + "/v1/rooms/" + roomID + "/archive")
	man, err := adp.ParseArchiveManifest(body)
	if err != nil {
		t.Fatalf("manifest: %v\n%s", err, body)
	}
	out := &fetchedArchive{body: body, manifest: man, records: readArchiveJSONL(t, get(man.Formats["jsonl"])), packs: map[string][]byte{}}
	for _, p := range man.Packs {
		out.packs[p.Pack] = get(p.URL)
	}
	return out
}

// TestArchives: the manifest (provisional while the room lives, fixed once
// it ends, listing the external packs with URLs on the hub), the
// records-only JSONL and the pack documents verifying offline through
// adp.VerifyArchive, redaction reported, and the Markdown export keeping
// every hostile string inside code.
func TestArchives(t *testing.T) {
	t.Parallel()
	packURL, packDoc, digest, opt := packServer(t)
	f := newFx(t, opt)
	as := agents(210, 3)
	creator, sp := as[0], as[1]
	id := f.create(creator, obj{
		"topic": hostile[0], "agenda": hostile[5], "guidance": hostile[3], "tags": arr{hostile[2]},
		"types": arr{obj{"use": "adp:reactions/1.0"}, obj{"pack": packURL, "digest": digest},
			obj{"type": "x.note", "kind": "message", "title": hostile[1], "instructions": hostile[6], "schema": obj{"type": "object"}}},
	})
	f.must(sp, id, adp.TypeRoomJoin, obj{"role": "speaker", "perspective": hostile[7]})
	var redactSeq int64
	for i, h := range hostile {
		a := []*hubtest.Agent{creator, sp}[i%2]
		f.clock.Advance(13 * time.Second) // stay within the message quota
		var rec *adp.Record
		switch i % 3 {
		case 0:
			rec = f.must(a, id, adp.TypeMessageCreate, obj{"content_type": "text/markdown", "content": h})
		case 1:
			rec = f.must(a, id, "x.note", obj{"body": h, "nested": obj{h: arr{h}}})
		default:
			rec = f.must(a, id, "triage.label", obj{"label": h})
		}
		if i == 4 {
			redactSeq = rec.Seq
		}
	}
	_, last := f.h.RoomHead(t, id, nil)

	t.Run("provisional manifest of a live room", func(t *testing.T) {
		r := f.h.Get(t, "/v1/rooms/"+id+"/archive", nil)
		wantStatus(t, r, 200)
		wantShape(t, "archiveManifest", r.Body)
		m := decodeJSON(t, r.Body)
		pin := "?last_seq=" + itoa(last.Seq)
		if m["extra"].(map[string]any)["final"] != false || m["last_seq"] != float64(last.Seq) ||
			m["formats"].(map[string]any)["jsonl"] != f.h.Origin()+"/v1/rooms/"+id+"/archive.jsonl"+pin {
			t.Fatalf("manifest %s", r.Body)
		}
		// The pinned JSONL stays at last_seq after more records.
		f.clock.Advance(13 * time.Second)
		wantStatus(t, f.message(creator, id, "after the manifest"), 200)
		recs := readArchiveJSONL(t, f.h.Get(t, "/v1/rooms/"+id+"/archive.jsonl"+pin, nil).Body)
		if int64(len(recs)) != last.Seq || recs[len(recs)-1].Hash != last.Hash {
			t.Fatalf("pinned JSONL: %d records, want %d", len(recs), last.Seq)
		}
	})

	if _, err := discourse.Redact(context.Background(), f.h.DB(), id, redactSeq); err != nil {
		t.Fatal(err)
	}
	closeRec := f.must(creator, id, adp.TypeRoomClose, obj{"reason": hostile[8]})

	var manifestBody []byte
	t.Run("final manifest", func(t *testing.T) {
		r := f.h.Get(t, "/v1/rooms/"+id+"/archive", nil)
		wantShape(t, "archiveManifest", r.Body)
		m := decodeJSON(t, r.Body)
		if m["generated_at"] != float64(closeRec.AcceptedAt) || m["last_seq"] != float64(closeRec.Seq) || m["last_hash"] != closeRec.Hash ||
			m["extra"].(map[string]any)["final"] != true || m["formats"].(map[string]any)["markdown"] != f.h.Origin()+"/v1/rooms/"+id+"/archive.md" {
			t.Fatalf("final manifest %s", r.Body)
		}
		f.clock.Advance(time.Hour)
		again := f.h.Get(t, "/v1/rooms/"+id+"/archive", nil)
		if string(again.Body) != string(r.Body) {
			t.Fatalf("the final manifest changed:\n%s\n%s", r.Body, again.Body)
		}
		manifestBody = r.Body
	})
	t.Run("records-only JSONL and served packs verify offline, redaction reported", func(t *testing.T) {
		r := f.h.Get(t, "/v1/rooms/"+id+"/archive.jsonl", nil)
		wantStatus(t, r, 200)
		if ct := r.Header.Get("Content-Type"); ct != "application/jsonl" {
			t.Fatalf("Content-Type %q", ct)
		}
		a := f.fetchArchive(t, id, nil)
		if !bytes.Equal(a.body, manifestBody) {
			t.Fatalf("the manifest changed:\n%s\n%s", a.body, manifestBody)
		}
		// D-21: one line per record, nothing else.
		if lines := bytes.Count(bytes.TrimSpace(r.Body), []byte("\n")) + 1; lines != len(a.records) || int64(len(a.records)) != closeRec.Seq {
			t.Fatalf("%d lines, %d records, last seq %d", lines, len(a.records), closeRec.Seq)
		}
		// manifest.packs lists the import with the signed digest and a URL
		// on the hub serving the exact bytes.
		want := []adp.ArchivedPack{{Pack: packURL, Digest: digest, URL: f.h.Origin() + "/v1/rooms/" + id + "/archive/packs/0"}}
		if !reflect.DeepEqual(a.manifest.Packs, want) || string(a.packs[packURL]) != packDoc {
			t.Fatalf("packs %+v, documents %v", a.manifest.Packs, a.packs)
		}
		pr := f.h.Get(t, "/v1/rooms/"+id+"/archive/packs/0", nil)
		if ct := pr.Header.Get("Content-Type"); ct != "application/json" {
			t.Fatalf("pack Content-Type %q", ct)
		}
		rep, err := adp.VerifyArchive(a.manifest, a.records, a.packs, nil)
		if err != nil || !rep.OK() {
			t.Fatalf("archive does not verify: %v %+v", err, rep.Problems)
		}
		if len(rep.Redacted) != 1 || rep.Redacted[0] != redactSeq || rep.Status != adp.RoomEnded || rep.LastHash != closeRec.Hash {
			t.Fatalf("report %+v", rep)
		}
		// Without the pack document the archive does not verify.
		rep, _ = adp.VerifyArchive(a.manifest, a.records, nil, nil)
		if rep.OK() {
			t.Fatal("verified without the external pack document")
		}
		for _, n := range []string{"1", "01", "-1", "x"} {
			wantError(t, f.h.Get(t, "/v1/rooms/"+id+"/archive/packs/"+n, nil), 404, identity.CodeNotFound)
		}
	})
	t.Run("Markdown renders agent content only inside code", func(t *testing.T) {
		r := f.h.Get(t, "/v1/rooms/"+id+"/archive.md", nil)
		wantStatus(t, r, 200)
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/markdown") {
			t.Fatalf("Content-Type %q", ct)
		}
		md := string(r.Body)
		outside, err := outsideCode(md)
		if err != nil {
			t.Fatalf("%v\n%s", err, md)
		}
		for _, bad := range []string{"<", ">", "](", "![", "javascript", "onerror", "onload", "evil.example", "\x00", "injected heading", "&"} {
			if strings.Contains(outside, bad) {
				t.Fatalf("%q appears outside code in the Markdown export:\n%s", bad, outside)
			}
		}
		heading := regexp.MustCompile(`^(# Room archive|## (Agenda|Guidance|Members|Type registry|Records)|### (Record \d+: )?)\s*$`)
		for _, line := range strings.Split(outside, "\n") {
			if strings.HasPrefix(line, "#") && !heading.MatchString(line) {
				t.Fatalf("unexpected heading outside code: %q", line)
			}
		}
		// The content itself is kept (verbatim in fences; NUL and line
		// separators replaced).
		for _, h := range []string{hostile[0], hostile[5], hostile[6], hostile[9]} {
			if !strings.Contains(md, h) {
				t.Fatalf("hostile content %q is missing from the export", h)
			}
		}
		if !strings.Contains(md, "redacted by the host") || !strings.Contains(md, "Redacted records: "+itoa(redactSeq)) {
			t.Fatal("the redaction is not shown")
		}
	})
}

// outsideCode returns the Markdown text outside fenced code blocks and code
// spans, following CommonMark: a fence is 3+ backticks or tildes at the
// start of a line (up to 3 spaces indented) and closes at a line of at least
// as many of the same character; a code span opens with a backtick run and
// closes at the next run of the same length on the same line. An
// unterminated fence is an error.
func outsideCode(md string) (string, error) {
	var out strings.Builder
	lines := strings.Split(md, "\n")
	fenceRe := regexp.MustCompile("^ {0,3}(`{3,}|~{3,})")
	for i := 0; i < len(lines); i++ {
		if m := fenceRe.FindStringSubmatch(lines[i]); m != nil {
			open := m[1]
			closed := false
			for i++; i < len(lines); i++ {
				c := fenceRe.FindStringSubmatch(lines[i])
				if c != nil && c[1][0] == open[0] && len(c[1]) >= len(open) && strings.TrimSpace(lines[i][len(c[0]):]) == "" {
					closed = true
					break
				}
			}
			if !closed {
				return "", errUnterminated
			}
			continue
		}
		out.WriteString(stripSpans(lines[i]))
		out.WriteByte('\n')
	}
	return out.String(), nil
}

var errUnterminated = &unterminated{}

type unterminated struct{}

func (*unterminated) Error() string { return "a fenced code block is not closed" }

// stripSpans removes code spans from one line; an unmatched backtick run is
// kept as text.
func stripSpans(line string) string {
	var out strings.Builder
	for i := 0; i < len(line); {
		if line[i] != '`' {
			out.WriteByte(line[i])
			i++
			continue
		}
		n := 0
		for i+n < len(line) && line[i+n] == '`' {
			n++
		}
		end := -1
		for j := i + n; j < len(line); {
			if line[j] != '`' {
				j++
				continue
			}
			m := 0
			for j+m < len(line) && line[j+m] == '`' {
				m++
			}
			if m == n {
				end = j + m
				break
			}
			j += m
		}
		if end < 0 {
			out.WriteString(line[i : i+n])
			i += n
			continue
		}
		i = end
	}
	return out.String()
}

// TestArchiveOfRoomEndedByTime: a room that ends at end_time gets its
// archive generation time fixed by the housekeeping loop; a cancelled
// room's archive is final too.
func TestArchiveOfRoomEndedByTime(t *testing.T) {
	t.Parallel()
	f := newFx(t, withLimits(func(l *hub.Limits) { l.Discourse.MaintenanceInterval = 10 * time.Millisecond }))
	creator := hubtest.NewAgent(220)
	now := f.clock.Now().UnixMilli()
	id := f.create(creator, obj{"start_time": now - 1000, "end_time": now + 15*60_000})
	wantStatus(t, f.message(creator, id, "only message"), 200)
	f.clock.Advance(16 * time.Minute)
	generated := f.clock.Now().UnixMilli()
	waitFor(t, func() bool {
		var at *int64
		f.h.DB().Reader().QueryRow(`SELECT archived_at FROM adp_rooms WHERE id = ?`, id).Scan(&at)
		return at != nil
	})
	f.clock.Advance(time.Hour)
	m := decodeJSON(t, f.h.Get(t, "/v1/rooms/"+id+"/archive", nil).Body)
	if m["generated_at"] != float64(generated) || m["extra"].(map[string]any)["status"] != "ended" {
		t.Fatalf("manifest %v", m)
	}
	a := f.fetchArchive(t, id, nil)
	if a.manifest.Packs != nil {
		t.Fatalf("packs %+v for a room without external packs", a.manifest.Packs)
	}
	if rep, err := adp.VerifyArchive(a.manifest, a.records, a.packs, nil); err != nil || !rep.OK() || rep.Status != adp.RoomEnded {
		t.Fatalf("%v %+v", err, rep)
	}
}
