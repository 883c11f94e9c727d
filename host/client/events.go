package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"apconnect/host/proto/adp"
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
	resp, err := h.svc.do(ctx, call{method: http.MethodGet, url: u, query: qs, auth: authIfSigner, signer: h.signer,
		maxBytes: h.svc.opts.MaxResponseBytes, reuse: true})
	if err != nil {
		return nil, err
	}
	// The page is read into the service's reused buffer: the strict parser
	// copies every string it returns, so nothing decoded refers to it.
	defer resp.release()
	return decodeRecordPage(u, resp, q.Limit, roomID, q.AfterSeq)
}

// decodeRecordPage is decodePage for a history page: the records are read
// (shape and record hash) on every core, then checked in order to ascend
// past after. The error is the one of the first bad item, as decodePage
// would report it.
func decodeRecordPage(u string, resp *response, limit int, roomID string, after int64) (*Page[*adp.Record], error) {
	// A page in the form hosts write is read straight into records; any
	// other (or a wrong one) is parsed into values first, which reads every
	// form and reports what is wrong.
	recs, next, ok := adp.DecodeRecordList(resp.body)
	var errs []error
	if !ok {
		items, nextCursor, err := parseList(resp.body)
		if err != nil {
			return nil, bad(http.MethodGet, u, resp.status, err)
		}
		if limit > 0 && len(items) > limit {
			return nil, bad(http.MethodGet, u, resp.status, fmt.Errorf("%d items for limit %d", len(items), limit))
		}
		next = nextCursor
		recs, errs = adp.RecordsFromValues(items, itemPointer)
	} else if limit > 0 && len(recs) > limit {
		return nil, bad(http.MethodGet, u, resp.status, fmt.Errorf("%d items for limit %d", len(recs), limit))
	}
	last := after
	for i, rec := range recs {
		var err error
		if errs != nil {
			err = errs[i]
		}
		if err == nil && roomID != "" && rec.RoomID != roomID {
			err = checkRecordRoom(rec, roomID, itemPointer(i)) // the pointer only for the error
		}
		if err != nil {
			return nil, bad(http.MethodGet, u, resp.status, err)
		}
		if rec.Seq <= last {
			return nil, bad(http.MethodGet, u, resp.status, fmt.Errorf("%s: seq %d does not ascend past %d", itemPointer(i), rec.Seq, last))
		}
		last = rec.Seq
	}
	return &Page[*adp.Record]{Items: recs, NextCursor: next}, nil
}
