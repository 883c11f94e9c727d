package discourse

import (
	"context"
	"encoding/json"

	"apconnect/host/engine"
	"apconnect/host/room"
	"apconnect/host/store"
)

// roomView builds the RoomStateView of a verified room.
func (c *Module) roomView(ctx context.Context, host string, row *store.Room, st *room.State, fullTypes bool, unread int64) RoomStateView {
	v := RoomStateView{Host: host, RoomID: row.RoomID, Status: "unknown", Tags: []string{}, Policy: map[string]any{},
		Types: []map[string]any{}, UnreadCount: unread, PendingInboxCount: max(row.PendingInbox, 0)}
	r := st.Room
	if r == nil {
		return v
	}
	v.Status = string(r.StatusAt(c.NowMS()))
	v.Visibility = string(r.Visibility)
	v.Topic, v.Agenda, v.Guidance = r.Topic, r.Agenda, r.Guidance
	v.Creator, v.CreatedAt = r.Creator, r.CreatedAt
	v.StartTime, v.EndTime = r.StartTime, r.EndTime
	if len(r.Tags) > 0 {
		v.Tags = append([]string{}, r.Tags...)
	}
	v.Language = r.Language
	v.Policy = r.Policy.Value()
	for _, d := range r.Types {
		if fullTypes {
			v.Types = append(v.Types, d.Value())
			continue
		}
		t := map[string]any{"type": d.Type, "kind": string(d.Kind), "title": d.Title, "status": string(d.EffectiveStatus())}
		if d.Description != "" {
			t["description"] = d.Description
		}
		v.Types = append(v.Types, t)
	}
	if m, ok := room.Member(r, c.Self); ok {
		v.SelfMember = &m
	}
	for _, m := range room.Members(r) {
		v.MembersCount++
		if m.Status == room.StatusActive {
			v.ActiveMembersCount++
		}
	}
	v.ActiveTurn = st.ActiveTurn
	if len(r.Extra) > 0 {
		v.Extra = r.Extra
	}
	return v
}

// summaryOf builds the RoomSummary of a known room.
func (c *Module) summaryOf(ctx context.Context, row *store.Room) (RoomSummary, error) {
	s := RoomSummary{RoomID: row.RoomID, Host: row.Host, Status: "unknown", Tags: []string{}, PendingInboxCount: max(row.PendingInbox, 0), Known: true}
	h := c.hosts[row.Host]
	if h != nil {
		st, err := c.loadStateRow(ctx, row)
		if err != nil {
			return s, err
		}
		if r := st.Room; r != nil {
			s.Topic, s.Status, s.Visibility = r.Topic, string(r.StatusAt(c.NowMS())), string(r.Visibility)
			s.StartTime, s.EndTime, s.Language = r.StartTime, r.EndTime, r.Language
			if len(r.Tags) > 0 {
				s.Tags = append([]string{}, r.Tags...)
			}
		}
	}
	if row.SelfState == "active" {
		s.Role = engine.Ptr(row.SelfRole)
	}
	n, err := c.Store.Read().UnreadCount(ctx, row.Key, row.ReadSeq, c.Self)
	if err != nil {
		return s, err
	}
	s.UnreadCount = n
	return s, nil
}

// items decodes stored timeline items, attaching records when asked.
func items(evs []store.Event, withRecords bool) ([]TimelineItem, error) {
	out := make([]TimelineItem, 0, len(evs))
	for _, e := range evs {
		var it TimelineItem
		if err := room.DecodeTimelineItem(e.Item, &it); err != nil {
			return nil, err
		}
		if withRecords && e.Record != nil {
			it.Record = json.RawMessage(e.Record)
		}
		out = append(out, it)
	}
	return out, nil
}

// changesSince returns the timeline items after base (at most limit, the
// newest) and whether older ones were left out.
func (c *Module) changesSince(ctx context.Context, key, base int64, limit int) ([]TimelineItem, bool, error) {
	evs, err := c.Store.Read().Timeline(ctx, key, store.TimelineQuery{AfterSeq: base, Limit: limit + 1, Newest: true})
	if err != nil {
		return nil, false, engine.Wrap(err)
	}
	truncated := len(evs) > limit
	if truncated {
		evs = evs[1:]
	}
	out, err := items(evs, false)
	return out, truncated, engine.Wrap(err)
}
