package client

import (
	"context"
	"fmt"
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
	return decodePage(u, resp, q.Limit, func(v any, ptr string, prev []*adp.Record) (*adp.Record, error) {
		rec, err := recordFromValue(v, roomID, ptr)
		if err != nil {
			return nil, err
		}
		last := q.AfterSeq
		if len(prev) > 0 {
			last = prev[len(prev)-1].Seq
		}
		if rec.Seq <= last {
			return nil, fmt.Errorf("%s: seq %d does not ascend past %d", ptr, rec.Seq, last)
		}
		return rec, nil
	})
}
