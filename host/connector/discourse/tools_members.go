package discourse

import (
	"context"
	"strconv"
	"strings"

	"apconnect/host/capability"
	"apconnect/host/engine"
	"apconnect/host/identity"
	"apconnect/host/room"
	"apconnect/host/store"
)

// RoomMembersList is agent_protocols_room_members_list: the room's members
// as materialized from its verified records (current and past, banned
// included), filtered by agent_id, status and role. Local state;
// include_profiles reads verified profiles (descriptive only) from profile
// services. With agent_id the member must exist (member_not_found), and
// include_recent_activity adds its 10 newest timeline items, newest first.
func (c *Module) RoomMembersList(ctx context.Context, sess SessionID, in RoomMembersListInput) (*RoomMembersListResult, error) {
	if in.AgentID != "" && !identity.ValidAgentID(in.AgentID) {
		return nil, engine.Invalid("agent_id %q is not a valid Agent ID", in.AgentID)
	}
	rr, err := c.resolve(ctx, in.Host, in.RoomID, true)
	if err != nil {
		return nil, err
	}
	if ctx, err = c.Need(ctx, rr.h.origin, capability.DiscourseRead); err != nil {
		return nil, err
	}
	st, err := c.loadStateRow(ctx, rr.row)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	if st.Room == nil {
		return nil, engine.Errorf(CodeVerificationFailed, "room %s has no verified state", rr.roomID)
	}
	switch in.Status {
	case "", "all", room.StatusActive, room.StatusLeft, room.StatusRemoved, room.StatusBanned:
	default:
		return nil, engine.Invalid("status %q is not one of active, left, removed, banned, all", in.Status)
	}
	limit := in.Limit
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, 200)
	offset := 0
	if in.Cursor != "" {
		v, err := strconv.Atoi(strings.TrimPrefix(in.Cursor, "m"))
		if err != nil || !strings.HasPrefix(in.Cursor, "m") || v < 0 {
			return nil, engine.Invalid("cursor %q is not a cursor of this list", in.Cursor)
		}
		offset = v
	}
	var all []RoomMemberView
	for _, v := range room.Members(st.Room) {
		if in.AgentID != "" && v.AgentID != in.AgentID {
			continue
		}
		if in.Status != "" && in.Status != "all" && v.Status != in.Status {
			continue
		}
		if in.Role != "" && v.Role != in.Role {
			continue
		}
		all = append(all, v)
	}
	if in.AgentID != "" && len(all) == 0 {
		if _, ok := room.Member(st.Room, in.AgentID); !ok {
			return nil, &engine.Error{Code: CodeMemberNotFound, Message: "room " + rr.roomID + " has no member " + in.AgentID}
		}
	}
	out := &RoomMembersListResult{Members: []RoomMemberView{}}
	if offset < len(all) {
		end := min(offset+limit, len(all))
		out.Members = append(out.Members, all[offset:end]...)
		if end < len(all) {
			out.NextCursor = "m" + strconv.Itoa(end)
		}
	}
	if in.IncludeProfiles {
		c.attachProfiles(ctx, rr.h, out.Members)
	}
	if in.AgentID != "" && in.IncludeRecentActivity {
		if out.Recent, err = c.recentActivity(ctx, rr.row.Key, in.AgentID); err != nil {
			return nil, err
		}
	}
	out.Sync, err = c.syncState(ctx, c.Store.Read(), rr, sess)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RoomMemberGet is agent_protocols_room_member_get: one member from
// verified local state, with its profile (descriptive, verified against its
// signed history) and its latest timeline items when asked.
func (c *Module) RoomMemberGet(ctx context.Context, sess SessionID, in RoomMemberGetInput) (*RoomMemberGetResult, error) {
	if !identity.ValidAgentID(in.AgentID) {
		return nil, engine.Invalid("agent_id %q is not a valid Agent ID", in.AgentID)
	}
	rr, err := c.resolve(ctx, in.Host, in.RoomID, true)
	if err != nil {
		return nil, err
	}
	if ctx, err = c.Need(ctx, rr.h.origin, capability.DiscourseRead); err != nil {
		return nil, err
	}
	st, err := c.loadStateRow(ctx, rr.row)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	if st.Room == nil {
		return nil, engine.Errorf(CodeVerificationFailed, "room %s has no verified state", rr.roomID)
	}
	v, ok := room.Member(st.Room, in.AgentID)
	if !ok {
		return nil, &engine.Error{Code: CodeMemberNotFound, Message: "room " + rr.roomID + " has no member " + in.AgentID}
	}
	out := &RoomMemberGetResult{Member: v}
	if in.IncludeProfile {
		views := []RoomMemberView{v}
		c.attachProfiles(ctx, rr.h, views)
		out.Member = views[0]
	}
	if in.IncludeRecentActivity {
		if out.Recent, err = c.recentActivity(ctx, rr.row.Key, in.AgentID); err != nil {
			return nil, err
		}
	}
	out.Sync, err = c.syncState(ctx, c.Store.Read(), rr, sess)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// recentActivity returns an agent's 10 newest timeline items in a room,
// newest first.
func (c *Module) recentActivity(ctx context.Context, key int64, agentID string) ([]TimelineItem, error) {
	evs, err := c.Store.Read().Timeline(ctx, key, store.TimelineQuery{Actors: []string{agentID}, Limit: 10, Newest: true})
	if err != nil {
		return nil, engine.Wrap(err)
	}
	recent, err := items(evs, false)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	for i, j := 0, len(recent)-1; i < j; i, j = i+1, j-1 {
		recent[i], recent[j] = recent[j], recent[i]
	}
	return recent, nil
}
