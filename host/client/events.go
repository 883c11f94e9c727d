package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"apconnect/host/adp"
)

// Events reads a page of room history (GET /v1/rooms/{room_id}/events),
// authenticated when the Host has a signer. Records are parsed strictly
// (shape and record hash) and checked to belong to the room, to follow
// q.AfterSeq and to ascend by seq; nothing else is verified (envelope
// hashes, signatures and pre_hash links are the caller's).
func (h *Host) Events(ctx context.Context, roomID string, q EventsQuery) (*Page[*adp.Record], error) {
	room, err := h.roomURL(ctx, roomID)
	if err != nil {
		return nil, err
	}
	if q.AfterSeq < 0 || q.Limit < 0 {
		return nil, fmt.Errorf("client: negative after_seq or limit")
	}
	u := room + "/events"
	qs := url.Values{}
	qs.Set("after_seq", itoa64(q.AfterSeq))
	setInt(qs, "limit", int64(q.Limit))
	setStr(qs, "cursor", q.Cursor)
	resp, err := h.get(ctx, u, qs, authIfSigner, h.svc.opts.MaxResponseBytes)
	if err != nil {
		return nil, err
	}
	items, next, err := parseList(resp.body)
	if err != nil {
		return nil, bad(http.MethodGet, u, resp.status, err)
	}
	if q.Limit > 0 && len(items) > q.Limit {
		return nil, bad(http.MethodGet, u, resp.status, fmt.Errorf("%d records for limit %d", len(items), q.Limit))
	}
	page := &Page[*adp.Record]{Items: make([]*adp.Record, 0, len(items)), NextCursor: next}
	last := q.AfterSeq
	for i, it := range items {
		rec, err := recordFromValue(it, roomID, itemPointer(i))
		if err != nil {
			return nil, bad(http.MethodGet, u, resp.status, err)
		}
		if rec.Seq <= last {
			return nil, bad(http.MethodGet, u, resp.status, fmt.Errorf("%s: seq %d does not ascend past %d", itemPointer(i), rec.Seq, last))
		}
		last = rec.Seq
		page.Items = append(page.Items, rec)
	}
	return page, nil
}
