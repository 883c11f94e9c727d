package discourse

import (
	"encoding/json"
	"sync"

	"apconnect/host/proto/adp"
)

// SSE event names (ADP 16.2, 16.4, 16.5).
const (
	eventRecord      = "room.event"
	eventAgentStatus = "room.agent_status"
	eventJoinRequest = "room.join_request"
)

// item is one SSE message queued for a subscriber, or, with end set, the
// end of its stream after everything queued before.
type item struct {
	event string
	data  []byte
	end   string
}

// subscriber is one live stream: an agent subscribed to a room. Fan-out
// sends to items without ever blocking; a subscriber that falls
// SubscriberBuffer items behind, loses its membership, or whose room ends
// is dropped: done closes and the stream ends without delivering what is
// still queued.
type subscriber struct {
	roomID string
	agent  string
	items  chan item
	done   chan struct{}
	once   sync.Once
	reason string // why it was dropped; written before done closes
}

func (s *subscriber) drop(reason string) {
	s.once.Do(func() {
		s.reason = reason
		close(s.done)
	})
}

// liveHub holds the live subscribers of every room.
type liveHub struct {
	mu    sync.Mutex
	rooms map[string]map[*subscriber]struct{}
}

func newLiveHub() *liveHub { return &liveHub{rooms: map[string]map[*subscriber]struct{}{}} }

func (h *liveHub) add(s *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	subs := h.rooms[s.roomID]
	if subs == nil {
		subs = map[*subscriber]struct{}{}
		h.rooms[s.roomID] = subs
	}
	subs[s] = struct{}{}
}

func (h *liveHub) remove(s *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if subs := h.rooms[s.roomID]; subs != nil {
		delete(subs, s)
		if len(subs) == 0 {
			delete(h.rooms, s.roomID)
		}
	}
}

// count returns the number of live subscribers of a room.
func (h *liveHub) count(roomID string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.rooms[roomID])
}

// roomsWithSubscribers returns the ids of rooms that have subscribers.
func (h *liveHub) roomsWithSubscribers() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]string, 0, len(h.rooms))
	for id := range h.rooms {
		out = append(out, id)
	}
	return out
}

// fanout offers it to every subscriber of the room that decide selects
// (deliver), drops those it rejects (drop with a reason), and never blocks:
// a full buffer drops the subscriber as too slow.
func (h *liveHub) fanout(roomID string, it item, decide func(s *subscriber) (deliver bool, drop string)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.rooms[roomID] {
		deliver, reason := decide(s)
		if reason != "" {
			s.drop(reason)
			delete(h.rooms[roomID], s)
			continue
		}
		if !deliver {
			continue
		}
		select {
		case s.items <- it:
		default:
			s.drop("the stream fell too far behind")
			delete(h.rooms[roomID], s)
		}
	}
	if len(h.rooms[roomID]) == 0 {
		delete(h.rooms, roomID)
	}
}

// endRoom ends the streams of a room that has ended: each delivers what is
// already queued (the closing record included), then ends. A stream whose
// buffer is full is dropped at once.
func (h *liveHub) endRoom(roomID, reason string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.rooms[roomID] {
		select {
		case s.items <- item{end: reason}:
		default:
			s.drop(reason)
		}
	}
	delete(h.rooms, roomID)
}

// closeAll drops every subscriber (the hub is shutting down).
func (h *liveHub) closeAll(reason string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, subs := range h.rooms {
		for s := range subs {
			s.drop(reason)
		}
		delete(h.rooms, id)
	}
}

// membershipLost is the drop reason for a subscriber that is no longer an
// active member (ADP 16.1), or "" while it is one.
func membershipLost(room *adp.Room, agent string) string {
	if room.IsActiveMember(agent) {
		return ""
	}
	return "the subscriber is no longer an active member of the room"
}

// publishRecord fans a committed record out as room.event to the room's
// active members (anyone who is not one any more is dropped, without the
// record), clears agent statuses the record invalidated, and ends the
// room's streams once it has ended. The caller holds e.mu exclusively, so
// records go out in seq order.
func (s *Service) publishRecord(e *roomEntry, rec *adp.Record, raw []byte) {
	room := e.room
	s.live.fanout(e.id, item{event: eventRecord, data: raw}, func(sub *subscriber) (bool, string) {
		reason := membershipLost(room, sub.agent)
		return reason == "", reason
	})
	switch rec.Type() {
	case adp.TypeRoomLeave, adp.TypeMemberRemove, adp.TypeRoleUpdate:
		s.statuses.retain(e.id, func(agent string) bool { return mayWriteStatus(room, agent) })
	}
	if room.Closed != nil {
		s.live.endRoom(e.id, "the room is "+string(room.Closed.Status))
	}
}

// publishJoinRequest sends a room.join_request notice (ADP 16.5) to the
// subscribed reviewers: the creator and active moderators. The caller holds
// e.mu.
func (s *Service) publishJoinRequest(e *roomEntry, notice map[string]any) {
	data, err := json.Marshal(notice)
	if err != nil {
		return
	}
	room := e.room
	s.live.fanout(e.id, item{event: eventJoinRequest, data: data}, func(sub *subscriber) (bool, string) {
		if reason := membershipLost(room, sub.agent); reason != "" {
			return false, reason
		}
		return room.IsManager(sub.agent), ""
	})
}

// publishStatus sends a room.agent_status notice (ADP 16.4) to the room's
// subscribers. The caller holds e.mu (shared is enough: statuses do not
// change the room).
func (s *Service) publishStatus(e *roomEntry, data []byte) {
	room := e.room
	s.live.fanout(e.id, item{event: eventAgentStatus, data: data}, func(sub *subscriber) (bool, string) {
		reason := membershipLost(room, sub.agent)
		return reason == "", reason
	})
}
