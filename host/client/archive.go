package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"apconnect/host/adp"
	"apconnect/host/identity"
)

// archivePackType is the type of a pack document line of the JSON Lines
// archive.
const archivePackType = "room.archive.pack"

// Archive reads a room's archive manifest (GET /v1/rooms/{room_id}/archive),
// authenticated when the Host has a signer. The manifest must name the
// room. Its formats (jsonl, markdown) are links; DownloadArchive follows
// the jsonl one.
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

// DownloadArchive reads a room's manifest and then the archive in its
// "jsonl" format (which must be on the host's origin), and checks that the
// two manifests agree on the room and the commitment (last_seq,
// last_hash). Verify the result with adp.VerifyArchive.
func (h *Host) DownloadArchive(ctx context.Context, roomID string) (*Archive, error) {
	man, err := h.Archive(ctx, roomID)
	if err != nil {
		return nil, err
	}
	link := man.Formats["jsonl"]
	if link == "" {
		return nil, fmt.Errorf("client: the archive of %s lists no jsonl format", roomID)
	}
	a, err := h.ArchiveRecords(ctx, link)
	if err != nil {
		return nil, err
	}
	if a.Manifest.RoomID != roomID || a.Manifest.LastSeq != man.LastSeq || a.Manifest.LastHash != man.LastHash {
		return nil, &ResponseError{Method: http.MethodGet, Path: link, Status: http.StatusOK,
			Err: fmt.Errorf("the jsonl archive commits to %s@%d, the manifest to %s@%d", a.Manifest.LastHash, a.Manifest.LastSeq, man.LastHash, man.LastSeq)}
	}
	return a, nil
}

// ArchiveRecords downloads an archive in JSON Lines from url (a manifest's
// "jsonl" format link, which must be on the host's origin), bounded by
// MaxArchiveBytes: the manifest line first, then pack lines
// ({"type":"room.archive.pack","pack","digest","document"}), then the
// records, parsed strictly (shape and record hash), of the manifest's room
// and ascending by seq. Anything else is refused.
func (h *Host) ArchiveRecords(ctx context.Context, url string) (*Archive, error) {
	if err := checkArchiveURL(url, h.svc.origin); err != nil {
		return nil, fmt.Errorf("client: archive URL: %w", err)
	}
	resp, err := h.svc.do(ctx, call{method: http.MethodGet, url: url, auth: authIfSigner, signer: h.signer,
		maxBytes: h.svc.opts.MaxArchiveBytes, accept: "application/jsonl, application/x-ndjson;q=0.9, application/json;q=0.5"})
	if err != nil {
		return nil, err
	}
	a, err := parseArchiveJSONL(resp.body)
	if err != nil {
		return nil, bad(http.MethodGet, url, resp.status, err)
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

// parseArchiveJSONL reads the JSON Lines archive format.
func parseArchiveJSONL(body []byte) (*Archive, error) {
	a := &Archive{Packs: map[string][]byte{}}
	n := 0
	for len(body) > 0 {
		var line []byte
		line, body, _ = bytes.Cut(body, []byte("\n"))
		n++
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if a.Manifest == nil {
			man, err := adp.ParseArchiveManifest(line)
			if err != nil {
				return nil, fmt.Errorf("line %d (the manifest): %w", n, err)
			}
			a.Manifest = man
			continue
		}
		v, err := identity.ParseStrict(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("line %d: not a JSON object", n)
		}
		if typ, _ := obj["type"].(string); typ == archivePackType {
			if len(a.Records) > 0 {
				return nil, fmt.Errorf("line %d: a pack document after the records", n)
			}
			url, _ := obj["pack"].(string)
			doc, ok := obj["document"].(string)
			if url == "" || !ok {
				return nil, fmt.Errorf("line %d: a pack line needs \"pack\" and \"document\" strings", n)
			}
			if _, dup := a.Packs[url]; dup {
				return nil, fmt.Errorf("line %d: pack %s listed twice", n, truncate(url, 120))
			}
			a.Packs[url] = []byte(doc)
			continue
		}
		rec, err := recordFromValue(obj, a.Manifest.RoomID, "")
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if k := len(a.Records); k > 0 && rec.Seq <= a.Records[k-1].Seq {
			return nil, fmt.Errorf("line %d: seq %d does not ascend", n, rec.Seq)
		}
		a.Records = append(a.Records, rec)
	}
	if a.Manifest == nil {
		return nil, errors.New("empty archive: no manifest line")
	}
	return a, nil
}
