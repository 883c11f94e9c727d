package discourse

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"apconnect/host/capability"
	"apconnect/host/engine"
	"apconnect/host/identity"
	"apconnect/host/plugin"
	"apconnect/host/proto/adp"
	"apconnect/host/room"
	"apconnect/host/store"
)

// On-head-mismatch policies.
const (
	PolicyHold       = "hold"
	PolicyReject     = "reject"
	PolicySendAnyway = "send_anyway"
)

// maxChanges bounds the changes listed with a held or rejected write.
const maxChanges = 50

// writeRequest is a room write as the agent asked for it.
type writeRequest struct {
	sess       SessionID
	rr         *roomRef
	typ        string
	payload    map[string]any // strictly parsed JSON, references not yet merged
	mentions   []string
	references []string
	base       *adp.Link // explicit base, nil for the default
	policy     string    // PolicyHold, PolicyReject or PolicySendAnyway
	draftKind  string    // "message" or "event"
	draftInput map[string]any
	// refresh syncs the room before choosing the base (send_anyway from a
	// held draft).
	refresh bool
}

func normPolicy(p string) (string, error) {
	switch p {
	case "", PolicyHold:
		return PolicyHold, nil
	case PolicyReject, PolicySendAnyway:
		return p, nil
	}
	return "", engine.Invalid("on_head_mismatch %q is not one of hold, reject, send_anyway", p)
}

// explicitBase reads a base_seq/base_hash pair: both or neither.
func explicitBase(seq *int64, hash *string) (*adp.Link, error) {
	switch {
	case seq == nil && hash == nil:
		return nil, nil
	case seq == nil || hash == nil:
		return nil, engine.Invalid("base_seq and base_hash must be given together")
	case *seq < 1:
		return nil, engine.Invalid("base_seq must be at least 1")
	}
	if _, err := identity.DecodeBase64URLLen(*hash, 32); err != nil {
		return nil, engine.Invalid("base_hash is not a record hash")
	}
	return &adp.Link{Seq: *seq, Hash: *hash}, nil
}

// checkMentions validates the mentions of a write: at most 32 unique Agent
// IDs.
func checkMentions(ms []string) error {
	if len(ms) > adp.MaxMentions {
		return engine.Invalid("at most %d mentions", adp.MaxMentions)
	}
	seen := map[string]bool{}
	for _, m := range ms {
		if !identity.ValidAgentID(m) {
			return engine.Invalid("mentions: %q is not a valid Agent ID", m)
		}
		if seen[m] {
			return engine.Invalid("mentions: %s appears twice", m)
		}
		seen[m] = true
	}
	return nil
}

// mergeReferences puts references into the payload where ADP carries them
// (payload.references); a payload that already has different references is
// refused.
func mergeReferences(payload map[string]any, refs []string) (map[string]any, error) {
	if len(refs) == 0 {
		return payload, nil
	}
	seen := map[string]bool{}
	list := make([]any, 0, len(refs))
	for _, r := range refs {
		if _, err := identity.DecodeBase64URLLen(r, 32); err != nil {
			return nil, engine.Invalid("references: %q is not an event id", r)
		}
		if seen[r] {
			return nil, engine.Invalid("references: %s appears twice", r)
		}
		seen[r] = true
		list = append(list, r)
	}
	if cur, ok := payload["references"]; ok {
		a, _ := json.Marshal(cur)
		b, _ := json.Marshal(list)
		if string(a) != string(b) {
			return nil, engine.Invalid("references given both in the input and in payload.references, and they differ")
		}
		return payload, nil
	}
	out := engine.CloneMap(payload)
	out["references"] = list
	return out, nil
}

// baseIsCurrent reports whether a base is current against the room head
// (the reference SDK's rule): it is after the head, or it is the head. A
// base behind the head, or at the head's seq with another hash, is stale: a
// head-advancing record was accepted after what the agent saw.
func baseIsCurrent(base, head adp.Link) bool {
	return base.Seq > head.Seq || base == head
}

// holdable reports whether a write of a class is subject to
// on_head_mismatch: messages and control writes, which the host checks
// against the head, and the lifecycle writes (contract class), which a host
// only anchors but the connector holds so a moderator does not overwrite a
// contract change it has not seen (DECISIONS #3). Signal and membership
// writes only anchor and are never held.
func holdable(class adp.Class) bool {
	return class.HeadChecked() || class == adp.ClassContract
}

// write runs the write path: base from the input or the presented head,
// the on_head_mismatch policy for holdable writes whose base is stale, local
// checks (ADP rules, plugin validators, backpressure) before anything is
// signed, the signed envelope stored in the outbox with its nonce, the
// submission, and the accepted record verified and applied.
func (c *Module) write(ctx context.Context, req *writeRequest) (*WriteResult, error) {
	mu := c.locks.Get(writeKey(req.rr.row.Key))
	if err := mu.Lock(ctx); err != nil {
		return nil, err
	}
	defer mu.Unlock()
	w, err := c.prepareWrite(ctx, req)
	if err != nil {
		return nil, err
	}
	resigns := 0
	for {
		head := w.st.Room.Head
		if w.holdable && !baseIsCurrent(*w.base, head) {
			switch {
			case req.policy == PolicySendAnyway && resigns < MaxAutoResigns:
				w.base = &head
				resigns++
			case req.policy == PolicyReject:
				return c.rejected(ctx, req, *w.base)
			default:
				return c.hold(ctx, req, *w.base)
			}
		}
		res, again, err := c.attemptWrite(ctx, req, w)
		if !again {
			return res, err
		}
	}
}

// pendingWrite is a write checked and ready to be signed against a base.
type pendingWrite struct {
	payload  map[string]any
	st       *room.State
	row      *store.Room
	holdable bool      // subject to on_head_mismatch
	base     *adp.Link // the head the write is made against
	// presented is the head presented to the session when the write began.
	presented *adp.Link
}

// prepareWrite checks the request, loads the room's verified state (syncing
// once when the type may have been defined since), and chooses the base:
// explicit, else the presented head, else (nothing presented in this
// session) the current verified head after a sync.
func (c *Module) prepareWrite(ctx context.Context, req *writeRequest) (*pendingWrite, error) {
	key, h := req.rr.row.Key, req.rr.h
	switch req.typ {
	case adp.TypeRoomCreate, adp.TypeJoinRequest:
		return nil, engine.Invalid("%s is not submitted as a room event (use agent_protocols_room_create or agent_protocols_room_join)", req.typ)
	}
	if err := checkMentions(req.mentions); err != nil {
		return nil, err
	}
	payload, err := mergeReferences(req.payload, req.references)
	if err != nil {
		return nil, err
	}
	if req.refresh {
		if _, err := c.syncRoom(ctx, h, key, req.rr.roomID, syncOptions{}); err != nil {
			return nil, err
		}
	}
	w := &pendingWrite{payload: payload}
	class, err := c.writeClass(ctx, req, w)
	if err != nil {
		return nil, err
	}
	w.holdable = holdable(class)
	w.base = req.base
	pSeq, pHash, pOK, err := c.presented(ctx, req.sess, key)
	if err != nil {
		return nil, err
	}
	if pOK {
		w.presented = &adp.Link{Seq: pSeq, Hash: pHash}
		if w.base == nil {
			w.base = w.presented
		}
	}
	if w.base == nil {
		if !req.refresh {
			if _, err := c.syncRoom(ctx, h, key, req.rr.roomID, syncOptions{}); err != nil {
				return nil, err
			}
			if w.st, w.row, err = c.writableState(ctx, req.rr); err != nil {
				return nil, err
			}
		}
		head := w.st.Room.Head
		w.base = &head
	}
	if w.base.Seq > w.row.SyncedSeq {
		return nil, engine.Invalid("base_seq %d is beyond the latest verified record %d", w.base.Seq, w.row.SyncedSeq)
	}
	return w, nil
}

// writeClass loads the room's writable state into w and returns the
// freshness class of the write's type; a type the room does not define is
// looked up once more after a sync (the room may not be followed live).
func (c *Module) writeClass(ctx context.Context, req *writeRequest, w *pendingWrite) (adp.Class, error) {
	var err error
	if w.st, w.row, err = c.writableState(ctx, req.rr); err != nil {
		return "", err
	}
	class, err := adp.ClassOf(req.typ, w.st.Room.Types)
	if adp.ErrorCode(err) == adp.CodeTypeNotDefined && !req.refresh {
		if _, serr := c.syncRoom(ctx, req.rr.h, req.rr.row.Key, req.rr.roomID, syncOptions{}); serr != nil {
			return "", serr
		}
		if w.st, w.row, err = c.writableState(ctx, req.rr); err != nil {
			return "", err
		}
		class, err = adp.ClassOf(req.typ, w.st.Room.Types)
	}
	if err != nil {
		return "", localError(err)
	}
	return class, nil
}

// attemptWrite builds, checks and submits the event against w.base through
// the engine's pipeline. again is true when the host answered
// room_head_mismatch and its history shows the head moved: w's state is
// reloaded and the caller applies the policy again.
func (c *Module) attemptWrite(ctx context.Context, req *writeRequest, w *pendingWrite) (res *WriteResult, again bool, err error) {
	key, h := req.rr.row.Key, req.rr.h
	f := adp.Fields{RoomID: req.rr.roomID, Base: engine.Ptr(*w.base)}
	if len(req.mentions) > 0 {
		f.Mentions = append([]string{}, req.mentions...)
	}
	ev := adp.NewEvent(req.typ, c.Self, c.NowMS(), w.payload, f)
	if err := c.localCheck(ctx, h, key, w.st.Room, ev); err != nil {
		return nil, false, err
	}
	qc, _ := adp.QuotaClass(req.typ, w.st.Room.Types)
	rate, _ := adp.RateLimit(c.writeLimit, req.typ, w.st.Room.Types)
	budget := fmt.Sprintf("discourse:room:%d:%s", key, qc)
	unit, err := c.Take(budget, rate, time.Minute)
	if err != nil {
		return nil, false, err
	}
	sent, err := engine.Submit(c.Engine, ctx, engine.Write{Kind: OutboxRoomEvent, Origin: h.origin, Capability: capability.DiscourseWrite,
		Event: ev, Ref: req.rr.roomID, BaseSeq: w.base.Seq}, func(ctx context.Context, env *identity.Envelope) (*adp.Record, error) {
		res, err := h.client.Submit(ctx, req.rr.roomID, env)
		if err != nil {
			return nil, err
		}
		return res.Record, nil
	})
	if err == nil {
		res, err := c.sent(ctx, req, sent.Result, sent.Outbox, w.presented)
		return res, false, err
	}
	switch engine.ServiceCode(err) {
	case adp.CodeRoomHeadMismatch:
		unit.Return()
		if _, serr := c.syncRoom(ctx, h, key, req.rr.roomID, syncOptions{}); serr != nil {
			return nil, false, serr
		}
		var lerr error
		if w.st, _, lerr = c.writableState(ctx, req.rr); lerr != nil {
			return nil, false, lerr
		}
		if baseIsCurrent(*w.base, w.st.Room.Head) {
			// The host claims the head moved but its history does not show
			// it: retrying cannot help.
			return nil, false, engine.Wrap(err)
		}
		return nil, true, nil
	case identity.CodeRateLimited:
		c.Drain(budget)
	}
	return nil, false, engine.Wrap(err)
}

// writableState loads a room's verified state for a write: it must exist
// and not be marked as failing verification.
func (c *Module) writableState(ctx context.Context, rr *roomRef) (*room.State, *store.Room, error) {
	row, err := c.Store.Read().Room(ctx, rr.row.Key)
	if err != nil {
		return nil, nil, engine.Wrap(err)
	}
	rr.row = row
	if f := row.Failure; f != nil {
		return nil, nil, &engine.Error{Code: CodeVerificationFailed, Message: fmt.Sprintf("room %s failed verification at seq %d (%s); refresh it before writing", row.RoomID, f.Seq, f.Code),
			Data: map[string]any{"seq": f.Seq, "code": f.Code, "reason": f.Message}}
	}
	st, err := c.loadStateRow(ctx, row)
	if err != nil {
		return nil, nil, engine.Wrap(err)
	}
	if st.Room == nil {
		return nil, nil, engine.Errorf(CodeRoomNotOpen, "room %s has no verified state yet", row.RoomID)
	}
	return st, row, nil
}

// localCheck runs the ADP rules (membership, role, state, registry and
// status, base, payload size and schema) and the plugin validators on an
// unsigned event. A refusal signs nothing and uses no nonce.
func (c *Module) localCheck(ctx context.Context, h *hostState, key int64, r *adp.Room, ev identity.Event) error {
	lookup := adp.RecordHashFunc(func(seq int64) (string, bool) {
		hash, ok, _ := c.Store.Read().RecordHash(ctx, key, seq)
		return hash, ok
	})
	if err := r.Check(h.writeRules, &identity.Envelope{Event: ev}, adp.CheckOptions{Now: ev.CreatedAt, Records: lookup, TrustUnknownAnchors: true}); err != nil {
		return localError(err)
	}
	if !adp.IsBuiltin(ev.Type) {
		payload, _ := ev.Payload.(map[string]any)
		var refs []string
		if list, ok := payload["references"].([]any); ok {
			for _, v := range list {
				if s, ok := v.(string); ok {
					refs = append(refs, s)
				}
			}
		}
		if verr := c.validate(ctx, h, key, r, plugin.Proposal{Type: ev.Type, Actor: c.Self, Payload: payload,
			Mentions: adp.MentionsOf(&ev), References: refs}); verr != nil {
			return verr
		}
	}
	return nil
}

// localError reports an ADP rule failure found before signing: the code is
// kept, except that a payload schema violation is invalid_event with every
// failing member in data.errors; data.local marks that nothing was sent.
func localError(err error) error {
	e := engine.AsError(err)
	out := &engine.Error{Code: e.Code, Message: e.Message, Data: engine.WithData(e.Data, "local", true), Err: err}
	if e.Code == adp.CodePayloadSchemaViolation {
		out.Code = engine.CodeInvalidEvent
		out.Data = engine.WithData(out.Data, "rule", adp.CodePayloadSchemaViolation)
		out.Message = "the payload does not match the type's schema: " + e.Message
	}
	return out
}

// acceptOwnRecord verifies and applies the record a host returned for the
// agent's own write (applyOwnRecord) and closes the outbox entry.
func (c *Module) acceptOwnRecord(ctx context.Context, h *hostState, key int64, roomID string, rec *adp.Record, obID int64) error {
	if err := c.applyOwnRecord(ctx, h, key, roomID, rec); err != nil {
		return err
	}
	raw, _ := json.Marshal(rec)
	c.Done(ctx, obID, raw)
	return nil
}

// applyOwnRecord verifies and applies the record a host returned for the
// agent's own write, syncing the gap from history when records were
// accepted before it.
func (c *Module) applyOwnRecord(ctx context.Context, h *hostState, key int64, roomID string, rec *adp.Record) error {
	pos, err := c.Store.Read().Position(ctx, key)
	if err != nil {
		return engine.Wrap(err)
	}
	switch {
	case rec.Seq == pos.SyncedSeq+1:
		if _, f, err := c.applyRecords(ctx, h, key, []*adp.Record{rec}, false); err != nil {
			return err
		} else if f != nil {
			c.Log.Warn("own record failed verification", "room", roomID, "seq", rec.Seq, "code", f.Code)
		}
	case rec.Seq > pos.SyncedSeq:
		if _, err := c.syncRoom(ctx, h, key, roomID, syncOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// sent finishes an accepted write: the record is applied, the session's
// presented head moves to it when it became the head and the head before it
// is the one presented (nothing the agent has not seen advanced the head in
// between; a message never becomes the head, a send_anyway rebase over
// unseen records never presents), and the result carries the record and its
// item.
func (c *Module) sent(ctx context.Context, req *writeRequest, rec *adp.Record, obID int64, presented *adp.Link) (*WriteResult, error) {
	key := req.rr.row.Key
	if err := c.acceptOwnRecord(ctx, req.rr.h, key, req.rr.roomID, rec, obID); err != nil {
		return nil, err
	}
	row, err := c.Store.Read().Room(ctx, key)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	if presented != nil && row.HeadSeq == rec.Seq && rec.Seq > 1 {
		// The head in force after the record before this one.
		prev, err := c.Store.Read().EventAt(ctx, key, rec.Seq-1)
		if err == nil && prev.HeadSeq == presented.Seq {
			if err := c.present(ctx, req.sess, key, rec.Seq, rec.Hash); err != nil {
				return nil, err
			}
		}
	}
	raw, err := json.Marshal(rec)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	res := &WriteResult{Status: StatusSent, Record: raw}
	if ev, err := c.Store.Read().EventAt(ctx, key, rec.Seq); err == nil && ev.EventID == rec.EnvelopeHash() {
		var it TimelineItem
		if json.Unmarshal(ev.Item, &it) == nil {
			res.Item = &it
		}
	}
	sync, err := c.syncState(ctx, c.Store.Read(), req.rr, req.sess)
	if err != nil {
		return nil, err
	}
	res.Sync = &sync
	return res, nil
}

// rejected answers a write refused by on_head_mismatch reject: the changes
// since the base, the current head presented.
func (c *Module) rejected(ctx context.Context, req *writeRequest, base adp.Link) (*WriteResult, error) {
	changes, trunc, err := c.changesSince(ctx, req.rr.row.Key, base.Seq, maxChanges)
	if err != nil {
		return nil, err
	}
	sync, err := c.presentCurrent(ctx, req.rr, req.sess)
	if err != nil {
		return nil, err
	}
	return &WriteResult{Status: StatusRejected, Reason: adp.CodeRoomHeadMismatch, Changes: changes, ChangesTruncated: trunc, Sync: &sync}, nil
}

// hold stores a held draft (no envelope, no nonce) and answers with it,
// the changes since its base and the current head presented.
func (c *Module) hold(ctx context.Context, req *writeRequest, base adp.Link) (*WriteResult, error) {
	input := engine.CloneMap(req.draftInput)
	input["room_id"] = req.rr.roomID
	input["host"] = req.rr.h.origin
	raw, err := json.Marshal(input)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	var d *store.Draft
	now := c.NowMS()
	err = c.Store.Write(ctx, func(tx *store.Tx) error {
		var err error
		d, err = tx.InsertDraft(ctx, &store.Draft{RoomKey: req.rr.row.Key, Kind: req.draftKind, CreatedAt: now, BaseSeq: base.Seq,
			BaseHash: base.Hash, Reason: adp.CodeRoomHeadMismatch, Input: raw})
		return err
	})
	if err != nil {
		return nil, engine.Wrap(err)
	}
	changes, trunc, err := c.changesSince(ctx, req.rr.row.Key, base.Seq, maxChanges)
	if err != nil {
		return nil, err
	}
	sync, err := c.presentCurrent(ctx, req.rr, req.sess)
	if err != nil {
		return nil, err
	}
	view := heldDraft(d, sync)
	return &WriteResult{Status: StatusHeld, Reason: adp.CodeRoomHeadMismatch, Draft: &view, Changes: changes, ChangesTruncated: trunc, Sync: &sync}, nil
}

// heldDraft builds the HeldDraft view of a stored draft.
func heldDraft(d *store.Draft, sync SyncState) HeldDraft {
	var input map[string]any
	_ = json.Unmarshal(d.Input, &input)
	if input == nil {
		input = map[string]any{}
	}
	return HeldDraft{ID: d.ID, RoomID: d.RoomID, Host: d.Host, Kind: d.Kind, CreatedAt: d.CreatedAt, BaseSeq: d.BaseSeq,
		BaseHash: d.BaseHash, CurrentSync: sync, Draft: input, Reason: d.Reason, Options: DraftOptions()}
}
