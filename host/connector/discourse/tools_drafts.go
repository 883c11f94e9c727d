package discourse

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"apconnect/host/capability"
	"apconnect/host/engine"
	"apconnect/host/proto/adp"
	"apconnect/host/store"
)

// DraftsList is agent_protocols_drafts_list: the held drafts (of one room
// or all), oldest first, each with its room's current sync. Local state
// only. With draft_id (0.12.6) it reads that one draft as draft_get does:
// the changes since its base and the room's sync, presenting the current
// head.
func (c *Module) DraftsList(ctx context.Context, sess SessionID, in DraftsListInput) (*DraftsListResult, error) {
	if in.DraftID != "" {
		g, err := c.DraftGet(ctx, sess, DraftGetInput{DraftID: in.DraftID})
		if err != nil {
			return nil, err
		}
		return &DraftsListResult{Drafts: []HeldDraft{g.Draft}, Changes: &g.Changes, ChangesTruncated: g.ChangesTruncated, Sync: &g.Sync}, nil
	}
	limit := in.Limit
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, 100)
	var after int64
	if in.Cursor != "" {
		v, err := strconv.ParseInt(strings.TrimPrefix(in.Cursor, "d"), 10, 64)
		if err != nil || !strings.HasPrefix(in.Cursor, "d") || v < 0 {
			return nil, engine.Invalid("cursor %q is not a cursor of this list", in.Cursor)
		}
		after = v
	}
	var roomKey int64
	if in.RoomID != "" {
		rr, err := c.resolve(ctx, in.Host, in.RoomID, false)
		if err != nil {
			return nil, err
		}
		if rr.row == nil {
			return &DraftsListResult{Drafts: []HeldDraft{}}, nil
		}
		roomKey = rr.row.Key
	}
	ds, err := c.Store.Read().Drafts(ctx, roomKey, after, limit+1)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	out := &DraftsListResult{Drafts: []HeldDraft{}}
	if len(ds) > limit {
		ds = ds[:limit]
		out.NextCursor = "d" + strconv.FormatInt(ds[len(ds)-1].Order(), 10)
	}
	syncs := map[int64]SyncState{}
	for _, d := range ds {
		s, ok := syncs[d.RoomKey]
		if !ok {
			row, err := c.Store.Read().Room(ctx, d.RoomKey)
			if err != nil {
				return nil, engine.Wrap(err)
			}
			if s, err = c.syncStateRow(ctx, c.Store.Read(), row.Host, row, sess); err != nil {
				return nil, err
			}
			syncs[d.RoomKey] = s
		}
		out.Drafts = append(out.Drafts, heldDraft(d, s))
	}
	return out, nil
}

// draftRoom loads a draft and its room.
func (c *Module) draftRoom(ctx context.Context, id string) (*store.Draft, *roomRef, error) {
	d, err := c.Store.Read().Draft(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, engine.Errorf(CodeDraftNotFound, "no held draft %s", id)
	}
	if err != nil {
		return nil, nil, engine.Wrap(err)
	}
	h, err := c.host(d.Host)
	if err != nil {
		return nil, nil, err
	}
	row, err := c.Store.Read().Room(ctx, d.RoomKey)
	if err != nil {
		return nil, nil, engine.Wrap(err)
	}
	return d, &roomRef{h: h, roomID: d.RoomID, row: row}, nil
}

// DraftGet is agent_protocols_draft_get: one held draft with the changes
// accepted after its base and the room's current sync. It presents the
// current head (the changes reach it). Local state only.
func (c *Module) DraftGet(ctx context.Context, sess SessionID, in DraftGetInput) (*DraftGetResult, error) {
	d, rr, err := c.draftRoom(ctx, in.DraftID)
	if err != nil {
		return nil, err
	}
	changes, trunc, err := c.changesSince(ctx, rr.row.Key, d.BaseSeq, maxChanges)
	if err != nil {
		return nil, err
	}
	sync, err := c.presentCurrent(ctx, rr, sess)
	if err != nil {
		return nil, err
	}
	if changes == nil {
		changes = []TimelineItem{}
	}
	return &DraftGetResult{Draft: heldDraft(d, sync), Changes: changes, Sync: sync, ChangesTruncated: trunc}, nil
}

// DraftDrop is agent_protocols_draft_drop: discard a held draft; nothing
// is signed or sent.
func (c *Module) DraftDrop(ctx context.Context, sess SessionID, in DraftDropInput) (*DraftDropResult, error) {
	var n int64
	var ok bool
	err := c.Store.Write(ctx, func(tx *store.Tx) error {
		var err error
		if ok, err = tx.DeleteDraft(ctx, in.DraftID); err != nil {
			return err
		}
		n, err = tx.DraftCount(ctx)
		return err
	})
	if err != nil {
		return nil, engine.Wrap(err)
	}
	if !ok {
		return nil, engine.Errorf(CodeDraftNotFound, "no held draft %s", in.DraftID)
	}
	return &DraftDropResult{Status: StatusDropped, DraftID: in.DraftID, PendingCount: n}, nil
}

// Draft actions. The seed's four are the ones drafts offer; send and drop
// (0.12.6) are accepted as aliases of send_as_is and stay_silent.
const (
	ActionRevise     = "revise"
	ActionSendAsIs   = "send_as_is"
	ActionStaySilent = "stay_silent"
	ActionSendAnyway = "send_anyway"
	ActionSend       = "send"
	ActionDrop       = "drop"
)

// DraftCommit is agent_protocols_draft_commit: resolve a held draft with
// one action. stay_silent (or drop) drops it (nothing is sent). revise
// replaces the given fields and submits against the base given or the
// presented head (which the held result or draft_get presented);
// send_as_is (or send) submits the stored draft the same way; send_anyway
// syncs the room and re-signs the draft on its latest head (automatic
// re-signs capped as for send_anyway). The draft is removed once the write
// is sent or held again (as a new draft); a rejected result or an error
// keeps it, so the agent can still decide (0.12.6 section 6.5).
func (c *Module) DraftCommit(ctx context.Context, sess SessionID, in DraftCommitInput) (*WriteResult, error) {
	switch in.Action {
	case ActionSend:
		in.Action = ActionSendAsIs
	case ActionDrop:
		in.Action = ActionStaySilent
	}
	if in.Action == ActionStaySilent {
		res, err := c.DraftDrop(ctx, sess, DraftDropInput{DraftID: in.DraftID})
		if err != nil {
			return nil, err
		}
		return &WriteResult{Status: StatusDropped, DraftID: res.DraftID, PendingCount: engine.Ptr(res.PendingCount)}, nil
	}
	switch in.Action {
	case ActionRevise, ActionSendAsIs, ActionSendAnyway:
	default:
		return nil, engine.Invalid("action %q is not one of revise, send_as_is, stay_silent, send_anyway (or send, drop)", in.Action)
	}
	d, rr, err := c.draftRoom(ctx, in.DraftID)
	if err != nil {
		return nil, err
	}
	if ctx, err = c.Need(ctx, rr.h.origin, capability.DiscourseWrite); err != nil {
		return nil, err
	}
	req, err := c.draftRequest(ctx, sess, d, rr, in)
	if err != nil {
		return nil, err
	}
	res, err := c.write(ctx, req)
	if err != nil {
		return nil, err
	}
	if res.Status == StatusRejected {
		return res, nil
	}
	if err := c.Store.Write(ctx, func(tx *store.Tx) error { _, err := tx.DeleteDraft(ctx, d.ID); return err }); err != nil {
		return nil, engine.Wrap(err)
	}
	return res, nil
}

// draftRequest rebuilds the write of a held draft with the commit's
// revisions.
func (c *Module) draftRequest(ctx context.Context, sess SessionID, d *store.Draft, rr *roomRef, in DraftCommitInput) (*writeRequest, error) {
	input := heldDraft(d, SyncState{}).Draft
	revise := in.Action == ActionRevise
	if !revise && (in.Content != nil || in.ContentType != nil || in.Mentions != nil || in.References != nil || in.Extra != nil || in.Type != nil || in.Payload != nil) {
		return nil, engine.Invalid("only revise takes new content; %s submits the stored draft", in.Action)
	}
	policy, err := normPolicy(in.OnHeadMismatch)
	if err != nil {
		return nil, err
	}
	base, err := explicitBase(in.BaseSeq, in.BaseHash)
	if err != nil {
		return nil, err
	}
	req := &writeRequest{sess: sess, rr: rr, base: base, policy: policy, draftKind: d.Kind}
	mentions, references := toStrings(input["mentions"]), toStrings(input["references"])
	if in.Mentions != nil {
		mentions = in.Mentions
	}
	if in.References != nil {
		references = in.References
	}
	req.mentions, req.references = mentions, references
	switch d.Kind {
	case "message":
		if in.Type != nil || in.Payload != nil {
			return nil, engine.Invalid("a message draft is revised with content, content_type, mentions, references and extra")
		}
		content, _ := input["content"].(string)
		ct, _ := input["content_type"].(string)
		extra, _ := input["extra"].(map[string]any)
		if in.Content != nil {
			content = *in.Content
		}
		if in.ContentType != nil {
			ct = *in.ContentType
		}
		if in.Extra != nil {
			extra = in.Extra
		}
		if content == "" {
			return nil, engine.Invalid("content must not be empty")
		}
		if ct == "" {
			ct = "text/plain"
		}
		p := map[string]any{"content_type": ct, "content": content}
		if len(extra) > 0 {
			p["extra"] = extra
		}
		pv, err := engine.ObjectValue(p)
		if err != nil {
			return nil, engine.Invalid("payload: %v", err)
		}
		req.typ, req.payload = adp.TypeMessageCreate, pv
		req.draftInput = map[string]any{"content": content, "content_type": ct, "mentions": strs(mentions), "references": strs(references), "extra": objOrEmpty(extra)}
	default:
		if in.Content != nil || in.ContentType != nil || in.Extra != nil {
			return nil, engine.Invalid("an event draft is revised with type, payload, mentions and references")
		}
		typ, _ := input["type"].(string)
		payload, _ := input["payload"].(map[string]any)
		if in.Type != nil {
			typ = *in.Type
		}
		if in.Payload != nil {
			payload = in.Payload
		}
		if payload == nil {
			return nil, engine.Invalid("payload must be a JSON object")
		}
		pv, err := engine.ObjectValue(payload)
		if err != nil {
			return nil, engine.Invalid("payload: %v", err)
		}
		req.typ, req.payload = typ, pv
		req.draftInput = map[string]any{"type": typ, "payload": pv, "mentions": strs(mentions), "references": strs(references)}
	}
	if in.Action == ActionSendAnyway {
		// Re-sign the same draft against the latest head.
		if _, err := c.syncRoom(ctx, rr.h, rr.row.Key, rr.roomID, syncOptions{}); err != nil {
			return nil, err
		}
		row, err := c.Store.Read().Room(ctx, rr.row.Key)
		if err != nil {
			return nil, engine.Wrap(err)
		}
		if base == nil {
			req.base = &adp.Link{Seq: row.HeadSeq, Hash: row.HeadHash}
		}
		req.policy = PolicySendAnyway
	}
	return req, nil
}

func toStrings(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
