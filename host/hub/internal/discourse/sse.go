package discourse

import (
	"bufio"
	"net/http"
	"time"

	"apconnect/host/hub/internal/hubhttp"
	"apconnect/host/proto/adp"
)

// streamWriteTimeout bounds one write to a live stream; a client that does
// not read for this long is disconnected.
const streamWriteTimeout = 30 * time.Second

// liveStream serves GET /v1/rooms/{id}/events/live (ADP 16): a request JWT
// (required by the route), an existing room the subject may see, and active
// membership — for public rooms too. Only records accepted after the
// subscription are sent (no replay; query parameters such as last_seq are
// ignored), as room.event items, with room.agent_status and, for reviewers,
// room.join_request notices, and ": heartbeat" comments while idle. The
// stream ends when the subscriber stops being an active member, falls too
// far behind, the room ends, the request JWT expires or MaxStreamLifetime
// passes (whichever is first: D-26, as SDK 0.12.6 expects), the client goes
// away or the hub shuts down. A stream ended by time says so in a comment
// and closes cleanly; the client reconnects with a fresh JWT.
func (s *Service) liveStream(w http.ResponseWriter, r *http.Request) {
	agent := hubhttp.AgentID(r.Context())
	roomID := r.PathValue("room_id")
	e, unlock, err := s.readRoom(r.Context(), roomID)
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	room := e.room
	var refuse error
	switch st := room.StatusAt(s.now()); {
	case !room.CanReadRoom(agent):
		refuse = roomNotFound(roomID)
	case !room.IsActiveMember(agent):
		refuse = membershipRequired("the live event stream")
	case st == adp.RoomEnded:
		refuse = hubhttp.Errorf(adp.CodeRoomNotActive, "the room has ended; read its history or archive over HTTP")
	case st == adp.RoomCancelled:
		refuse = hubhttp.Errorf(adp.CodeRoomNotActive, "the room was cancelled")
	}
	if refuse != nil {
		unlock()
		hubhttp.WriteError(w, r, s.logger, refuse)
		return
	}
	sub := &subscriber{roomID: roomID, agent: agent, items: make(chan item, s.limits.SubscriberBuffer), done: make(chan struct{})}
	// Subscribing under the room's read lock orders the subscription
	// against records: one committed before it is in history, one after it
	// is delivered (16.3).
	s.live.add(sub)
	unlock()
	defer s.live.remove(sub)

	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 8<<10)
	send := func(write func()) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
		write()
		if bw.Flush() != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !send(func() { bw.WriteString(": subscribed\n\n") }) {
		return
	}
	heartbeat := time.NewTicker(s.limits.HeartbeatInterval)
	defer heartbeat.Stop()
	lifetime := time.NewTimer(s.streamLifetime(r))
	defer lifetime.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.ctx.Done():
			return
		case <-sub.done:
			return
		case <-lifetime.C:
			send(func() {
				bw.WriteString(": the request JWT expired or the maximum stream lifetime passed; reconnect with a fresh request JWT\n\n")
			})
			return
		case <-heartbeat.C:
			if !send(func() { bw.WriteString(": heartbeat\n\n") }) {
				return
			}
		case it := <-sub.items:
			select {
			case <-sub.done:
				return // dropped: nothing more is delivered
			default:
			}
			if it.end != "" {
				send(func() { bw.WriteString(": " + it.end + "\n\n") })
				return
			}
			if !send(func() {
				bw.WriteString("event: ")
				bw.WriteString(it.event)
				bw.WriteString("\ndata: ")
				bw.Write(it.data)
				bw.WriteString("\n\n")
			}) {
				return
			}
		}
	}
}

// streamLifetime is how long a live stream may stay open: until the
// subscription's request JWT expires (exp, on the hub clock), and never
// longer than MaxStreamLifetime. A token the hub's clock skew let in after
// its exp gets a stream that ends at once.
func (s *Service) streamLifetime(r *http.Request) time.Duration {
	d := s.limits.MaxStreamLifetime
	if c, ok := hubhttp.Claims(r.Context()); ok {
		d = min(d, c.ExpiresAt.Sub(s.clock()))
	}
	return max(d, 0)
}
