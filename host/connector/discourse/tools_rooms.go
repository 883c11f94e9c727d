package discourse

import (
	"context"
	"strconv"
	"strings"

	"apconnect/host/capability"
	"apconnect/host/client"
	"apconnect/host/engine"
	"apconnect/host/store"
)

// RoomsSearch is agent_protocols_rooms_search: the host's public room
// directory (a remote read; nothing is signed). Rooms known locally carry
// the agent's role and local counts.
func (c *Module) RoomsSearch(ctx context.Context, sess SessionID, in RoomsSearchInput) (*RoomsResult, error) {
	h, err := c.host(in.Host)
	if err != nil {
		return nil, err
	}
	if ctx, err = c.Need(ctx, h.origin, capability.DiscourseRead); err != nil {
		return nil, err
	}
	limit := in.Limit
	if limit <= 0 {
		limit = 20
	}
	page, err := h.client.PublicRooms(ctx, client.PublicRoomQuery{Status: in.Status, Tag: in.Tag, Keyword: in.Keyword,
		Creator: in.Creator, StartsAfter: in.StartsAfter, EndsBefore: in.EndsBefore, Language: in.Language,
		Limit: min(limit, 100), Cursor: in.Cursor})
	if err != nil {
		return nil, engine.Wrap(err)
	}
	out := &RoomsResult{Rooms: []RoomSummary{}, NextCursor: page.NextCursor}
	for _, r := range page.Items {
		out.Rooms = append(out.Rooms, c.remoteSummary(ctx, h, r))
	}
	return out, nil
}

// RoomsList is agent_protocols_rooms_list. Scope known (the default) lists
// the rooms known locally, with the agent's role and each room's unread and
// pending inbox counts (local state only; host narrows it to one host).
// Scope public reads a host's public directory, as rooms_search does; scope
// mine reads the host's list of the agent's rooms (an authenticated read),
// with the host's membership and role of each.
func (c *Module) RoomsList(ctx context.Context, sess SessionID, in RoomsListInput) (*RoomsResult, error) {
	publicOnly := in.Tag != "" || in.Keyword != "" || in.Creator != "" || in.StartsAfter != nil || in.EndsBefore != nil || in.Language != ""
	switch in.Scope {
	case "", ScopeKnown, ScopeMine:
		if publicOnly {
			return nil, engine.Invalid("tag, keyword, creator, starts_after, ends_before and language need scope public")
		}
	case ScopePublic:
	default:
		return nil, engine.Invalid("scope %q is not one of known, public, mine", in.Scope)
	}
	if (in.Membership == "invited" || in.Membership == "left") && in.Scope != ScopeMine {
		return nil, engine.Invalid("membership %s needs scope mine (the host knows it, local state does not)", in.Membership)
	}
	switch in.Scope {
	case ScopePublic:
		if in.Host == "" {
			return nil, engine.Invalid("scope public needs host")
		}
		if in.Membership != "" {
			return nil, engine.Invalid("membership filters scope known or mine, not public")
		}
		q := RoomsSearchInput{Host: in.Host, Status: in.Status, Tag: in.Tag, Keyword: in.Keyword, Creator: in.Creator,
			Language: in.Language, Limit: in.Limit, Cursor: in.Cursor}
		if in.StartsAfter != nil {
			q.StartsAfter = *in.StartsAfter
		}
		if in.EndsBefore != nil {
			q.EndsBefore = *in.EndsBefore
		}
		return c.RoomsSearch(ctx, sess, q)
	case ScopeMine:
		return c.myRooms(ctx, in)
	}
	var hostFilter string
	if in.Host != "" {
		h, err := c.host(in.Host)
		if err != nil {
			return nil, err
		}
		if ctx, err = c.Need(ctx, h.origin, capability.DiscourseRead); err != nil {
			return nil, err
		}
		hostFilter = h.origin
	}
	limit := in.Limit
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, 200)
	var after int64
	if in.Cursor != "" {
		v, err := strconv.ParseInt(strings.TrimPrefix(in.Cursor, "r"), 10, 64)
		if err != nil || !strings.HasPrefix(in.Cursor, "r") || v < 0 {
			return nil, engine.Invalid("cursor %q is not a cursor of this list", in.Cursor)
		}
		after = v
	}
	switch in.Membership {
	case "", "all", "member", "creator", "moderator", "pending":
	default:
		return nil, engine.Invalid("membership %q is not one of member, creator, moderator, pending, invited, left, all", in.Membership)
	}
	rows, err := c.Store.Read().ListRooms(ctx, store.RoomFilter{Membership: in.Membership, Status: in.Status, Now: c.NowMS(),
		Host: hostFilter, AfterKey: after, Limit: limit + 1})
	if err != nil {
		return nil, engine.Wrap(err)
	}
	out := &RoomsResult{Rooms: []RoomSummary{}}
	if len(rows) > limit {
		rows = rows[:limit]
		out.NextCursor = "r" + strconv.FormatInt(rows[len(rows)-1].Key, 10)
	}
	for _, row := range rows {
		if c.Allow(row.Host, capability.DiscourseRead) != nil {
			continue // a host whose read grant the operator withdrew
		}
		s, err := c.summaryOf(ctx, row)
		if err != nil {
			return nil, engine.Wrap(err)
		}
		out.Rooms = append(out.Rooms, s)
	}
	return out, nil
}

// myRooms is rooms_list with scope mine: GET {my_rooms} with a request JWT,
// each item summarized with the host's membership and role (and the local
// counts of rooms known locally).
func (c *Module) myRooms(ctx context.Context, in RoomsListInput) (*RoomsResult, error) {
	if in.Host == "" {
		return nil, engine.Invalid("scope mine needs host")
	}
	h, err := c.host(in.Host)
	if err != nil {
		return nil, err
	}
	if ctx, err = c.Need(ctx, h.origin, capability.DiscourseRead); err != nil {
		return nil, err
	}
	limit := in.Limit
	if limit <= 0 {
		limit = 50
	}
	page, err := h.client.MyRooms(ctx, client.MyRoomsQuery{Status: in.Status, Membership: in.Membership, Limit: min(limit, 100), Cursor: in.Cursor})
	if err != nil {
		return nil, engine.Wrap(err)
	}
	out := &RoomsResult{Rooms: []RoomSummary{}, NextCursor: page.NextCursor}
	for _, r := range page.Items {
		s := c.remoteSummary(ctx, h, &r.RoomResource)
		s.Membership = r.Membership
		if r.Role != "" {
			s.Role = engine.Ptr(string(r.Role))
		}
		out.Rooms = append(out.Rooms, s)
	}
	return out, nil
}

// remoteSummary summarizes a room resource read from a host, with the local
// counts when the room is known locally.
func (c *Module) remoteSummary(ctx context.Context, h *hostState, r *client.RoomResource) RoomSummary {
	s := RoomSummary{RoomID: r.ID, Host: h.origin, Topic: r.Topic, Status: string(r.Status), Visibility: string(r.Visibility),
		StartTime: r.StartTime, EndTime: r.EndTime, Tags: append([]string{}, r.Tags...), Language: r.Language}
	if s.Status == "" {
		s.Status = "unknown"
	}
	if row, err := c.Store.Read().RoomAt(ctx, h.origin, r.ID); err == nil {
		s.Known = true
		s.PendingInboxCount = max(row.PendingInbox, 0)
		if row.SelfState == "active" {
			s.Role = engine.Ptr(row.SelfRole)
		}
		if n, err := c.Store.Read().UnreadCount(ctx, row.Key, row.ReadSeq, c.Self); err == nil {
			s.UnreadCount = n
		}
	}
	return s
}

// RoomOpen is agent_protocols_room_open: fetch a room's resource and
// history from its host, verify every record, keep it locally and — with
// subscribe — follow it live. A known room is only re-read with refresh,
// which also retries a room marked as failing verification (a clean pass
// clears the mark). It presents the room's current head.
func (c *Module) RoomOpen(ctx context.Context, sess SessionID, in RoomOpenInput) (*RoomOpenResult, error) {
	if in.Host == "" {
		return nil, engine.Invalid("host is required")
	}
	rr, err := c.resolve(ctx, in.Host, in.RoomID, false)
	if err != nil {
		return nil, err
	}
	if ctx, err = c.Need(ctx, rr.h.origin, capability.DiscourseRead); err != nil {
		return nil, err
	}
	now := c.NowMS()
	if rr.row == nil || in.Subscribe != nil {
		err := c.Store.Write(ctx, func(tx *store.Tx) error {
			row, err := tx.EnsureRoom(ctx, rr.h.origin, rr.roomID, now)
			if err != nil {
				return err
			}
			if in.Subscribe != nil {
				if err := tx.SetSubscribed(ctx, row.Key, *in.Subscribe, now); err != nil {
					return err
				}
			}
			rr.row = row
			return nil
		})
		if err != nil {
			return nil, engine.Wrap(err)
		}
	}
	// Opening reads the host every time: a known room is brought up to date
	// (a process that does not follow rooms live, such as apconnect call,
	// would otherwise answer from an old copy); refresh also re-reads past a
	// verification failure.
	if _, err := c.syncRoom(ctx, rr.h, rr.row.Key, rr.roomID, syncOptions{resource: true, resync: in.Refresh}); err != nil {
		return nil, err
	}
	if err := c.reload(ctx, rr); err != nil {
		return nil, err
	}
	if !rr.row.HasSnapshot {
		return nil, engine.Errorf(CodeVerificationFailed, "room %s could not be verified from its first record", rr.roomID)
	}
	c.live.kick()
	st, err := c.loadStateRow(ctx, rr.row)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	sync, err := c.presentCurrent(ctx, rr, sess)
	if err != nil {
		return nil, err
	}
	view := c.roomView(ctx, rr.h.origin, rr.row, st, false, sync.UnreadCount)
	return &RoomOpenResult{Room: view, Sync: sync, ActiveTurn: st.ActiveTurn}, nil
}

// RoomState is agent_protocols_room_state: the room's materialized state
// from local verified records (the contract, the agent's membership, the
// member counts, the active turn, the type registry: full definitions
// unless include_types is false). A room not known locally is opened from
// its host first; refresh syncs from the host. subscribe sets (true) or
// clears (false) the live-follow flag, as room_open does. It presents the
// room's current head.
func (c *Module) RoomState(ctx context.Context, sess SessionID, in RoomStateInput) (*RoomStateResult, error) {
	rr, err := c.resolve(ctx, in.Host, in.RoomID, true)
	if err != nil {
		return nil, err
	}
	if ctx, err = c.Need(ctx, rr.h.origin, capability.DiscourseRead); err != nil {
		return nil, err
	}
	if in.Subscribe != nil {
		if err := c.Store.Write(ctx, func(tx *store.Tx) error {
			return tx.SetSubscribed(ctx, rr.row.Key, *in.Subscribe, c.NowMS())
		}); err != nil {
			return nil, engine.Wrap(err)
		}
		c.live.kick()
	}
	if in.Refresh {
		if _, err := c.syncRoom(ctx, rr.h, rr.row.Key, rr.roomID, syncOptions{resource: true, resync: true}); err != nil {
			return nil, err
		}
		if err := c.reload(ctx, rr); err != nil {
			return nil, err
		}
	}
	st, err := c.loadStateRow(ctx, rr.row)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	if st.Room == nil {
		return nil, engine.Errorf(CodeVerificationFailed, "room %s has no verified state", rr.roomID)
	}
	sync, err := c.presentCurrent(ctx, rr, sess)
	if err != nil {
		return nil, err
	}
	full := in.IncludeTypes == nil || *in.IncludeTypes
	return &RoomStateResult{Room: c.roomView(ctx, rr.h.origin, rr.row, st, full, sync.UnreadCount), Sync: sync, ActiveTurn: st.ActiveTurn}, nil
}
