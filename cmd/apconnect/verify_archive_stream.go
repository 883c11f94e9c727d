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
	"strings"

	"apconnect/host/proto/adp"
)

// archiveChunk is how many lines verify-archive parses and verifies at a
// time: the lines of a chunk are parsed, and their hashes and signatures
// checked, on every core; the replay takes them in order. Memory holds one
// chunk, not the archive.
var archiveChunk = 512

// verifyArchiveSource verifies the archive at src (see resolveArchive for
// the sources) as it streams in, through adp.ArchiveStream. An archive
// whose records are out of seq order cannot be verified that way: it is
// read again whole and verified sorted (adp.VerifyArchive), which reports
// the same.
func verifyArchiveSource(ctx context.Context, src, caFile string, maxBytes int64) (*archiveReport, error) {
	source, err := resolveArchive(ctx, src, caFile, maxBytes)
	if err != nil {
		return nil, err
	}
	rep, err := source.verify(ctx, false)
	if errors.Is(err, adp.ErrOutOfOrder) {
		return source.verify(ctx, true)
	}
	return rep, err
}

// archiveSource is where an archive is read from, resolved once: a local
// JSON Lines file, an https URL of one (…/archive.jsonl), or an https
// manifest URL, whose manifest is fetched here and whose formats.jsonl is on
// the manifest's origin.
type archiveSource struct {
	name     string               // what the report calls the source
	file     string               // a local JSON Lines file, or …
	jsonlURL string               // … the JSON Lines URL
	manifest *adp.ArchiveManifest // the manifest of a manifest URL; nil otherwise
	origin   string               // the manifest URL's host
	client   *http.Client
	maxBytes int64
}

// resolveArchive resolves src: a local file, an https URL ending in
// /archive.jsonl, or any other https URL — a manifest (…/archive) or a room
// URL, to which /archive is added.
func resolveArchive(ctx context.Context, src, caFile string, maxBytes int64) (*archiveSource, error) {
	if strings.HasPrefix(src, "http://") {
		return nil, usageError{"archives are fetched over https only"}
	}
	if !strings.HasPrefix(src, "https://") {
		if caFile != "" {
			return nil, usageError{"--ca applies to https URLs only"}
		}
		return &archiveSource{name: src, file: src, maxBytes: maxBytes}, nil
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
		return &archiveSource{name: src, jsonlURL: u.String(), client: client, maxBytes: maxBytes}, nil
	}
	if !strings.HasSuffix(u.Path, "/archive") {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/archive"
	}
	s := &archiveSource{name: u.String(), origin: u.Host, client: client, maxBytes: maxBytes}
	mdata, err := fetch(ctx, client, u.String(), maxBytes)
	if err != nil {
		return nil, err
	}
	if s.manifest, err = adp.ParseArchiveManifest(mdata); err != nil {
		return nil, fmt.Errorf("%s is not an archive manifest: %w", u, err)
	}
	jsonl, ok := s.manifest.Formats["jsonl"]
	if !ok {
		return nil, fmt.Errorf("the manifest at %s lists no jsonl format; nothing to verify the records from", u)
	}
	ju, ok := s.onOrigin(jsonl)
	if !ok {
		return nil, fmt.Errorf("the manifest's jsonl format %q is not on the manifest's origin %s; refusing to follow it", jsonl, u.Host)
	}
	s.jsonlURL = ju.String()
	return s, nil
}

// onOrigin parses a link of the manifest and reports whether it is an
// https URL on the manifest URL's host.
func (s *archiveSource) onOrigin(link string) (*url.URL, bool) {
	u, err := url.Parse(link)
	return u, err == nil && u.Scheme == "https" && u.Host == s.origin
}

// verify reads the archive and verifies it: as it streams in, or whole
// (every record held, then verified sorted).
func (s *archiveSource) verify(ctx context.Context, whole bool) (*archiveReport, error) {
	st := newArchiveStreamer(ctx, s, whole)
	if err := st.read(); err != nil {
		return nil, err
	}
	return st.report(), nil
}

// open opens the JSON Lines: the file, or the body of a 200 answer.
func (s *archiveSource) open(ctx context.Context) (io.ReadCloser, error) {
	if s.file != "" {
		return os.Open(s.file)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.jsonlURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		// Read as fetch reads it, for the same error.
		defer resp.Body.Close()
		_, err := fetchBody(resp, s.jsonlURL, s.maxBytes)
		return nil, err
	}
	return resp.Body, nil
}

// tooLarge is the error for JSON Lines longer than maxBytes.
func (s *archiveSource) tooLarge() error {
	if s.file != "" {
		return fmt.Errorf("%s is larger than --max-bytes %d", s.file, s.maxBytes)
	}
	return fmt.Errorf("GET %s: the body is larger than --max-bytes %d", s.jsonlURL, s.maxBytes)
}

// adopt settles the layout of a manifest URL's archive once its JSON Lines
// showed which it is, before any record: an older hub's self-contained
// file, whose manifest line must commit to what the fetched manifest does,
// or the current layout's records, whose pack documents are then fetched
// from manifest.packs. Either way the fetched manifest is the one verified.
// Problems go to a.
func (s *archiveSource) adopt(ctx context.Context, a *loadedArchive) {
	man := s.manifest
	if a.layout == adp.ArchiveLayoutSelfContained {
		// An older hub: the JSONL carries its own manifest and packs.
		if a.manifest != nil && !sameCommitment(a.manifest, man) {
			a.problems = append(a.problems, adp.Problem{Code: adp.CodeChainBroken,
				Message: fmt.Sprintf("the manifest inside %s (room %s, last_seq %d) differs from the manifest fetched from %s (room %s, last_seq %d)",
					s.jsonlURL, a.manifest.RoomID, a.manifest.LastSeq, s.name, man.RoomID, man.LastSeq)})
		}
		a.manifest = man
		return
	}
	a.layout, a.manifest = adp.ArchiveLayoutCurrent, man
	for i, p := range man.Packs {
		if _, done := a.packs[p.Pack]; done {
			continue // listed twice; VerifyArchive reports a conflict
		}
		pu, ok := s.onOrigin(p.URL)
		if !ok {
			a.problems = append(a.problems, adp.Problem{Code: adp.CodePackUnavailable, Pointer: fmt.Sprintf("/packs/%d/url", i),
				Message: fmt.Sprintf("pack URL %q is not on the manifest's origin %s; not fetched", p.URL, s.origin)})
			continue
		}
		doc, err := fetch(ctx, s.client, pu.String(), min(s.maxBytes, maxPackBytes))
		if err != nil {
			a.problems = append(a.problems, adp.Problem{Code: adp.CodePackUnavailable, Pointer: fmt.Sprintf("/packs/%d/url", i),
				Message: err.Error()})
			continue
		}
		a.packs[p.Pack] = doc
	}
}

// archiveStreamer reads an archive's JSON Lines a chunk at a time and feeds
// its records to an adp.ArchiveStream — or holds them, for adp.VerifyArchive
// (whole) or, without a manifest, adp.Replay, which cannot verify such an
// archive anyway.
type archiveStreamer struct {
	ctx     context.Context
	src     *archiveSource
	whole   bool               // hold every record, verify at the end
	a       *loadedArchive     // what was read
	lines   jsonlLines         // the line reader
	st      *adp.ArchiveStream // nil until the first record, when holding, and without a manifest
	started bool               // start ran
	late    []adp.Problem      // problems found at the start, reported after the parse problems
	held    []*adp.Record      // the records held
}

func newArchiveStreamer(ctx context.Context, src *archiveSource, whole bool) *archiveStreamer {
	s := &archiveStreamer{ctx: ctx, src: src, whole: whole,
		a: &loadedArchive{source: src.name, layout: adp.ArchiveLayoutRecordsOnly, packs: map[string][]byte{}}}
	s.lines = jsonlLines{a: s.a, start: s.start, sink: s.sink, sinkChecked: s.sinkChecked, check: !whole}
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
	if s.src.manifest != nil {
		problems := a.problems
		a.problems = nil
		s.src.adopt(s.ctx, a)
		s.late, a.problems = a.problems, problems
	}
	if a.manifest != nil && !s.whole {
		s.st, _ = adp.NewArchiveStream(a.manifest, a.packs, &adp.ArchiveOptions{SelfContained: a.layout == adp.ArchiveLayoutSelfContained})
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

// read reads the source's JSON Lines, at most maxBytes of it.
func (s *archiveStreamer) read() error {
	body, err := s.src.open(s.ctx)
	if err != nil {
		return err
	}
	defer body.Close()
	lr := &io.LimitedReader{R: body, N: s.src.maxBytes + 1}
	err = s.lines.read(lr, s.src.maxBytes)
	if lr.N <= 0 {
		return s.src.tooLarge()
	}
	if err != nil {
		return err
	}
	s.start()
	return nil
}

// report is verify's report of the archive read.
func (s *archiveStreamer) report() *archiveReport {
	a := s.a
	a.problems = append(a.problems, s.late...)
	if s.st == nil {
		a.records = s.held
		return a.verify()
	}
	return a.reportOf(s.st.Report(), nil)
}

// jsonlLines reads archive lines a chunk at a time by the format of
// adp.ParseArchiveLine and adp.ArchiveLines — in the self-contained layout
// the manifest, pack documents and records; otherwise records only. A
// reader goroutine scans and parses the lines of a chunk on every core —
// and, with check, runs the records' hash and signature checks too — while
// the chunk before is handled, in order. A line that cannot be read is a
// problem, and reading goes on.
type jsonlLines struct {
	a           *loadedArchive
	start       func()                          // called before the first record is handed over
	sink        func(recs []*adp.Record) error  // takes the records of each chunk, in order
	sinkChecked func(*adp.CheckedRecords) error // with check, instead of sink
	check       bool
	format      adp.ArchiveLines // the ordering rules
	haveRecords bool
}

// lineChunk is what the reader goroutine hands over: a chunk's non-blank
// lines, parsed.
type lineChunk struct {
	nums    []int               // their line numbers
	texts   [][]byte            // their text, until parsed
	lines   []adp.ArchiveLine   // parsed
	errs    []error             // their parse errors
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
			c := &lineChunk{nums: make([]int, 0, archiveChunk), texts: make([][]byte, 0, archiveChunk)}
			for len(c.texts) < archiveChunk {
				if more = sc.Scan(); !more {
					break
				}
				line++
				if text := bytes.TrimSpace(sc.Bytes()); len(text) > 0 {
					c.nums, c.texts = append(c.nums, line), append(c.texts, bytes.Clone(text))
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
			j.a.problems = append(j.a.problems, adp.Problem{Code: adp.CodeInvalidRecord, Message: fmt.Sprintf("line %d: %v", last+1, c.err)})
		}
	}
	close(stop)
	for range chunks {
		// The reader stops at its next chunk.
	}
	return err
}

// parse parses the lines of a chunk on every core (adp.ParseArchiveLines)
// and, with check, checks their records.
func (j *jsonlLines) parse(c *lineChunk) {
	c.lines, c.errs = adp.ParseArchiveLines(c.texts)
	c.texts = nil
	if j.check {
		var recs []*adp.Record
		for i, l := range c.lines {
			if l.Record != nil && c.errs[i] == nil {
				recs = append(recs, l.Record)
			}
		}
		c.checked = adp.CheckRecords(recs)
	}
}

// handle takes a parsed chunk's lines in order.
func (j *jsonlLines) handle(c *lineChunk) error {
	a := j.a
	var recs []*adp.Record
	for i, l := range c.lines {
		rec, err := j.format.Take(l, c.errs[i])
		switch {
		case err != nil:
			e := adp.AsError(err)
			a.problems = append(a.problems, adp.Problem{Seq: l.Seq, Code: e.Code, Pointer: e.Pointer,
				Message: fmt.Sprintf("line %d: %s", c.nums[i], e.Message)})
		case l.Manifest != nil:
			a.manifest, a.layout = l.Manifest, adp.ArchiveLayoutSelfContained
		case rec != nil:
			if !j.haveRecords && j.start != nil {
				j.start()
			}
			j.haveRecords = true
			recs = append(recs, rec)
		default: // a pack document line
			a.packs[l.Pack] = j.format.Packs()[l.Pack]
		}
	}
	c.lines, c.errs = nil, nil // no longer needed
	if len(recs) == 0 {
		return nil
	}
	if j.check {
		// Every record of the chunk was taken (ArchiveLines hands on every
		// record line that parsed), in order: they are the checked records.
		return j.sinkChecked(c.checked)
	}
	return j.sink(recs)
}
