package discourse

import (
	"sort"

	"apconnect/host/engine"
)

// Live-stream states, for the operator's view and the process heartbeats:
// what each room followed live by this process is doing now.
const (
	// StreamConnecting: the stream is being opened (or the gap after it
	// recovered from history).
	StreamConnecting = "connecting"
	// StreamLive: the stream is open and its records are applied as they
	// arrive.
	StreamLive = "live"
	// StreamRetrying: the stream failed or ended; it is opened again after
	// a backoff. Error says why.
	StreamRetrying = "retrying"
	// StreamWaiting: the host refused the stream (not, or no longer, a
	// member); the room is synced from history slowly until the agent
	// joins.
	StreamWaiting = "waiting"
	// StreamPolled: more live rooms than streams; the room is synced from
	// history every poll interval.
	StreamPolled = "polled"
)

// StreamState is the live-following state of one room in this process.
type StreamState struct {
	Host   string `json:"host"`
	RoomID string `json:"room_id"`
	State  string `json:"state"`
	// Since is when the room entered the state, Unix ms.
	Since int64 `json:"since"`
	// Error is the latest failure, for retrying and waiting.
	Error string `json:"error,omitempty"`
}

// StreamStates lists the rooms this process follows live (by stream or by
// polling) with their state, by host then room.
func (c *Module) StreamStates() []StreamState {
	m := c.live
	m.mu.Lock()
	out := make([]StreamState, 0, len(m.streams)+len(m.polled))
	for _, s := range m.streams {
		st := s.status
		if st.State == "" {
			st = StreamState{State: StreamConnecting, Since: s.started}
		}
		st.Host, st.RoomID = s.ref.Host, s.ref.RoomID
		out = append(out, st)
	}
	for _, r := range m.polled {
		out = append(out, StreamState{Host: r.Host, RoomID: r.RoomID, State: StreamPolled})
	}
	m.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Host != out[j].Host {
			return out[i].Host < out[j].Host
		}
		return out[i].RoomID < out[j].RoomID
	})
	return out
}

// setStreamState records a stream's state (the error's code and message
// for a failure).
func (m *liveManager) setStreamState(ls *liveStream, state string, err error) {
	st := StreamState{State: state, Since: m.c.NowMS()}
	if err != nil {
		e := engine.AsError(err)
		st.Error = e.Code + ": " + e.Message
	}
	m.mu.Lock()
	if ls.status.State != state || ls.status.Error != st.Error {
		ls.status = st
	}
	m.mu.Unlock()
}
