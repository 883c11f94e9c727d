package client

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"apconnect/host/proto/adp"
	"apconnect/host/text"
)

// Bounds of an archive download beyond Options.MaxArchiveBytes.
const (
	// MaxArchiveLineBytes bounds one line of a JSON Lines archive (one
	// server record; the hub accepts envelopes of 512 KiB).
	MaxArchiveLineBytes = 4 << 20
	// MaxPackDocumentBytes bounds one external pack document.
	MaxPackDocumentBytes = 1 << 20
)

// Archive reads a room's archive manifest (GET /v1/rooms/{room_id}/archive),
// authenticated when the Host has a signer. The manifest must name the
// room. Its formats (jsonl, markdown) and packs are links; DownloadArchive
// follows them.
func (h *Host) Archive(ctx context.Context, roomID string) (*adp.ArchiveManifest, error) {
	room, err := h.roomURL(ctx, roomID)
	if err != nil {
		return nil, err
	}
	u := room + "/archive"
	resp, err := h.get(ctx, u, nil, authIfSigner, h.svc.opts.MaxResourceBytes)
	if err != nil {
		return nil, err
	}
	man, err := adp.ParseArchiveManifest(resp.body)
	if err != nil {
		return nil, bad(http.MethodGet, u, resp.status, err)
	}
	if man.RoomID != roomID {
		return nil, bad(http.MethodGet, u, resp.status, fmt.Errorf("/room_id: archive of room %q, want %q", man.RoomID, roomID))
	}
	return man, nil
}

// DownloadArchive reads a room's manifest, then its "jsonl" format and
// every manifest.packs[].url — all of which must be on the host's origin,
// each read with a request JWT when the Host has a signer (rooms that are
// not public need one) — and returns everything adp.VerifyArchive needs
// (see Archive.Verify). The record log is parsed as it streams in, bounded
// by MaxArchiveBytes. An older apconnect hub's self-contained JSON Lines
// file is read too; its manifest line must agree with the manifest on the
// room and the commitment (last_seq, last_hash).
func (h *Host) DownloadArchive(ctx context.Context, roomID string) (*Archive, error) {
	man, err := h.Archive(ctx, roomID)
	if err != nil {
		return nil, err
	}
	link := man.Formats["jsonl"]
	if link == "" {
		return nil, fmt.Errorf("client: the archive of %s lists no jsonl format", roomID)
	}
	// Every link must be on the host's origin before anything is fetched.
	for i, p := range man.Packs {
		if err := checkArchiveURL(p.URL, h.svc.origin); err != nil {
			return nil, fmt.Errorf("client: archive pack %d URL: %w", i, err)
		}
	}
	a, err := h.ArchiveRecords(ctx, link, roomID)
	if err != nil {
		return nil, err
	}
	if a.Layout == adp.ArchiveLayoutSelfContained {
		if a.Manifest.RoomID != roomID || a.Manifest.LastSeq != man.LastSeq || a.Manifest.LastHash != man.LastHash {
			return nil, &ResponseError{Method: http.MethodGet, Path: link, Status: http.StatusOK,
				Err: fmt.Errorf("the jsonl archive commits to %s@%d, the manifest to %s@%d", a.Manifest.LastHash, a.Manifest.LastSeq, man.LastHash, man.LastSeq)}
		}
		a.Manifest = man
		return a, nil
	}
	a.Manifest = man
	for i, p := range man.Packs {
		if prev, dup := a.Packs[p.Pack]; dup && prev != nil {
			continue // listed twice; VerifyArchive reports a digest conflict
		}
		doc, err := h.archivePack(ctx, p.URL)
		if err != nil {
			return nil, fmt.Errorf("client: archive pack %d (%s): %w", i, text.Truncate(p.Pack, 120), err)
		}
		a.Packs[p.Pack] = doc
	}
	return a, nil
}

// archivePack reads the exact bytes of an archived pack document.
func (h *Host) archivePack(ctx context.Context, u string) ([]byte, error) {
	if err := checkArchiveURL(u, h.svc.origin); err != nil {
		return nil, err
	}
	resp, err := h.svc.do(ctx, call{method: http.MethodGet, url: u, auth: authIfSigner, signer: h.signer,
		maxBytes: MaxPackDocumentBytes})
	if err != nil {
		return nil, err
	}
	return resp.body, nil
}

// ArchiveRecords downloads an archive's JSON Lines record log from url (a
// manifest's "jsonl" format link, which must be on the host's origin) with
// a request JWT when the Host has a signer, parsing it as it streams in,
// bounded by MaxArchiveBytes. The current layout is one server record per
// line (blank lines ignored); the older self-contained layout starts with
// the manifest line and its pack lines. Records are parsed strictly (shape
// and record hash), must be of roomID (of the manifest line's room when
// roomID is "") and ascend by seq. Anything else is refused.
func (h *Host) ArchiveRecords(ctx context.Context, url, roomID string) (*Archive, error) {
	if err := checkArchiveURL(url, h.svc.origin); err != nil {
		return nil, fmt.Errorf("client: archive URL: %w", err)
	}
	var a *Archive
	_, err := h.svc.do(ctx, call{method: http.MethodGet, url: url, auth: authIfSigner, signer: h.signer,
		maxBytes: h.svc.opts.MaxArchiveBytes, accept: "application/jsonl, application/x-ndjson;q=0.9, application/json;q=0.5",
		sink: func(r io.Reader) error {
			var err error
			a, err = ReadArchiveJSONL(r, roomID)
			return err
		}})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// checkArchiveURL accepts an https URL on origin; unlike an endpoint it may
// carry a query (the local hub pins last_seq there).
func checkArchiveURL(raw, origin string) error {
	if strings.Contains(raw, "#") {
		return errors.New("a fragment is not allowed")
	}
	base, _, _ := strings.Cut(raw, "?")
	return checkOnOrigin(base, origin)
}

// ReadArchiveJSONL reads a JSON Lines archive in either layout from r (see
// ArchiveRecords) by the format and ordering rules of adp.ParseArchiveLine
// and adp.ArchiveLines: the layout is self-contained when the first
// non-blank line is a manifest ({"type":"room.archive",…}). Records must be
// of roomID (or, when roomID is "", of the self-contained manifest's room or
// the first record's) and ascend by seq. A line is at most
// MaxArchiveLineBytes. The first fault ends the read.
func ReadArchiveJSONL(r io.Reader, roomID string) (*Archive, error) {
	a := &Archive{Layout: adp.ArchiveLayoutCurrent}
	var lines adp.ArchiveLines
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := readLine(br)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			if perr := a.line(&lines, line, &roomID); perr != nil {
				return nil, fmt.Errorf("line %d: %w", n, perr)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	if lines.Layout() == adp.ArchiveLayoutSelfContained {
		a.Layout = adp.ArchiveLayoutSelfContained
	}
	a.Packs = lines.Packs()
	if a.Packs == nil {
		a.Packs = map[string][]byte{}
	}
	return a, nil
}

// readLine reads one line without its terminator, at most
// MaxArchiveLineBytes.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > MaxArchiveLineBytes {
			return nil, fmt.Errorf("a line is longer than %d bytes", MaxArchiveLineBytes)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		return line, err
	}
}

// line reads one non-blank line of the archive: the format's rules, then
// the room and the seq order.
func (a *Archive) line(lines *adp.ArchiveLines, raw []byte, roomID *string) error {
	l, err := adp.ParseArchiveLine(raw)
	rec, err := lines.Take(l, err)
	if err != nil {
		return err
	}
	if l.Manifest != nil {
		if *roomID != "" && l.Manifest.RoomID != *roomID {
			return fmt.Errorf("the manifest is of room %q, want %q", l.Manifest.RoomID, *roomID)
		}
		a.Manifest, *roomID = l.Manifest, l.Manifest.RoomID
	}
	if rec == nil {
		return nil
	}
	if *roomID != "" && rec.RoomID != *roomID {
		return fmt.Errorf("record of room %q, want %q", rec.RoomID, *roomID)
	}
	if k := len(a.Records); k > 0 && rec.Seq <= a.Records[k-1].Seq {
		return fmt.Errorf("seq %d does not ascend", rec.Seq)
	}
	if *roomID == "" {
		*roomID = rec.RoomID
	}
	a.Records = append(a.Records, rec)
	return nil
}

// Verify runs adp.VerifyArchive on the archive, telling it where the pack
// documents came from (opts may be nil).
func (a *Archive) Verify(opts *adp.ArchiveOptions) (*adp.ArchiveReport, error) {
	o := adp.ArchiveOptions{}
	if opts != nil {
		o = *opts
	}
	o.SelfContained = a.Layout == adp.ArchiveLayoutSelfContained
	return adp.VerifyArchive(a.Manifest, a.Records, a.Packs, &o)
}
