package discourse

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"apconnect/host/capability"
	"apconnect/host/client"
	"apconnect/host/engine"
	"apconnect/host/identity"
	"apconnect/host/proto/adp"
	"apconnect/host/room"
	"apconnect/host/store"
)

// DefaultHistoryPage is the page size of history reads (hosts cap it at
// 1000).
const DefaultHistoryPage = 1000

// lock keys: syncs of a room are serialized, and so are its writes (the
// engine serializes the signed submissions to one service).
type syncKey int64
type writeKey int64

// syncOptions tune syncRoom.
type syncOptions struct {
	// resource reads the room resource first (the host's latest seq).
	resource bool
	// resync may clear a verification failure mark: the records are read
	// again from the last verified one, and a clean pass clears the mark.
	resync bool
	// background is a round of a catch-up continuation.
	background bool
}

// syncRoom brings a room up to date with its host: optionally the room
// resource, then history pages after the verified position (ADP 16.3), each
// page verified and applied in one transaction. It returns the verification
// failure when a record failed (the room is then marked and nothing after it
// is applied), or an error when the host could not be read.
func (c *Module) syncRoom(ctx context.Context, h *hostState, key int64, roomID string, opt syncOptions) (*room.Failure, error) {
	ctx, err := c.Need(ctx, h.origin, capability.DiscourseRead)
	if err != nil {
		return nil, err
	}
	mu := c.locks.Get(syncKey(key))
	if err := mu.Lock(ctx); err != nil {
		return nil, err
	}
	defer mu.Unlock()
	if opt.resource {
		res, err := h.client.Room(ctx, roomID)
		if err != nil {
			return nil, engine.Wrap(err)
		}
		raw, _ := json.Marshal(res.Raw)
		now := c.NowMS()
		if err := c.Store.Write(ctx, func(tx *store.Tx) error { return tx.SetRemote(ctx, key, res.Seq, raw, now) }); err != nil {
			return nil, engine.Wrap(err)
		}
	}
	pos, err := c.Store.Read().Position(ctx, key)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	if pos.Failed && !opt.resync {
		return c.failureOf(ctx, key)
	}
	skip := c.catchUpSkip(pos)
	if skip != nil {
		defer c.restoreSkipped(context.WithoutCancel(ctx), key, skip)
	}
	// History pages are fetched and their signatures verified on every
	// core while the records before them are applied (fetchPages).
	pctx, cancel := context.WithCancel(ctx)
	pages := make(chan fetchedPage, 1)
	go c.fetchPages(pctx, h, roomID, pos.SyncedSeq, skip.through(), pages)
	defer func() {
		// Nothing is read from the host once the sync returned.
		cancel()
		for range pages {
		}
	}()
	first := true
	start, applied := time.Now(), 0
	for pg := range pages {
		if pg.err != nil {
			if code := adp.ErrorCode(pg.err); code == adp.CodeInvalidRecord || code == adp.CodeChainBroken {
				// The host served records that are malformed or do not hash
				// to what they claim: a verification failure of the next
				// record.
				cur, err := c.Store.Read().Position(ctx, key)
				if err != nil {
					return nil, engine.Wrap(err)
				}
				c.catchUp.done(key)
				return c.markFailed(ctx, key, cur, &room.Failure{Seq: cur.SyncedSeq + 1, Code: code,
					Message: "the host served an invalid history page: " + pg.err.Error()})
			}
			return nil, engine.Wrap(pg.err)
		}
		if len(pg.prep.Records()) == 0 {
			c.catchUp.done(key)
			if first && pos.Failed && opt.resync {
				// Nothing failing to read: the resync is clean.
				if err := c.clearFailure(ctx, key, pos); err != nil {
					return nil, err
				}
			}
			return nil, nil
		}
		first = false
		n, f, err := c.applyPrepared(ctx, h, key, pg.prep, opt.resync, skip)
		if f != nil {
			c.catchUp.done(key)
		}
		if err != nil || f != nil {
			return f, err
		}
		applied += n
		if applied >= c.opts.SyncRecordsPerCall || time.Since(start) >= c.opts.SyncTimePerCall {
			// The bound of one call: return what is verified and go on in
			// the background (the history may be long, or never end).
			c.continueSync(h, key, roomID, opt.background)
			return nil, nil
		}
	}
	// The last page was full-length without a cursor, or the fetch ended:
	// the host's end was reached.
	if ctx.Err() == nil {
		c.catchUp.done(key)
	}
	return nil, nil
}

// catchUps are the rooms whose bounded sync goes on in the background, at
// most one continuation per room.
type catchUps struct {
	mu     sync.Mutex
	rooms  map[int64]bool // room key → a continuation is running
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// active reports whether a room's sync is catching up.
func (cu *catchUps) active(key int64) bool {
	cu.mu.Lock()
	defer cu.mu.Unlock()
	return cu.rooms[key]
}

// done records that a room's sync reached the host's end.
func (cu *catchUps) done(key int64) {
	cu.mu.Lock()
	defer cu.mu.Unlock()
	delete(cu.rooms, key)
}

// stop ends every continuation and waits for them.
func (cu *catchUps) stop() {
	if cu.cancel != nil {
		cu.cancel()
	}
	cu.wg.Wait()
}

// continueSync marks a room as catching up and, unless one runs already (or
// the caller is one), starts a background continuation: bounded syncs one
// after the other while the room is catching up, until a round fails or
// the connector closes.
func (c *Module) continueSync(h *hostState, key int64, roomID string, fromBackground bool) {
	cu := &c.catchUp
	cu.mu.Lock()
	defer cu.mu.Unlock()
	if cu.rooms == nil {
		cu.rooms = map[int64]bool{}
	}
	running := cu.rooms[key]
	cu.rooms[key] = true
	if running || fromBackground || cu.ctx.Err() != nil {
		return
	}
	cu.wg.Add(1)
	go func() {
		defer cu.wg.Done()
		for cu.ctx.Err() == nil && cu.active(key) {
			if _, err := c.syncRound(cu.ctx, h, key, roomID); err != nil {
				c.Log.Debug("background catch-up stopped", "room", roomID, "err", err)
				break
			}
		}
		cu.done(key)
		c.Notify()
	}()
}

// syncRound is one bounded sync of a background continuation. It may not
// start another continuation: it reports through catchUp instead.
func (c *Module) syncRound(ctx context.Context, h *hostState, key int64, roomID string) (*room.Failure, error) {
	return c.syncRoom(ctx, h, key, roomID, syncOptions{background: true})
}

// fetchedPage is one history page, prepared, or the error reading it.
type fetchedPage struct {
	recs []*adp.Record
	prep *room.Prepared
	err  error
}

// fetchPages reads history pages after after and sends them in order,
// their signature checks started on every core (room.PrepareAsync); it
// stops after the last page (an empty page is sent when there was nothing
// at all), on an error (sent) or when ctx ends. Reading, checking and the
// caller's applying overlap: a page is sent as soon as its checks start, so
// the caller's in-order pass follows the workers record by record, and the
// next page's checks start as soon as this page's ran, while the caller
// still applies it. The checks run in page order, at most two pages ahead
// of the page being applied (the one sent and waiting, and the next). The
// records at or below skipThrough, which the sync leaves out of the store,
// get no canonical JSON (room.Processor.PrepareAsyncJSON). It returns,
// closing out, only once readPages returned.
func (c *Module) fetchPages(ctx context.Context, h *hostState, roomID string, after, skipThrough int64, out chan<- fetchedPage) {
	defer close(out)
	read := make(chan fetchedPage, 1)
	go c.readPages(ctx, h, roomID, after, read)
	defer func() {
		for range read { // the reader ends too (ctx is done or it read the end)
		}
	}()
	for pg := range read {
		if ctx.Err() != nil {
			return
		}
		if pg.err == nil {
			pg.prep = h.proc.PrepareAsyncJSON(pg.recs, skipThrough)
		}
		select {
		case out <- pg:
		case <-ctx.Done():
			return
		}
		if pg.prep != nil {
			select {
			case <-pg.prep.Done():
			case <-ctx.Done():
				return
			}
		}
	}
}

// firstHistoryPage bounds the first history read of a sync: the checks
// start on its records while the next, full page is read, instead of
// waiting for a whole page to arrive.
const firstHistoryPage = 100

// readPages is the reading stage of fetchPages.
func (c *Module) readPages(ctx context.Context, h *hostState, roomID string, after int64, out chan<- fetchedPage) {
	defer close(out)
	sent := false
	limit := min(c.opts.HistoryPage, firstHistoryPage)
	for {
		page, err := h.client.Events(ctx, roomID, client.EventsQuery{AfterSeq: after, Limit: limit})
		if err != nil {
			select {
			case out <- fetchedPage{err: err}:
			case <-ctx.Done():
			}
			return
		}
		if len(page.Items) == 0 && sent {
			return
		}
		select {
		case out <- fetchedPage{recs: page.Items}:
		case <-ctx.Done():
			return
		}
		sent = true
		if len(page.Items) == 0 || len(page.Items) < limit && page.NextCursor == "" {
			return
		}
		after, limit = page.Items[len(page.Items)-1].Seq, c.opts.HistoryPage
	}
}

// failureOf returns the failure mark of a room.
func (c *Module) failureOf(ctx context.Context, key int64) (*room.Failure, error) {
	row, err := c.Store.Read().Room(ctx, key)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	if row.Failure == nil {
		return nil, nil
	}
	return &room.Failure{Seq: row.Failure.Seq, Code: row.Failure.Code, Message: row.Failure.Message}, nil
}

// markFailed marks a room as failing verification at f.Seq.
func (c *Module) markFailed(ctx context.Context, key int64, pos *store.RoomPosition, f *room.Failure) (*room.Failure, error) {
	now := c.NowMS()
	err := c.Store.Write(ctx, func(tx *store.Tx) error {
		return tx.MarkFailed(ctx, key, store.Failure{Seq: f.Seq, Code: f.Code, Message: f.Message, At: now})
	})
	if err != nil {
		return nil, engine.Wrap(err)
	}
	c.live.kick()
	c.Log.Warn("history failed verification; room marked", "room", key, "seq", f.Seq, "code", f.Code)
	return f, nil
}

func (c *Module) clearFailure(ctx context.Context, key int64, pos *store.RoomPosition) error {
	err := c.Store.Write(ctx, func(tx *store.Tx) error {
		_, err := tx.ApplyBatch(ctx, key, &store.Batch{ExpectSeq: pos.SyncedSeq, ExpectHash: pos.SyncedHash, Resync: true, Now: c.NowMS()})
		return err
	})
	if errors.Is(err, store.ErrConflict) {
		return nil
	}
	return engine.Wrap(err)
}

// applyRecords verifies records of a room against its current verified
// state and applies those that pass, with everything they cause, in one
// transaction. Records another process (or goroutine) applied meanwhile are
// detected by the store's position check and the batch is verified again
// from the new position, where they are skipped as duplicates. It returns
// how many records were applied and the failure, if one record failed.
func (c *Module) applyRecords(ctx context.Context, h *hostState, key int64, recs []*adp.Record, resync bool) (int, *room.Failure, error) {
	return c.applyPrepared(ctx, h, key, h.proc.Prepare(recs), resync, nil)
}

// applyPrepared is applyRecords on a prepared batch, leaving the records a
// catch-up would prune before it ends out of the store when skip is set.
func (c *Module) applyPrepared(ctx context.Context, h *hostState, key int64, prep *room.Prepared, resync bool, skip *windowSkip) (int, *room.Failure, error) {
	for attempt := 0; attempt < 8; attempt++ {
		pos, err := c.Store.Read().Position(ctx, key)
		if err != nil {
			return 0, nil, engine.Wrap(err)
		}
		if pos.Failed && !resync {
			f, err := c.failureOf(ctx, key)
			return 0, f, err
		}
		row, err := c.Store.Read().Room(ctx, key)
		if err != nil {
			return 0, nil, engine.Wrap(err)
		}
		st, err := c.loadStateRow(ctx, row)
		if err != nil {
			return 0, nil, engine.Wrap(err)
		}
		// Every envelope the room's verified records carry, for the
		// batch's hashes: a replayed envelope is refused however long ago
		// its first record left the window.
		envs, err := c.Store.Read().EnvelopeSeqs(ctx, key, prep.EnvelopeIDs())
		if err != nil {
			return 0, nil, engine.Wrap(err)
		}
		res := h.proc.ProcessPrepared(st, prep, room.Options{Known: func(seq int64) (string, bool) {
			if hash, ok := skip.hash(seq); ok {
				return hash, true
			}
			hash, ok, _ := c.Store.Read().RecordHash(ctx, key, seq)
			return hash, ok
		}, Envelopes: room.EnvelopeSeqs(envs).Lookup})
		if len(res.Applied) == 0 && res.Failure == nil {
			return 0, nil, nil
		}
		now := c.NowMS()
		batch, err := c.buildBatch(ctx, h, row, res, resync, now, skip.through())
		if err != nil {
			return 0, nil, engine.Wrap(err)
		}
		batch.SkipThrough = skip.through()
		var inserted []string
		err = c.Store.Write(ctx, func(tx *store.Tx) error {
			br, err := tx.ApplyBatch(ctx, key, batch)
			if err != nil {
				return err
			}
			inserted = br.Inserted
			return c.afterApply(ctx, tx, key, res.Applied, now)
		})
		if errors.Is(err, store.ErrConflict) {
			continue
		}
		if errors.Is(err, store.ErrRoomFailed) {
			f, err := c.failureOf(ctx, key)
			return 0, f, err
		}
		if err != nil {
			return 0, nil, engine.Wrap(err)
		}
		skip.keep(batch, res.Applied)
		if batch.State != nil {
			c.cache.put(key, batch.State.SyncedSeq, batch.State.SyncedHash, res.State)
			if batch.State.SelfState != row.SelfState {
				c.live.kick()
			}
		}
		if res.Failure != nil {
			c.Log.Warn("record failed verification; room marked", "host", h.origin, "room", row.RoomID,
				"seq", res.Failure.Seq, "code", res.Failure.Code, "reason", res.Failure.Message)
		}
		if len(inserted) > 0 || len(res.Applied) > 0 {
			c.Notify()
		}
		return len(res.Applied), res.Failure, nil
	}
	return 0, nil, &engine.Error{Code: engine.CodeInternal, Message: "room kept moving while records were verified; try again"}
}

// buildBatch turns a Process result into a store batch. The events of
// records at or below skipThrough, which the store leaves out (a
// catch-up's windowSkip), get no JSON: windowSkip makes it only for those
// it stores after all (restoreSkipped).
func (c *Module) buildBatch(ctx context.Context, h *hostState, row *store.Room, res *room.Result, resync bool, now, skipThrough int64) (*store.Batch, error) {
	b := &store.Batch{ExpectSeq: row.SyncedSeq, ExpectHash: row.SyncedHash, Resync: resync, Now: now,
		Events: make([]store.Event, 0, len(res.Applied))}
	var inbox []room.InboxItem
	for i := range res.Applied {
		a := &res.Applied[i]
		e := store.Event{Seq: a.Record.Seq, Hash: a.Record.Hash, EventID: a.Record.EnvelopeHash(),
			Type: a.Record.Type(), Actor: a.Record.Actor(), HeadSeq: a.Head.Seq, HeadHash: a.Head.Hash}
		if e.Seq > skipThrough {
			var err error
			if e.Record, e.Item, err = eventJSON(a); err != nil {
				return nil, err
			}
		}
		b.Events = append(b.Events, e)
		inbox = append(inbox, a.Inbox...)
	}
	if res.State.Room != nil && len(res.Applied) > 0 {
		inbox = append(inbox, c.watch(ctx, h, res.State.Room, res.Applied)...)
		inbox = append(inbox, c.watchedItems(ctx, h.origin, row.Key, res.Applied)...)
	}
	for _, it := range inbox {
		itemJSON, err := json.Marshal(it)
		if err != nil {
			return nil, err
		}
		var seq int64
		if it.Seq != nil {
			seq = *it.Seq
		}
		var ev string
		if it.EventID != nil {
			ev = *it.EventID
		}
		b.Inbox = append(b.Inbox, store.InboxEntry{ID: it.ID, Kind: it.Kind, Seq: seq, EventID: ev,
			Priority: room.PriorityRank(it.Priority), CreatedAt: it.CreatedAt, Item: itemJSON})
	}
	if len(res.Applied) > 0 {
		r := res.State.Room
		snap, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		var turn []byte
		if res.State.ActiveTurn != nil {
			if turn, err = json.Marshal(res.State.ActiveTurn); err != nil {
				return nil, err
			}
		}
		selfState, selfRole, creator := room.SelfState(r, c.Self)
		l := store.Listing{StartTime: r.StartTime, EndTime: r.EndTime, SelfRole: selfRole, SelfState: selfState, IsCreator: creator}
		if r.Closed != nil {
			l.Closed = string(r.Closed.Status)
		}
		b.State = &store.RoomState{Snapshot: snap, HeadSeq: r.Head.Seq, HeadHash: r.Head.Hash, SyncedSeq: r.Last.Seq,
			SyncedHash: r.Last.Hash, ActiveTurn: turn, Listing: l}
	}
	if f := res.Failure; f != nil {
		b.Failure = &store.Failure{Seq: f.Seq, Code: f.Code, Message: f.Message, At: now}
	}
	return b, nil
}

// eventJSON returns the record and timeline item JSON the store keeps of an
// applied record.
func eventJSON(a *room.Applied) (record, item []byte, err error) {
	record = a.RecordJSON
	if record == nil {
		if record, err = json.Marshal(a.Record); err != nil {
			return nil, nil, err
		}
	}
	if item, err = json.Marshal(a.Item); err != nil {
		return nil, nil, err
	}
	return record, item, nil
}

// afterApply makes the local changes applied records cause beyond the
// batch: cached statuses of departed members are dropped, and join requests
// reviewed by a record take the decision (their room.join.requested items
// are resolved).
func (c *Module) afterApply(ctx context.Context, tx *store.Tx, key int64, applied []room.Applied, now int64) error {
	for _, a := range applied {
		rec := a.Record
		if rec.IsRedacted() {
			continue
		}
		ev := &rec.Envelope.Event
		p, _ := ev.Payload.(map[string]any)
		switch ev.Type {
		case adp.TypeRoomLeave:
			if err := tx.DeleteStatus(ctx, key, ev.Actor); err != nil {
				return err
			}
		case adp.TypeMemberRemove:
			if m, _ := p["member"].(string); m != "" {
				if err := tx.DeleteStatus(ctx, key, m); err != nil {
					return err
				}
			}
		case adp.TypeJoinReview:
			req, err := identity.EnvelopeFromValue(p["request"], "")
			if err != nil {
				continue
			}
			status := string(adp.JoinRejected)
			if d, _ := p["decision"].(string); d == "approve" {
				status = string(adp.JoinApproved)
			}
			if j, err := tx.JoinRequest(ctx, key, req.Hash); err == nil {
				j.Status, j.UpdatedAt = status, now
				if err := tx.PutJoinRequest(ctx, j); err != nil {
					return err
				}
			}
			if err := tx.ResolveEvent(ctx, key, room.KindJoinRequested, req.Hash); err != nil {
				return err
			}
		}
	}
	return nil
}

// maxSkipWindow is the largest record window for which a catch-up leaves
// records out of the store (windowSkip keeps up to a window of them in
// memory).
const maxSkipWindow = 5000

// windowSkip is what a catch-up leaves out of the store: when the host's
// latest seq is more than a window past the verified position, the records
// at or below latest-window would be stored only to be pruned before the
// sync ends, so they are verified and applied (inbox items, state) but not
// stored. The newest window of them stays in memory: their hashes answer
// the fork and anchor lookups the store would have answered, and when the
// sync ends early (a verification failure, an error, the per-call bound)
// those still inside the window are stored after all (restoreSkipped).
type windowSkip struct {
	skipThrough int64 // records at or below are not stored
	window      int64
	synced      int64            // the last position applied
	events      []skippedEvent   // the newest skipped records, at most window, from first (add)
	first       int              // the index of the oldest in events
	hashes      map[int64]string // seq → record hash of events
}

// skippedEvent is a record a catch-up left out of the store: its event
// without the record and item JSON, which are made from the applied record
// only if it is stored after all (most never are: serializing every
// skipped record's item was a tenth of a catch-up's CPU beyond the
// signature checks).
type skippedEvent struct {
	event   store.Event
	applied room.Applied
}

// catchUpSkip returns the skip of a sync from pos, or nil when every record
// is to be stored: the host is not a window ahead, the window is large, or
// plugins watch records (a watch may read earlier records from the store).
func (c *Module) catchUpSkip(pos *store.RoomPosition) *windowSkip {
	window := c.Store.Window()
	through := pos.RemoteSeq - window
	if through <= pos.SyncedSeq || window > maxSkipWindow || len(c.watchers) > 0 {
		return nil
	}
	return &windowSkip{skipThrough: through, window: window, synced: pos.SyncedSeq, hashes: map[int64]string{}}
}

// through returns the seq at or below which records are not stored (0 for
// none).
func (w *windowSkip) through() int64 {
	if w == nil {
		return 0
	}
	return w.skipThrough
}

// hash returns the hash of a skipped record still held.
func (w *windowSkip) hash(seq int64) (string, bool) {
	if w == nil {
		return "", false
	}
	h, ok := w.hashes[seq]
	return h, ok
}

// keep records a stored batch, built from applied (an event per record):
// its skipped events, the newest window of them.
func (w *windowSkip) keep(b *store.Batch, applied []room.Applied) {
	if w == nil {
		return
	}
	if b.State != nil {
		w.synced = b.State.SyncedSeq
	}
	for i := range b.Events {
		if e := &b.Events[i]; e.Seq <= w.skipThrough {
			w.add(e, &applied[i])
		}
	}
}

// add keeps a skipped record, replacing the oldest kept once a window of
// them is kept: w.events is a ring (first is the oldest) so that a batch
// costs no moving of the records kept.
func (w *windowSkip) add(e *store.Event, a *room.Applied) {
	if w.window <= 0 {
		return // nothing kept (the store's window is never empty)
	}
	var slot *skippedEvent
	if len(w.events) < int(w.window) {
		if w.events == nil {
			w.events = make([]skippedEvent, 0, w.window) // at most maxSkipWindow
		}
		w.events = append(w.events, skippedEvent{})
		slot = &w.events[len(w.events)-1]
	} else {
		slot = &w.events[w.first]
		delete(w.hashes, slot.event.Seq)
		w.first = (w.first + 1) % len(w.events)
	}
	slot.event, slot.applied = *e, *a
	slot.applied.Inbox = nil // stored with the batch; not needed again
	w.hashes[e.Seq] = e.Hash
}

// kept returns the i-th oldest skipped record kept.
func (w *windowSkip) kept(i int) *skippedEvent {
	return &w.events[(w.first+i)%len(w.events)]
}

// restoreSkipped stores the skipped records that are inside the window of
// the position the sync ended at: none when it went a window past them (the
// usual end of a catch-up).
func (c *Module) restoreSkipped(ctx context.Context, key int64, w *windowSkip) {
	if len(w.events) == 0 || w.synced >= w.kept(len(w.events)-1).event.Seq+w.window {
		return
	}
	events := make([]store.Event, len(w.events))
	for i := range w.events {
		k := w.kept(i)
		e := k.event
		if e.Record == nil {
			var err error
			if e.Record, e.Item, err = eventJSON(&k.applied); err != nil {
				c.Log.Warn("catch-up ended early; the records it left out of the window could not be stored", "room", key, "err", err)
				return
			}
		}
		events[i] = e
	}
	var n int
	err := c.Store.Write(ctx, func(tx *store.Tx) error {
		var err error
		n, err = tx.RestoreWindow(ctx, key, events)
		return err
	})
	if err != nil {
		c.Log.Warn("catch-up ended early; the records it left out of the window could not be stored", "room", key, "err", err)
		return
	}
	c.Log.Debug("catch-up ended early; records put back into the window", "room", key, "records", n, "synced", w.synced)
}
