package discourse

import (
	"context"
	"encoding/json"

	"apconnect/host/capability"
	"apconnect/host/client"
	"apconnect/host/engine"
	"apconnect/host/identity"
	"apconnect/host/proto/adp"
	"apconnect/host/store"
)

// statusRoom resolves a room for the status tools, checks that its host
// grants need (and returns a context carrying the grant), and creates its
// local row when it is not known (statuses are cached per room).
func (c *Module) statusRoom(ctx context.Context, host, roomID string, need capability.Capability) (context.Context, *roomRef, error) {
	rr, err := c.resolve(ctx, host, roomID, false)
	if err != nil {
		return ctx, nil, err
	}
	if ctx, err = c.Need(ctx, rr.h.origin, need); err != nil {
		return ctx, nil, err
	}
	if rr.row == nil {
		now := c.NowMS()
		if err := c.Store.Write(ctx, func(tx *store.Tx) error {
			row, err := tx.EnsureRoom(ctx, rr.h.origin, rr.roomID, now)
			rr.row = row
			return err
		}); err != nil {
			return ctx, nil, engine.Wrap(err)
		}
	}
	return ctx, rr, nil
}

// statusSync returns the room's SyncState when it has verified state.
func (c *Module) statusSync(ctx context.Context, rr *roomRef, sess SessionID) (*SyncState, error) {
	if err := c.reload(ctx, rr); err != nil {
		return nil, err
	}
	if !rr.row.HasSnapshot {
		return nil, nil
	}
	s, err := c.syncStateRow(ctx, c.Store.Read(), rr.h.origin, rr.row, sess)
	if err != nil {
		return nil, err
	}
	return &s, nil
}

func statusView(roomID string, s *client.AgentStatus) AgentStatus {
	v := AgentStatus{RoomID: roomID, AgentID: s.AgentID, State: s.State, Summary: s.Summary, SeenSeq: s.SeenSeq, SeenHash: s.SeenHash,
		ClaimID: s.ClaimID, Activity: s.Activity, ExpiresAt: s.ExpiresAt, UpdatedAt: s.UpdatedAt, Extra: s.Extra}
	if v.RoomID == "" {
		v.RoomID = s.RoomID
	}
	return v
}

func storedStatus(v AgentStatus) (store.Status, error) {
	raw, err := json.Marshal(v)
	return store.Status{AgentID: v.AgentID, ExpiresAt: v.ExpiresAt, Status: raw}, err
}

// AgentStatusList is agent_protocols_agent_status_list: the room's current
// unexpired agent statuses, read from the host (an authenticated read,
// nothing signed) or from the connector's recent copy (kept current by live
// room.agent_status items) unless refresh. With agent_id (0.12.6) it lists
// that agent's status only, as agent_status_get reads it (none: an empty
// list).
func (c *Module) AgentStatusList(ctx context.Context, sess SessionID, in AgentStatusListInput) (*AgentStatusListResult, error) {
	if in.AgentID != "" {
		one, err := c.AgentStatusGet(ctx, sess, AgentStatusGetInput(in))
		if err != nil {
			return nil, err
		}
		out := &AgentStatusListResult{Statuses: []AgentStatus{}, Sync: one.Sync}
		if one.Status != nil {
			out.Statuses = append(out.Statuses, *one.Status)
		}
		return out, nil
	}
	ctx, rr, err := c.statusRoom(ctx, in.Host, in.RoomID, capability.DiscourseRead)
	if err != nil {
		return nil, err
	}
	now := c.NowMS()
	if in.Refresh || rr.row.StatusesAt == 0 || now-rr.row.StatusesAt > DefaultStatusTTL.Milliseconds() {
		list, err := rr.h.client.AgentStatuses(ctx, rr.roomID)
		if err != nil {
			return nil, engine.Wrap(err)
		}
		var rows []store.Status
		for _, s := range list {
			if s == nil || !identity.ValidAgentID(s.AgentID) {
				continue
			}
			r, err := storedStatus(statusView(rr.roomID, s))
			if err != nil {
				return nil, engine.Wrap(err)
			}
			rows = append(rows, r)
		}
		if err := c.Store.Write(ctx, func(tx *store.Tx) error { return tx.ReplaceStatuses(ctx, rr.row.Key, rows, now) }); err != nil {
			return nil, engine.Wrap(err)
		}
	}
	cached, err := c.Store.Read().Statuses(ctx, rr.row.Key, now)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	out := &AgentStatusListResult{Statuses: []AgentStatus{}}
	for _, s := range cached {
		var v AgentStatus
		if json.Unmarshal(s.Status, &v) == nil {
			out.Statuses = append(out.Statuses, v)
		}
	}
	if out.Sync, err = c.statusSync(ctx, rr, sess); err != nil {
		return nil, err
	}
	return out, nil
}

// AgentStatusGet is agent_protocols_agent_status_get: one agent's current
// status, from the recent copy or (refresh, or none cached) the host. No
// status is an absent status.
func (c *Module) AgentStatusGet(ctx context.Context, sess SessionID, in AgentStatusGetInput) (*AgentStatusGetResult, error) {
	if !identity.ValidAgentID(in.AgentID) {
		return nil, engine.Invalid("agent_id %q is not a valid Agent ID", in.AgentID)
	}
	ctx, rr, err := c.statusRoom(ctx, in.Host, in.RoomID, capability.DiscourseRead)
	if err != nil {
		return nil, err
	}
	now := c.NowMS()
	out := &AgentStatusGetResult{}
	fresh := rr.row.StatusesAt > 0 && now-rr.row.StatusesAt <= DefaultStatusTTL.Milliseconds()
	cached, err := c.Store.Read().Status(ctx, rr.row.Key, in.AgentID, now)
	if err != nil && err != store.ErrNotFound {
		return nil, engine.Wrap(err)
	}
	switch {
	case !in.Refresh && cached != nil:
		var v AgentStatus
		if json.Unmarshal(cached.Status, &v) == nil {
			out.Status = &v
		}
	case !in.Refresh && fresh:
		// The fresh list has no status for this agent.
	default:
		s, err := rr.h.client.AgentStatus(ctx, rr.roomID, in.AgentID)
		switch {
		case engine.ServiceCode(err) == adp.CodeAgentStatusNotFound:
			if err := c.Store.Write(ctx, func(tx *store.Tx) error { return tx.DeleteStatus(ctx, rr.row.Key, in.AgentID) }); err != nil {
				return nil, engine.Wrap(err)
			}
		case err != nil:
			return nil, engine.Wrap(err)
		default:
			v := statusView(rr.roomID, s)
			v.AgentID = in.AgentID
			r, err := storedStatus(v)
			if err != nil {
				return nil, engine.Wrap(err)
			}
			if err := c.Store.Write(ctx, func(tx *store.Tx) error { return tx.PutStatus(ctx, rr.row.Key, r) }); err != nil {
				return nil, engine.Wrap(err)
			}
			if v.ExpiresAt > now {
				out.Status = &v
			}
		}
	}
	if out.Sync, err = c.statusSync(ctx, rr, sess); err != nil {
		return nil, err
	}
	return out, nil
}

// AgentStatusSet is agent_protocols_agent_status_set: replace the agent's
// own transient status in the room (an authenticated PUT; no event is
// signed, the head does not move, nothing enters the archive). seen_seq and
// seen_hash default to the agent's local read state: the later of the read
// cursor and the presented head. An expires_at at or before now clears it.
func (c *Module) AgentStatusSet(ctx context.Context, sess SessionID, in AgentStatusSetInput) (*AgentStatusSetResult, error) {
	if in.State == "" {
		return nil, engine.Invalid("state must not be empty")
	}
	ctx, rr, err := c.statusRoom(ctx, in.Host, in.RoomID, capability.DiscourseWrite)
	if err != nil {
		return nil, err
	}
	body := client.AgentStatusInput{State: in.State, Summary: in.Summary, SeenHash: in.SeenHash, ClaimID: in.ClaimID,
		Activity: in.Activity, Extra: in.Extra}
	if in.ExpiresAt != nil {
		body.ExpiresAt = *in.ExpiresAt
		if body.ExpiresAt == 0 {
			body.ExpiresAt = 1 // "now or earlier" must reach the host, not be omitted
		}
	}
	if in.SeenSeq != nil {
		body.SeenSeq = *in.SeenSeq
	} else {
		seen := rr.row.ReadSeq
		if pSeq, _, ok, err := c.presented(ctx, sess, rr.row.Key); err == nil && ok && pSeq > seen {
			seen = pSeq
		}
		body.SeenSeq = seen
		body.SeenHash = ""
	}
	if body.SeenSeq > 0 && body.SeenHash == "" {
		if h, ok, err := c.Store.Read().RecordHash(ctx, rr.row.Key, body.SeenSeq); err == nil && ok {
			body.SeenHash = h
		}
	}
	s, err := rr.h.client.PutAgentStatus(ctx, rr.roomID, body)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	v := statusView(rr.roomID, s)
	v.AgentID = c.Self
	now := c.NowMS()
	err = c.Store.Write(ctx, func(tx *store.Tx) error {
		if v.ExpiresAt <= now {
			return tx.DeleteStatus(ctx, rr.row.Key, c.Self)
		}
		r, err := storedStatus(v)
		if err != nil {
			return err
		}
		return tx.PutStatus(ctx, rr.row.Key, r)
	})
	if err != nil {
		return nil, engine.Wrap(err)
	}
	out := &AgentStatusSetResult{Status: v}
	if out.Sync, err = c.statusSync(ctx, rr, sess); err != nil {
		return nil, err
	}
	return out, nil
}
