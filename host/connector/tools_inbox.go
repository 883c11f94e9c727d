package connector

import (
	"context"
	"encoding/json"
	"time"

	"apconnect/host/room"
	"apconnect/host/store"
)

// MaxWait bounds inbox_next's long poll.
const MaxWait = 30 * time.Second

// KindMailReceived is the Agent Mail inbox kind of the 0.12.6 catalog.
const KindMailReceived = "mail.received"

// inboxPoll is how often a long poll looks for items another process
// added (items of this process wake it at once).
const inboxPoll = 250 * time.Millisecond

// InboxNext is agent_protocols_inbox_next: the next pending inbox items,
// highest priority first, then oldest. With claim the items are leased to
// this session (other sessions and processes do not get them until the
// lease ends or they are acknowledged). With wait_ms and nothing pending it
// waits up to that long, woken by live records. Local state only.
func (c *Connector) InboxNext(ctx context.Context, sess SessionID, in InboxNextInput) (*InboxNextResult, error) {
	limit := in.Limit
	if limit <= 0 {
		limit = 10
	}
	limit = min(limit, 50)
	valid := map[string]bool{}
	for _, k := range room.InboxKinds() {
		valid[k] = true
	}
	// mail.received is a 0.12.6 kind of Agent Mail, which apconnect does not
	// speak yet: accepted as a filter, it matches nothing.
	valid[KindMailReceived] = true
	for _, k := range in.Kinds {
		if !valid[k] {
			return nil, invalid("kinds: %q is not an inbox item kind", k)
		}
	}
	if in.WaitMS < 0 {
		return nil, invalid("wait_ms must not be negative")
	}
	q := store.InboxQuery{Kinds: in.Kinds, Limit: limit}
	if in.RoomID != "" {
		rr, err := c.resolve(ctx, in.Host, in.RoomID, false)
		if err != nil {
			return nil, err
		}
		if rr.row == nil {
			pending, err := c.store.Read().PendingTotal(ctx)
			return &InboxNextResult{Items: []InboxItem{}, PendingCount: max(pending, 0)}, wrap(err)
		}
		q.RoomKey = rr.row.Key
	}
	wait := time.Duration(min(in.WaitMS, MaxWait.Milliseconds())) * time.Millisecond
	deadline := time.Now().Add(wait)
	for {
		woken := c.wake.wait()
		res, err := c.takeInbox(ctx, sess, q, in.Claim)
		if err != nil {
			return nil, err
		}
		left := time.Until(deadline)
		if len(res.Items) > 0 || left <= 0 {
			return res, nil
		}
		t := time.NewTimer(min(left, inboxPoll))
		select {
		case <-woken:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return res, nil
		}
		t.Stop()
	}
}

// takeInbox returns the pending items of a query, claiming them for the
// session when asked; expired claims and deferrals are released first.
func (c *Connector) takeInbox(ctx context.Context, sess SessionID, q store.InboxQuery, claim bool) (*InboxNextResult, error) {
	now := c.nowMS()
	var rows []*store.InboxRow
	var pending int64
	var claimed map[string]bool
	next, err := c.store.Read().NextExpiry(ctx)
	if err != nil {
		return nil, wrap(err)
	}
	if !claim && (next == 0 || next > now) {
		err := c.store.View(ctx, func(rq store.Q) error {
			var err error
			if rows, err = rq.PendingInbox(ctx, q); err != nil {
				return err
			}
			pending, err = rq.PendingTotal(ctx)
			return err
		})
		if err != nil {
			return nil, wrap(err)
		}
	} else {
		lease := now + c.opts.ClaimLease.Milliseconds()
		err := c.store.Write(ctx, func(tx *store.Tx) error {
			if _, err := tx.ReleaseExpired(ctx, now); err != nil {
				return err
			}
			var err error
			if rows, err = tx.PendingInbox(ctx, q); err != nil {
				return err
			}
			if claim && len(rows) > 0 {
				ids := make([]string, len(rows))
				for i, r := range rows {
					ids[i] = r.ID
				}
				got, err := tx.Claim(ctx, ids, string(sess), lease)
				if err != nil {
					return err
				}
				claimed = map[string]bool{}
				for _, id := range got {
					claimed[id] = true
				}
			}
			pending, err = tx.PendingTotal(ctx)
			return err
		})
		if err != nil {
			return nil, wrap(err)
		}
		for _, r := range rows {
			if claimed[r.ID] {
				r.State, r.Until = store.InboxClaimed, lease
			}
		}
	}
	out := &InboxNextResult{Items: make([]InboxItem, 0, len(rows)), PendingCount: max(pending, 0)}
	for _, r := range rows {
		var it InboxItem
		if err := json.Unmarshal(r.Item, &it); err != nil {
			return nil, wrap(err)
		}
		it.State = r.State
		if r.State == store.InboxClaimed {
			it.ClaimedUntil = r.Until
		}
		out.Items = append(out.Items, it)
	}
	return out, nil
}

// InboxAck is agent_protocols_inbox_ack: handled and dismissed acknowledge
// items for good (they never come back, even when their record is read
// again); defer hides them until defer_until (at once when omitted). Unknown
// ids are left out of acknowledged. Local state only.
func (c *Connector) InboxAck(ctx context.Context, sess SessionID, in InboxAckInput) (*InboxAckResult, error) {
	var state string
	switch in.Action {
	case "handled":
		state = store.InboxHandled
	case "dismissed":
		state = store.InboxDismissed
	case "defer":
		state = store.InboxDeferred
	default:
		return nil, invalid("action %q is not one of handled, dismissed, defer", in.Action)
	}
	if len(in.IDs) == 0 {
		return nil, invalid("ids must not be empty")
	}
	now := c.nowMS()
	until := now
	if in.DeferUntil != nil {
		until = *in.DeferUntil
	}
	var acked []string
	var pending int64
	err := c.store.Write(ctx, func(tx *store.Tx) error {
		if _, err := tx.ReleaseExpired(ctx, now); err != nil {
			return err
		}
		var err error
		if acked, err = tx.Ack(ctx, in.IDs, state, until, now); err != nil {
			return err
		}
		pending, err = tx.PendingTotal(ctx)
		return err
	})
	if err != nil {
		return nil, wrap(err)
	}
	if acked == nil {
		acked = []string{}
	}
	if state == store.InboxDeferred && until <= now {
		c.wake.notify()
	}
	return &InboxAckResult{Acknowledged: acked, PendingCount: max(pending, 0)}, nil
}
