package store

import (
	"context"

	"apconnect/host/identity"
)

// LastNonce returns the last nonce handed out (0 before the first).
func (q Q) LastNonce(ctx context.Context) (int64, error) {
	var last int64
	err := q.queryRow(ctx, `SELECT last FROM nonce WHERE id = 1`).Scan(&last)
	return last, err
}

// AllocateNonce hands out the nonce for an event created at nowMS:
// max(last+1, nowMS) (Agent Identity 6.2), and records it as the last one.
// Because it runs inside the IMMEDIATE write transaction, no two callers —
// goroutines or processes sharing the database — ever get the same nonce,
// and a nonce is consumed only if the transaction commits.
func (t *Tx) AllocateNonce(ctx context.Context, nowMS int64) (int64, error) {
	last, err := t.LastNonce(ctx)
	if err != nil {
		return 0, err
	}
	n, err := identity.NextNonce(last, nowMS)
	if err != nil {
		return 0, err
	}
	if _, err := t.exec(ctx, `UPDATE nonce SET last = ? WHERE id = 1`, n); err != nil {
		return 0, err
	}
	return n, nil
}

// ApplyMaxSeenNonce applies a service's Max-Seen-Nonce header to the
// sequence (identity.ApplyMaxSeenNonce bounds the jump): afterwards the next
// nonce handed out is greater than the header's value. It returns the new
// last nonce. An out-of-bounds header is an error and changes nothing.
func (t *Tx) ApplyMaxSeenNonce(ctx context.Context, nowMS int64, header string) (int64, error) {
	last, err := t.LastNonce(ctx)
	if err != nil {
		return 0, err
	}
	next, err := identity.ApplyMaxSeenNonce(last+1, nowMS, header)
	if err != nil {
		return 0, err
	}
	if next-1 > last {
		if _, err := t.exec(ctx, `UPDATE nonce SET last = ? WHERE id = 1`, next-1); err != nil {
			return 0, err
		}
		return next - 1, nil
	}
	return last, nil
}
