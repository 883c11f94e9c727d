package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"apconnect/host/adp"
	"apconnect/host/identity"
)

// archiveChunk is how many lines verify-archive parses and verifies at a
// time: the lines of a chunk are parsed, and their hashes and signatures
// checked, on every core; the replay takes them in order. Memory holds one
// chunk, not the archive.
var archiveChunk = 512

// verifyArchiveSource verifies the archive at src (see loadArchive for the
// sources) as it streams in, through adp.ArchiveStream. An archive whose
// records are out of seq order cannot be verified that way: it is read
// again whole and verified sorted (loadArchive, adp.VerifyArchive), which
// reports the same.
func verifyArchiveSource(ctx context.Context, src, caFile string, maxBytes int64) (*archiveReport, error) {
	rep, err := streamArchive(ctx, src, caFile, maxBytes)
	if errors.Is(err, adp.ErrOutOfOrder) {
		a, err := loadArchive(ctx, src, caFile, maxBytes)
		if err != nil {
			return nil, err
		}
		return a.verify(), nil
	}
	return rep, err
}

// streamArchive is loadArchive and verify without holding the archive.
func streamArchive(ctx context.Context, src, caFile string, maxBytes int64) (*archiveReport, error) {
	if strings.HasPrefix(src, "http://") {
		return nil, usageError{"archives are fetched over https only"}
	}
	if !strings.HasPrefix(src, "https://") {
		if caFile != "" {
			return nil, usageError{"--ca applies to https URLs only"}
		}
		f, err := os.Open(src)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		s := newArchiveStreamer(src, nil, nil)
		if err := s.read(f, maxBytes, func() error { return fmt.Errorf("%s is larger than --max-bytes %d", src, maxBytes) }); err != nil {
			return nil, err
		}
		return s.report(), nil
	}
	client, err := archiveClient(caFile)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(src)
	if err != nil || u.Host == "" {
		return nil, usageError{fmt.Sprintf("%q is not a URL", src)}
	}
	if strings.HasSuffix(u.Path, "/archive.jsonl") {
		s := newArchiveStreamer(src, nil, nil)
		if err := s.fetch(ctx, client, u.String(), maxBytes); err != nil {
			return nil, err
		}
		return s.report(), nil
	}
	if !strings.HasSuffix(u.Path, "/archive") {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/archive"
	}
	mdata, err := fetch(ctx, client, u.String(), maxBytes)
	if err != nil {
		return nil, err
	}
	manifest, err := adp.ParseArchiveManifest(mdata)
	if err != nil {
		return nil, fmt.Errorf("%s is not an archive manifest: %w", u, err)
	}
	jsonl, ok := manifest.Formats["jsonl"]
	if !ok {
		return nil, fmt.Errorf("the manifest at %s lists no jsonl format; nothing to verify the records from", u)
	}
	ju, err := url.Parse(jsonl)
	if err != nil || ju.Scheme != "https" || ju.Host != u.Host {
		return nil, fmt.Errorf("the manifest's jsonl format %q is not on the manifest's origin %s; refusing to follow it", jsonl, u.Host)
	}
	// The current layout's pack documents are fetched once the JSONL shows
	// it is not an older hub's self-contained file, before any record.
	packs := func(a *loadedArchive) {
		for i, p := range manifest.Packs {
			if _, done := a.packs[p.Pack]; done {
				continue // listed twice; VerifyArchive reports a conflict
			}
			pu, err := url.Parse(p.URL)
			if err != nil || pu.Scheme != "https" || pu.Host != u.Host {
				a.problems = append(a.problems, adp.Problem{Code: adp.CodePackUnavailable, Pointer: fmt.Sprintf("/packs/%d/url", i),
					Message: fmt.Sprintf("pack URL %q is not on the manifest's origin %s; not fetched", p.URL, u.Host)})
				continue
			}
			doc, err := fetch(ctx, client, pu.String(), min(maxBytes, maxPackBytes))
			if err != nil {
				a.problems = append(a.problems, adp.Problem{Code: adp.CodePackUnavailable, Pointer: fmt.Sprintf("/packs/%d/url", i),
					Message: err.Error()})
				continue
			}
			a.packs[p.Pack] = doc
		}
	}
	s := newArchiveStreamer(u.String(), manifest, packs)
	s.jsonlURL = ju.String()
	if err := s.fetch(ctx, client, ju.String(), maxBytes); err != nil {
		return nil, err
	}
	return s.report(), nil
}

// archiveStreamer reads an archive's JSON Lines a chunk at a time and feeds
// its records to an adp.ArchiveStream (or, without a manifest, keeps them
// for adp.Replay, which cannot verify such an archive anyway).
type archiveStreamer struct {
	a        *loadedArchive
	fetched  *adp.ArchiveManifest   // the manifest of a current-layout URL
	packs    func(a *loadedArchive) // fetches the current layout's pack documents
	jsonlURL string                 // where the JSONL of a current-layout URL was read
	lines    jsonlLines             // the line reader
	st       *adp.ArchiveStream     // nil until the first record, and without a manifest
	started  bool                   // start ran
	late     []adp.Problem          // problems found at the start, reported after the parse problems
	held     []*adp.Record          // the records of an archive without a manifest
	stErr    error                  // the stream refused records (out of order)
}

func newArchiveStreamer(src string, fetched *adp.ArchiveManifest, packs func(a *loadedArchive)) *archiveStreamer {
	s := &archiveStreamer{a: &loadedArchive{source: src, layout: layoutRecordsOnly, packs: map[string][]byte{}}, fetched: fetched, packs: packs}
	s.lines = jsonlLines{a: s.a, start: s.start, sink: s.sink, sinkChecked: s.sinkChecked, check: true}
	return s
}

// start runs before the first record: the layout is known, the pack
// documents are complete.
func (s *archiveStreamer) start() {
	if s.started {
		return
	}
	s.started = true
	a := s.a
	if s.fetched != nil {
		problems := a.problems
		a.problems = nil
		if a.layout == layoutSelfContained {
			// An older hub: the JSONL carries its own manifest and packs.
			if a.manifest != nil && !sameCommitment(a.manifest, s.fetched) {
				a.problems = append(a.problems, adp.Problem{Code: adp.CodeChainBroken,
					Message: fmt.Sprintf("the manifest inside %s (room %s, last_seq %d) differs from the manifest fetched from %s (room %s, last_seq %d)",
						s.jsonlURL, a.manifest.RoomID, a.manifest.LastSeq, a.source, s.fetched.RoomID, s.fetched.LastSeq)})
			}
		} else {
			a.layout = layoutCurrent
			s.packs(a)
		}
		a.manifest = s.fetched
		s.late, a.problems = a.problems, problems
	}
	if a.manifest != nil {
		s.st, _ = adp.NewArchiveStream(a.manifest, a.packs, &adp.ArchiveOptions{SelfContained: a.layout == layoutSelfContained})
	}
}

// sink takes the records of one chunk.
func (s *archiveStreamer) sink(recs []*adp.Record) error {
	if s.st == nil {
		s.held = append(s.held, recs...)
		return nil
	}
	return s.st.Add(recs)
}

// sinkChecked takes the records of one chunk, checked.
func (s *archiveStreamer) sinkChecked(c *adp.CheckedRecords) error {
	if s.st == nil {
		s.held = append(s.held, c.Records()...)
		return nil
	}
	return s.st.AddChecked(c)
}

// read reads the JSONL from r, at most maxBytes of it (tooLarge is the
// error past that).
func (s *archiveStreamer) read(r io.Reader, maxBytes int64, tooLarge func() error) error {
	lr := &io.LimitedReader{R: r, N: maxBytes + 1}
	err := s.lines.read(lr, maxBytes)
	if lr.N <= 0 {
		return tooLarge()
	}
	if err != nil {
		return err
	}
	s.start()
	return nil
}

// fetch GETs the JSONL at u and reads it as it arrives.
func (s *archiveStreamer) fetch(ctx context.Context, client *http.Client, u string, maxBytes int64) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		// Read as fetch reads it, for the same error.
		_, err := fetchBody(resp, u, maxBytes)
		return err
	}
	return s.read(resp.Body, maxBytes, func() error { return fmt.Errorf("GET %s: the body is larger than --max-bytes %d", u, maxBytes) })
}

// report is verify's report of the streamed archive.
func (s *archiveStreamer) report() *archiveReport {
	a := s.a
	a.problems = append(a.problems, s.late...)
	if s.st == nil {
		a.records = s.held
		return a.verify()
	}
	return a.reportOf(s.st.Report(), nil)
}

// jsonlLines reads archive lines (see parseArchiveJSONL) a chunk at a time:
// a reader goroutine scans and parses the lines of a chunk on every core —
// and, with check, runs the records' hash and signature checks too — while
// the chunk before is handled, in order.
type jsonlLines struct {
	a           *loadedArchive
	start       func()                          // called before the first record is handed over
	sink        func(recs []*adp.Record) error  // takes the records of each chunk, in order
	sinkChecked func(*adp.CheckedRecords) error // with check, instead of sink
	check       bool
	seen        int
	haveRecords bool
}

// parsedLine is one non-blank line, parsed.
type parsedLine struct {
	n      int
	text   []byte
	v      any
	err    error       // strict parsing
	rec    *adp.Record // a record line
	recErr error       // a record line that is not a valid record
}

// lineChunk is what the reader goroutine hands over.
type lineChunk struct {
	lines   []parsedLine
	checked *adp.CheckedRecords // the records of lines, checked (with check)
	last    int                 // the number of the last line read
	err     error               // the scanner's error, on the last chunk
}

// read reads every line of r (lines up to maxBytes long).
func (j *jsonlLines) read(r io.Reader, maxBytes int64) error {
	chunks := make(chan *lineChunk, 1)
	stop := make(chan struct{})
	go func() {
		defer close(chunks)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 64<<10), int(min(maxBytes+1, int64(^uint(0)>>1))))
		line := 0
		for more := true; more; {
			c := &lineChunk{lines: make([]parsedLine, 0, archiveChunk)}
			for len(c.lines) < archiveChunk {
				if more = sc.Scan(); !more {
					break
				}
				line++
				if text := bytes.TrimSpace(sc.Bytes()); len(text) > 0 {
					c.lines = append(c.lines, parsedLine{n: line, text: bytes.Clone(text)})
				}
			}
			c.last = line
			if !more {
				c.err = sc.Err()
			}
			j.parse(c)
			select {
			case chunks <- c:
			case <-stop:
				return
			}
		}
	}()
	var err error
	last := 0
	for c := range chunks {
		if err = j.handle(c); err != nil {
			break
		}
		last = c.last
		if c.err != nil {
			j.bad(last+1, adp.CodeInvalidRecord, "%v", c.err)
		}
	}
	close(stop)
	for range chunks {
		// The reader stops at its next chunk.
	}
	return err
}

// parse parses the lines of a chunk on every core.
func (j *jsonlLines) parse(c *lineChunk) {
	parallelLines(len(c.lines), func(i int) {
		pl := &c.lines[i]
		pl.v, pl.err = identity.ParseStrict(pl.text)
		if obj, ok := pl.v.(map[string]any); ok && pl.err == nil {
			if _, has := obj["type"]; !has {
				pl.rec, pl.recErr = adp.RecordFromValue(pl.v, "")
			}
		}
	})
	if j.check {
		var recs []*adp.Record
		for i := range c.lines {
			if pl := &c.lines[i]; pl.rec != nil && pl.recErr == nil {
				recs = append(recs, pl.rec)
			}
		}
		c.checked = adp.CheckRecords(recs)
	}
}

func (j *jsonlLines) bad(line int, code, format string, args ...any) {
	j.a.problems = append(j.a.problems, adp.Problem{Code: code, Message: fmt.Sprintf("line %d: ", line) + fmt.Sprintf(format, args...)})
}

// handle takes a parsed chunk's lines in order.
func (j *jsonlLines) handle(c *lineChunk) error {
	chunk := c.lines
	a := j.a
	var recs []*adp.Record
	for i := range chunk {
		pl := &chunk[i]
		line := pl.n
		j.seen++
		if pl.err != nil {
			j.bad(line, adp.CodeInvalidRecord, "not strict JSON: %v", pl.err)
			continue
		}
		obj, ok := pl.v.(map[string]any)
		if !ok {
			j.bad(line, adp.CodeInvalidRecord, "not a JSON object")
			continue
		}
		switch obj["type"] {
		case archiveManifestType:
			if a.manifest != nil || j.seen != 1 {
				j.bad(line, adp.CodeInvalidRequest, "a manifest line is only allowed first, in the self-contained layout")
				continue
			}
			m, err := adp.ParseArchiveManifest(pl.text)
			if err != nil {
				j.bad(line, adp.ErrorCode(err), "manifest: %v", err)
				continue
			}
			a.manifest, a.layout = m, layoutSelfContained
		case archivePackType:
			if a.layout != layoutSelfContained {
				j.bad(line, adp.CodePackUnavailable, "a pack document line belongs to the self-contained layout, after its manifest line")
				continue
			}
			if j.haveRecords {
				j.bad(line, adp.CodePackUnavailable, "a pack document line after the records")
				continue
			}
			u, _ := obj["pack"].(string)
			doc, ok := obj["document"].(string)
			if u == "" || !ok {
				j.bad(line, adp.CodePackUnavailable, "a pack document line needs \"pack\" and \"document\"")
				continue
			}
			if prev, dup := a.packs[u]; dup && string(prev) != doc {
				j.bad(line, adp.CodePackUnavailable, "two different documents for pack %s", u)
				continue
			}
			a.packs[u] = []byte(doc)
		default:
			if _, has := obj["type"]; has {
				j.bad(line, adp.CodeInvalidRecord, "unknown line type %v", obj["type"])
				continue
			}
			if pl.recErr != nil {
				seq, _ := identity.IntValue(obj["seq"])
				e := adp.AsError(pl.recErr)
				a.problems = append(a.problems, adp.Problem{Seq: max(seq, 0), Code: e.Code, Pointer: e.Pointer,
					Message: fmt.Sprintf("line %d: %s", line, e.Message)})
				continue
			}
			if !j.haveRecords && j.start != nil {
				j.start()
			}
			j.haveRecords = true
			recs = append(recs, pl.rec)
		}
		chunk[i] = parsedLine{} // the text and value are no longer needed
	}
	if len(recs) == 0 {
		return nil
	}
	if j.check {
		// Every record of the chunk was taken, in order: they are the
		// checked records.
		return j.sinkChecked(c.checked)
	}
	return j.sink(recs)
}

// parallelLines runs fn(0..n-1) on GOMAXPROCS goroutines.
func parallelLines(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n/8)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(i)
			}
		}()
	}
	wg.Wait()
}
