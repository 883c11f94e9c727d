package engine

import (
	"context"
	"encoding/json"
	"time"

	"apconnect/host/inbox"
	"apconnect/host/store"
)

// The inbox: what needs the agent's attention, whichever protocol raised
// it. Items are stored by the modules that produce them (a room's items in
// the transaction that applies its records; a letter's when it is opened)
// and have a source: a room, or none (a letter). The engine claims,
// releases and acknowledges them; reading and acknowledging need no grant.

// MaxWait bounds an inbox long poll.
const MaxWait = 30 * time.Second

// inboxPoll is how often a long poll looks for items another process
// added (items of this process wake it at once).
const inboxPoll = 250 * time.Millisecond

// InboxPage is what an inbox read returns: the items and how many are
// pending in all.
type InboxPage struct {
	Items        []inbox.Item
	PendingCount int64
}

// Inbox returns the pending items of a query, highest priority first, then
// oldest. With claim the items are leased to the session (other sessions and
// processes do not get them until the lease ends or they are acknowledged).
// With wait and nothing pending it waits up to that long (at most MaxWait),
// woken by Notify.
func (e *Engine) Inbox(ctx context.Context, sess SessionID, q store.InboxQuery, claim bool, wait time.Duration) (*InboxPage, error) {
	deadline := time.Now().Add(min(wait, MaxWait))
	for {
		woken := e.Changed()
		res, err := e.takeInbox(ctx, sess, q, claim)
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
func (e *Engine) takeInbox(ctx context.Context, sess SessionID, q store.InboxQuery, claim bool) (*InboxPage, error) {
	now := e.NowMS()
	var rows []*store.InboxRow
	var pending int64
	var claimed map[string]bool
	next, err := e.Store.Read().NextExpiry(ctx)
	if err != nil {
		return nil, Wrap(err)
	}
	if !claim && (next == 0 || next > now) {
		err := e.Store.View(ctx, func(rq store.Q) error {
			var err error
			if rows, err = rq.PendingInbox(ctx, q); err != nil {
				return err
			}
			pending, err = rq.PendingTotal(ctx)
			return err
		})
		if err != nil {
			return nil, Wrap(err)
		}
	} else {
		lease := now + e.opts.ClaimLease.Milliseconds()
		err := e.Store.Write(ctx, func(tx *store.Tx) error {
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
			return nil, Wrap(err)
		}
		for _, r := range rows {
			if claimed[r.ID] {
				r.State, r.Until = store.InboxClaimed, lease
			}
		}
	}
	items, err := inboxItems(rows)
	if err != nil {
		return nil, err
	}
	return &InboxPage{Items: items, PendingCount: max(pending, 0)}, nil
}

// inboxItems decodes stored rows with their local state.
func inboxItems(rows []*store.InboxRow) ([]inbox.Item, error) {
	out := make([]inbox.Item, 0, len(rows))
	for _, r := range rows {
		var it inbox.Item
		if err := json.Unmarshal(r.Item, &it); err != nil {
			return nil, Wrap(err)
		}
		it.State = r.State
		if r.State == store.InboxClaimed {
			it.ClaimedUntil = r.Until
		}
		out = append(out, it)
	}
	return out, nil
}

// PendingInbox returns up to limit pending items, highest priority first,
// and how many are pending in all, without claiming or releasing any.
func (e *Engine) PendingInbox(ctx context.Context, limit int) ([]inbox.Item, int64, error) {
	var rows []*store.InboxRow
	var total int64
	err := e.Store.View(ctx, func(q store.Q) error {
		var err error
		if rows, err = q.PendingInbox(ctx, store.InboxQuery{Limit: limit}); err != nil {
			return err
		}
		total, err = q.PendingTotal(ctx)
		return err
	})
	if err != nil {
		return nil, 0, Wrap(err)
	}
	items, err := inboxItems(rows)
	return items, max(total, 0), err
}

// Acknowledgement states of InboxAck.
const (
	AckHandled   = "handled"
	AckDismissed = "dismissed"
	AckDefer     = "defer"
)

// InboxAck acknowledges items: handled and dismissed for good (they never
// come back, even when their record is read again); defer hides them until
// until (at once when 0). Unknown ids are left out of the acknowledged ids
// it returns, with the pending count.
func (e *Engine) InboxAck(ctx context.Context, ids []string, action string, until int64) ([]string, int64, error) {
	var state string
	switch action {
	case AckHandled:
		state = store.InboxHandled
	case AckDismissed:
		state = store.InboxDismissed
	case AckDefer:
		state = store.InboxDeferred
	default:
		return nil, 0, Invalid("action %q is not one of handled, dismissed, defer", action)
	}
	if len(ids) == 0 {
		return nil, 0, Invalid("ids must not be empty")
	}
	now := e.NowMS()
	if until == 0 {
		until = now
	}
	var acked []string
	var pending int64
	err := e.Store.Write(ctx, func(tx *store.Tx) error {
		if _, err := tx.ReleaseExpired(ctx, now); err != nil {
			return err
		}
		var err error
		if acked, err = tx.Ack(ctx, ids, state, until, now); err != nil {
			return err
		}
		pending, err = tx.PendingTotal(ctx)
		return err
	})
	if err != nil {
		return nil, 0, Wrap(err)
	}
	if acked == nil {
		acked = []string{}
	}
	if state == store.InboxDeferred && until <= now {
		e.Notify()
	}
	return acked, max(pending, 0), nil
}

// AddInbox stores items of no room raised by source (a module's name and
// its scope, such as mail:<mailbox_id>), each once by its id, and wakes the
// long polls. It returns the ids that were new. A room's items are stored
// by the Discourse module with the records that raise them.
func (e *Engine) AddInbox(ctx context.Context, source string, items []inbox.Item) ([]string, error) {
	entries := make([]store.InboxEntry, 0, len(items))
	for _, it := range items {
		raw, err := json.Marshal(it)
		if err != nil {
			return nil, Wrap(err)
		}
		entries = append(entries, store.InboxEntry{ID: it.ID, Kind: it.Kind, Priority: inbox.PriorityRank(it.Priority),
			CreatedAt: it.CreatedAt, Item: raw})
	}
	var ids []string
	err := e.Store.Write(ctx, func(tx *store.Tx) error {
		var err error
		ids, err = tx.InsertSourceInbox(ctx, source, entries)
		return err
	})
	if err != nil {
		return nil, Wrap(err)
	}
	if len(ids) > 0 {
		e.Notify()
	}
	return ids, nil
}
