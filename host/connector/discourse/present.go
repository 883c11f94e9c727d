package discourse

import (
	"context"

	"apconnect/host/capability"
	"apconnect/host/engine"
	"apconnect/host/store"
)

// Presented heads.
//
// The presented head of a room in an MCP session is the head the session's
// agent has actually seen, and the default base of its next write, so the
// host checks freshness against what the agent read rather than against
// records it never saw (connector spec 4.2). What presents a head:
//
//   - room_open and room_state show the whole current state: they present
//     the current head;
//   - a timeline read presents the head in force after its last item when
//     the read is unfiltered (no types or actors) and contiguous with what
//     was presented (it starts at or before the presented head), and the
//     current head when such a read reaches the latest verified record;
//   - a held or rejected write and draft_get present the current head,
//     because their changes reach it;
//   - a write that is accepted presents its own record when it became the
//     head directly on top of the presented head (a send_anyway rebase over
//     records the agent never saw does not);
//   - everything else leaves it unchanged.
//
// SyncState always reports the current verified head; presented_seq and
// presented_hash report the session's presented head.

// syncState builds the SyncState of a room for a session.
func (c *Module) syncState(ctx context.Context, q store.Q, rr *roomRef, sess SessionID) (SyncState, error) {
	row, err := q.Room(ctx, rr.row.Key)
	if err != nil {
		return SyncState{}, engine.Wrap(err)
	}
	rr.row = row
	return c.syncStateRow(ctx, q, rr.h.origin, row, sess)
}

func (c *Module) syncStateRow(ctx context.Context, q store.Q, host string, row *store.Room, sess SessionID) (SyncState, error) {
	return c.syncStateWith(ctx, q, host, row, sess, nil)
}

// presentedHead is the head presented to a session for a room (ok false:
// none yet).
type presentedHead struct {
	seq  int64
	hash string
	ok   bool
}

// syncStateWith is syncStateRow with the session's presented head already
// known (nil: read it).
func (c *Module) syncStateWith(ctx context.Context, q store.Q, host string, row *store.Room, sess SessionID, pres *presentedHead) (SyncState, error) {
	s := SyncState{
		Host: host, RoomID: row.RoomID, HeadSeq: row.HeadSeq, HeadHash: row.HeadHash, SyncedSeq: row.SyncedSeq,
		RemoteSeq: max(row.RemoteSeq, row.SyncedSeq), Subscribed: row.Subscribed || row.SelfState == "active",
		PendingInboxCount: max(row.PendingInbox, 0), ReadSeq: row.ReadSeq,
	}
	n, err := q.UnreadCount(ctx, row.Key, row.ReadSeq, c.Self)
	if err != nil {
		return s, engine.Wrap(err)
	}
	s.UnreadCount = n
	if h, ok := c.pres.get(sess, row.Key); sess != "" && pres == nil && ok {
		pres = &h
	}
	if sess != "" && pres == nil {
		seq, hash, ok, err := q.Presented(ctx, string(sess), row.Key)
		if err != nil {
			return s, engine.Wrap(err)
		}
		pres = &presentedHead{seq: seq, hash: hash, ok: ok}
	}
	if sess != "" && pres.ok {
		s.PresentedSeq, s.PresentedHash = pres.seq, pres.hash
	}
	if f := row.Failure; f != nil {
		s.Verification = &Verification{Status: "failed", Seq: f.Seq, Code: f.Code, Message: f.Message, At: f.At}
	}
	s.CatchingUp = c.catchUp.active(row.Key)
	s.Refused = c.refused(host)
	return s, nil
}

// refused lists the Discourse capabilities the operator has not granted on
// a host: the writes (or reads) the connector will refuse there.
func (c *Module) refused(host string) []string {
	var out []string
	granted := c.Grants(host)
	for _, cap := range []capability.Capability{capability.DiscourseRead, capability.DiscourseWrite} {
		if !granted.Has(cap) {
			out = append(out, cap.String())
		}
	}
	return out
}

// present records that a head was presented to a session for a room; the
// store has it shortly after (presenter), the module's reads at once.
func (c *Module) present(ctx context.Context, sess SessionID, key, seq int64, hash string) error {
	if sess == "" || seq <= 0 {
		return nil
	}
	c.pres.put(sess, key, seq, hash)
	return nil
}

// presentCurrent presents the room's current head to the session and
// returns the SyncState (with the head presented).
func (c *Module) presentCurrent(ctx context.Context, rr *roomRef, sess SessionID) (SyncState, error) {
	row, err := c.Store.Read().Room(ctx, rr.row.Key)
	if err != nil {
		return SyncState{}, engine.Wrap(err)
	}
	rr.row = row
	if row.HeadSeq > 0 {
		if err := c.present(ctx, sess, row.Key, row.HeadSeq, row.HeadHash); err != nil {
			return SyncState{}, err
		}
	}
	return c.syncStateRow(ctx, c.Store.Read(), rr.h.origin, row, sess)
}

// presented returns the session's presented head of a room.
func (c *Module) presented(ctx context.Context, sess SessionID, key int64) (int64, string, bool, error) {
	if sess == "" {
		return 0, "", false, nil
	}
	if h, ok := c.pres.get(sess, key); ok {
		return h.seq, h.hash, true, nil
	}
	seq, hash, ok, err := c.Store.Read().Presented(ctx, string(sess), key)
	return seq, hash, ok, engine.Wrap(err)
}
