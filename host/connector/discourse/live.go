package discourse

import (
	"context"
	"encoding/json"
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

// liveManager keeps the live rooms — those the agent is an active member of
// and those opened with subscribe — current in the background: an SSE
// stream each for up to MaxStreams rooms (subscribe first, then recover the
// gap from history, de-duplicated by seq; ADP 16.3), reconnecting with
// backoff, and periodic history polling for the rest. Reviewer duties ride
// along: room.join_request notices (and a periodic poll of pending
// requests in rooms the agent manages) become room.join.requested items, and
// room.agent_status notices refresh the status cache.
type liveManager struct {
	c      *Module
	kickCh chan struct{}

	mu      sync.Mutex
	streams map[int64]*liveStream
	polled  map[int64]store.RoomRef
}

type liveStream struct {
	ref    store.RoomRef
	cancel context.CancelFunc
	done   chan struct{}
	// wake ends a follower's wait for membership early: the live set was
	// re-read, so the agent may have just joined.
	wake chan struct{}
	// status and started are the stream's state (live_states.go), under
	// the manager's mu.
	status  StreamState
	started int64
}

func newLiveManager(c *Module) *liveManager {
	return &liveManager{c: c, kickCh: make(chan struct{}, 1), streams: map[int64]*liveStream{}, polled: map[int64]store.RoomRef{}}
}

// kick asks the manager to re-read the set of live rooms.
func (m *liveManager) kick() {
	select {
	case m.kickCh <- struct{}{}:
	default:
	}
}

// Following returns how many rooms are followed by a stream and how many
// are polled.
func (c *Module) Following() (streams, polled int) {
	c.live.mu.Lock()
	defer c.live.mu.Unlock()
	return len(c.live.streams), len(c.live.polled)
}

func (m *liveManager) run(ctx context.Context) {
	for _, origin := range m.c.hostOrder {
		if m.c.Allow(origin, capability.DiscourseRead) != nil {
			continue // nothing reaches a host the operator granted no Discourse read
		}
		go func(h *hostState) {
			if err := m.c.discover(ctx, h); err != nil {
				m.c.Log.Debug("discovery", "host", h.origin, "err", err)
			}
		}(m.c.hosts[origin])
	}
	t := time.NewTicker(m.c.opts.PollInterval)
	defer t.Stop()
	jt := time.NewTicker(m.c.opts.JoinPollInterval)
	defer jt.Stop()
	m.reconcile(ctx)
	for {
		select {
		case <-ctx.Done():
			m.stopAll()
			return
		case <-m.kickCh:
			m.reconcile(ctx)
		case <-t.C:
			m.reconcile(ctx)
			m.poll(ctx)
		case <-jt.C:
			m.pollOwnJoinRequests(ctx)
		}
	}
}

// pollOwnJoinRequests re-reads the agent's pending join requests. An
// approved one means the review record is in the room's history: syncing the
// room applies it, which makes the agent a member and raises the
// room.join.approved inbox item, without the agent calling room_join again.
// Applicants get no live stream (ADP streams only to members), so this poll
// is how an approval reaches them.
func (m *liveManager) pollOwnJoinRequests(ctx context.Context) {
	c := m.c
	pending, err := c.Store.Read().PendingOwnJoinRequests(ctx)
	if err != nil || len(pending) == 0 {
		return
	}
	joined := false
	for _, p := range pending {
		h, ok := c.hosts[p.Room.Host]
		if !ok || ctx.Err() != nil {
			continue
		}
		row, err := c.Store.Read().Room(ctx, p.Room.Key)
		if err != nil {
			continue
		}
		j, err := c.refreshOwnRequest(ctx, &roomRef{h: h, roomID: p.Room.RoomID, row: row}, p.RequestID)
		if err != nil || j.Status != string(adp.JoinApproved) {
			continue
		}
		if _, err := c.syncRoom(ctx, h, p.Room.Key, p.Room.RoomID, syncOptions{}); err != nil {
			c.Log.Debug("sync after approval", "room", p.Room.RoomID, "err", err)
			continue
		}
		joined = true
	}
	if joined {
		m.reconcile(ctx)
	}
}

func (m *liveManager) stopAll() {
	m.mu.Lock()
	streams := m.streams
	m.streams = map[int64]*liveStream{}
	m.mu.Unlock()
	for _, s := range streams {
		s.cancel()
		<-s.done
	}
}

// reconcile starts streams for live rooms (up to MaxStreams), stops those
// for rooms no longer live, and polls the rest.
func (m *liveManager) reconcile(ctx context.Context) {
	refs, err := m.c.Store.Read().LiveRooms(ctx)
	if err != nil {
		return
	}
	want := map[int64]store.RoomRef{}
	for _, r := range refs {
		if _, ok := m.c.hosts[r.Host]; ok {
			want[r.Key] = r
		}
	}
	m.mu.Lock()
	var stop []*liveStream
	for k, s := range m.streams {
		if _, ok := want[k]; !ok {
			stop = append(stop, s)
			delete(m.streams, k)
		}
	}
	for _, s := range m.streams {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
	m.polled = map[int64]store.RoomRef{}
	for _, r := range refs {
		if _, ok := want[r.Key]; !ok {
			continue
		}
		if m.c.Allow(r.Host, capability.DiscourseRead) != nil {
			continue // the operator withdrew the read grant: nothing reaches the host
		}
		if _, ok := m.streams[r.Key]; ok {
			continue
		}
		if len(m.streams) >= m.c.opts.MaxStreams {
			m.polled[r.Key] = r
			continue
		}
		sctx, cancel := context.WithCancel(ctx)
		s := &liveStream{ref: r, cancel: cancel, done: make(chan struct{}), wake: make(chan struct{}, 1), started: m.c.NowMS()}
		m.streams[r.Key] = s
		go func() {
			defer close(s.done)
			m.follow(sctx, s)
		}()
	}
	m.mu.Unlock()
	for _, s := range stop {
		s.cancel()
		<-s.done
	}
}

// poll syncs the polled rooms from history and checks pending join requests
// of rooms the agent manages.
func (m *liveManager) poll(ctx context.Context) {
	m.mu.Lock()
	refs := make([]store.RoomRef, 0, len(m.polled))
	for _, r := range m.polled {
		refs = append(refs, r)
	}
	m.mu.Unlock()
	for _, r := range refs {
		if ctx.Err() != nil {
			return
		}
		h := m.c.hosts[r.Host]
		if _, err := m.c.syncRoom(ctx, h, r.Key, r.RoomID, syncOptions{}); err != nil {
			m.c.Log.Debug("poll", "room", r.RoomID, "err", err)
		}
		m.c.pollJoinRequests(ctx, h, r)
	}
}

// pollJoinRequests lists pending join requests of a room the agent manages
// and makes sure each has a room.join.requested item.
func (c *Module) pollJoinRequests(ctx context.Context, h *hostState, ref store.RoomRef) {
	st, err := c.loadState(ctx, h, ref.Key)
	if err != nil || st.Room == nil || !st.Room.IsManager(c.Self) {
		return
	}
	ctx, err = c.Need(ctx, h.origin, capability.DiscourseRead)
	if err != nil {
		return
	}
	page, err := h.client.JoinRequests(ctx, ref.RoomID, client.JoinRequestQuery{Status: string(adp.JoinPending), Limit: 100})
	if err != nil {
		return
	}
	row, err := c.Store.Read().Room(ctx, ref.Key)
	if err != nil {
		return
	}
	_ = c.noteJoinRequests(ctx, &roomRef{h: h, roomID: ref.RoomID, row: row}, page.Items)
}

// follow keeps one room live over SSE until ctx ends or the room fails
// verification.
func (m *liveManager) follow(ctx context.Context, ls *liveStream) {
	c := m.c
	ref := ls.ref
	h := c.hosts[ref.Host]
	bo := &client.Backoff{Base: 250 * time.Millisecond, Max: 30 * time.Second}
	ctx, err := c.Need(ctx, h.origin, capability.DiscourseRead)
	if err != nil {
		return
	}
	for ctx.Err() == nil {
		s, err := h.client.Live(ctx, ref.RoomID)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			d := bo.Next()
			switch engine.ServiceCode(err) {
			case adp.CodeMembershipRequired, identity.CodePermissionDenied, adp.CodeRoomNotFound, identity.CodeNotFound:
				m.setStreamState(ls, StreamWaiting, err)
				// Not (or no longer) a member: history tells why; poll
				// slowly, but retry at once when the live set is re-read
				// (the agent may just have joined).
				_, _ = c.syncRoom(ctx, h, ref.Key, ref.RoomID, syncOptions{})
				d = max(d, c.opts.PollInterval)
				timer := time.NewTimer(d)
				select {
				case <-ctx.Done():
					timer.Stop()
					return
				case <-ls.wake:
					bo.Reset()
				case <-timer.C:
				}
				timer.Stop()
				continue
			}
			m.setStreamState(ls, StreamRetrying, err)
			if client.Sleep(ctx, d) != nil {
				return
			}
			continue
		}
		// Subscribed first; now recover the gap from history.
		f, err := c.syncRoom(ctx, h, ref.Key, ref.RoomID, syncOptions{})
		if f != nil {
			s.Close()
			m.kick()
			return
		}
		if err == nil {
			c.pollJoinRequests(ctx, h, ref)
		}
		m.setStreamState(ls, StreamLive, nil)
		failed := m.consume(ctx, h, ref, s)
		s.Close()
		m.setStreamState(ls, StreamRetrying, nil)
		if failed {
			m.kick()
			return
		}
		if ctx.Err() != nil {
			return
		}
		if client.Sleep(ctx, bo.Next()) != nil {
			return
		}
	}
}

// consume handles the items of one stream until it ends; it reports
// whether the room failed verification.
func (m *liveManager) consume(ctx context.Context, h *hostState, ref store.RoomRef, s *client.Stream) bool {
	c := m.c
	for {
		item, err := s.Next()
		if err != nil {
			return false
		}
		switch item.Kind {
		case client.KindRoomEvent:
			if item.Record == nil {
				continue
			}
			pos, err := c.Store.Read().Position(ctx, ref.Key)
			if err != nil {
				return false
			}
			var f *room.Failure
			if item.Record.Seq > pos.SyncedSeq+1 {
				// A gap: recover it from history.
				ff, err := c.syncRoom(ctx, h, ref.Key, ref.RoomID, syncOptions{})
				if err != nil {
					return false
				}
				f = ff
			} else {
				_, ff, err := c.applyRecords(ctx, h, ref.Key, []*adp.Record{item.Record}, false)
				if err != nil {
					return false
				}
				f = ff
			}
			if f != nil {
				return true
			}
		case client.KindAgentStatus:
			c.liveStatus(ctx, ref, item.AgentStatus)
		case client.KindJoinRequest:
			c.liveJoinRequest(ctx, h, ref, item.JoinRequest)
		case client.KindResubscribed:
			// The host closed the stream at the request JWT's expiry and the
			// client subscribed again: records accepted in between are
			// recovered from history now, not at the next gap.
			f, err := c.syncRoom(ctx, h, ref.Key, ref.RoomID, syncOptions{})
			if err != nil {
				return false
			}
			if f != nil {
				return true
			}
		}
	}
}

// liveStatus applies a room.agent_status notice to the status cache.
func (c *Module) liveStatus(ctx context.Context, ref store.RoomRef, s *client.AgentStatus) {
	if s == nil || !identity.ValidAgentID(s.AgentID) {
		return
	}
	now := c.NowMS()
	v := statusView(ref.RoomID, s)
	if v.UpdatedAt == 0 {
		v.UpdatedAt = now
	}
	_ = c.Store.Write(ctx, func(tx *store.Tx) error {
		if v.ExpiresAt <= now {
			return tx.DeleteStatus(ctx, ref.Key, v.AgentID)
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return err
		}
		return tx.PutStatus(ctx, ref.Key, store.Status{AgentID: v.AgentID, ExpiresAt: v.ExpiresAt, Status: raw})
	})
}

// liveJoinRequest turns a room.join_request notice into a
// room.join.requested item when the agent manages the room.
func (c *Module) liveJoinRequest(ctx context.Context, h *hostState, ref store.RoomRef, n *client.JoinRequestNotice) {
	if n == nil || n.Applicant == c.Self {
		return
	}
	if _, err := identity.DecodeBase64URLLen(n.RequestID, 32); err != nil {
		return
	}
	st, err := c.loadState(ctx, h, ref.Key)
	if err != nil || st.Room == nil || !st.Room.IsManager(c.Self) {
		return
	}
	now := c.NowMS()
	var inserted []string
	_ = c.Store.Write(ctx, func(tx *store.Tx) error {
		var err error
		inserted, err = tx.InsertInbox(ctx, ref.Key, []store.InboxEntry{joinRequestedItem(h.origin, ref.RoomID, n.RequestID, n.Applicant, string(n.Role), now)})
		return err
	})
	if len(inserted) > 0 {
		c.Notify()
	}
}
