package discourse

import (
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"time"

	"apconnect/host/hub/internal/hubhttp"
	"apconnect/host/identity"
	"apconnect/host/proto/adp"
)

// statusBodyBytes bounds a PUT agent-status body.
const statusBodyBytes = 16 << 10

// storedStatus is one transient agent status (ADP 16.4): the agentStatus
// object as served, and when it expires.
type storedStatus struct {
	json      []byte
	expiresAt int64
}

// statusStore keeps transient agent statuses in memory, by room and agent.
// They are hints, never records: not stored in hub.db, not archived, gone
// after a restart.
type statusStore struct {
	mu    sync.Mutex
	rooms map[string]map[string]*storedStatus
}

func newStatusStore() *statusStore {
	return &statusStore{rooms: map[string]map[string]*storedStatus{}}
}

func (st *statusStore) set(roomID, agent string, v *storedStatus) {
	st.mu.Lock()
	defer st.mu.Unlock()
	m := st.rooms[roomID]
	if m == nil {
		m = map[string]*storedStatus{}
		st.rooms[roomID] = m
	}
	m[agent] = v
}

func (st *statusStore) clear(roomID, agent string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if m := st.rooms[roomID]; m != nil {
		delete(m, agent)
		if len(m) == 0 {
			delete(st.rooms, roomID)
		}
	}
}

// get returns an unexpired status, or nil.
func (st *statusStore) get(roomID, agent string, now int64) []byte {
	st.mu.Lock()
	defer st.mu.Unlock()
	if v := st.rooms[roomID][agent]; v != nil && v.expiresAt > now {
		return v.json
	}
	return nil
}

// list returns the unexpired statuses of a room after the given Agent ID,
// ordered by Agent ID, with their Agent IDs.
func (st *statusStore) list(roomID, after string, now int64) (agents []string, docs [][]byte) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for agent, v := range st.rooms[roomID] {
		if v.expiresAt > now && agent > after {
			agents = append(agents, agent)
		}
	}
	slices.Sort(agents)
	for _, a := range agents {
		docs = append(docs, st.rooms[roomID][a].json)
	}
	return agents, docs
}

// retain keeps the statuses of a room whose agent passes keep.
func (st *statusStore) retain(roomID string, keep func(agent string) bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for agent := range st.rooms[roomID] {
		if !keep(agent) {
			delete(st.rooms[roomID], agent)
		}
	}
	if len(st.rooms[roomID]) == 0 {
		delete(st.rooms, roomID)
	}
}

// prune forgets every expired status.
func (st *statusStore) prune(now int64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for id, m := range st.rooms {
		for agent, v := range m {
			if v.expiresAt <= now {
				delete(m, agent)
			}
		}
		if len(m) == 0 {
			delete(st.rooms, id)
		}
	}
}

// mayWriteStatus reports whether an agent may write (and keep) a status in
// the room: an active member whose role is moderator or speaker (16.4).
func mayWriteStatus(room *adp.Room, agent string) bool {
	m, ok := room.Member(agent)
	return ok && m.Active && m.Role.Speaking()
}

// putStatus serves PUT /v1/rooms/{id}/agent-status (ADP 16.4).
func (s *Service) putStatus(w http.ResponseWriter, r *http.Request) {
	agent := hubhttp.AgentID(r.Context())
	if err := hubhttp.CheckQuery(r.URL.Query()); err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	v, err := hubhttp.ReadStrictJSON(w, r, statusBodyBytes)
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	if err := adp.ValidateKernel("agentStatusInput", v); err != nil {
		hubhttp.WriteError(w, r, s.logger, apiError(err))
		return
	}
	in := v.(map[string]any)
	roomID := r.PathValue("room_id")
	e, unlock, err := s.readRoom(r.Context(), roomID)
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	defer unlock()
	room := e.room
	now := s.clock()
	nowMS := now.UnixMilli()
	switch st := room.StatusAt(nowMS); {
	case !room.CanReadRoom(agent):
		err = roomNotFound(roomID)
	case !room.IsActiveMember(agent):
		err = membershipRequired("writing agent status")
	case !mayWriteStatus(room, agent):
		err = hubhttp.Errorf(identity.CodePermissionDenied, "only active moderators and speakers may write agent status; observers may not")
	case st == adp.RoomEnded:
		err = hubhttp.Errorf(adp.CodeRoomNotActive, "the room has ended")
	case st == adp.RoomCancelled:
		err = hubhttp.Errorf(adp.CodeRoomNotActive, "the room was cancelled")
	}
	if err == nil && s.limits.StatusWritesPerMinute > 0 && s.pipeline.Limiter != nil {
		_, err = s.pipeline.Limiter.Reserve(Protocol+"|"+roomID+"|agent-status|"+agent,
			hubhttp.Rate{Limit: s.limits.StatusWritesPerMinute, Per: time.Minute}, now)
	}
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	maxExp := nowMS + s.limits.StatusTTL.Milliseconds()
	exp := maxExp
	if x, ok := identity.IntValue(in["expires_at"]); ok {
		exp = min(x, maxExp)
	}
	doc := map[string]any{"room_id": roomID, "agent_id": agent, "expires_at": exp, "updated_at": nowMS}
	for _, k := range []string{"state", "summary", "seen_seq", "seen_hash", "claim_id", "activity", "extra"} {
		if x, ok := in[k]; ok {
			doc[k] = x
		}
	}
	data, err := json.Marshal(doc)
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	if exp <= nowMS {
		s.statuses.clear(roomID, agent)
	} else {
		s.statuses.set(roomID, agent, &storedStatus{json: data, expiresAt: exp})
	}
	s.publishStatus(e, data)
	hubhttp.WriteJSON(w, http.StatusOK, json.RawMessage(data))
}

// statusReadable applies the read permissions of agent status (16.4): those
// of the room's events (15).
func (s *Service) statusReadable(r *http.Request, roomID string) error {
	agent := hubhttp.AgentID(r.Context())
	e, unlock, err := s.readRoom(r.Context(), roomID)
	if err != nil {
		return err
	}
	defer unlock()
	return readEventsAllowed(e.room, agent, roomID, "reading agent status")
}

// listStatus serves GET /v1/rooms/{id}/agent-status: every unexpired status
// of the room, one per agent, ordered by Agent ID.
func (s *Service) listStatus(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := hubhttp.CheckQuery(q, "limit", "cursor"); err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	limit, err := hubhttp.ParseLimit(q, s.limits.ListPageMax, s.limits.ListPageMax)
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	roomID := r.PathValue("room_id")
	after := ""
	if q.Has("cursor") {
		if err := hubhttp.DecodeCursor(q.Get("cursor"), "agent-status|"+roomID, &after); err != nil {
			hubhttp.WriteError(w, r, s.logger, err)
			return
		}
	}
	if err := s.statusReadable(r, roomID); err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	agents, docs := s.statuses.list(roomID, after, s.now())
	next := ""
	if len(docs) > limit {
		docs = docs[:limit]
		next = hubhttp.EncodeCursor("agent-status|"+roomID, agents[limit-1])
	}
	out := make([]json.RawMessage, len(docs))
	for i, d := range docs {
		out[i] = d
	}
	hubhttp.WriteList(w, out, next)
}

// getStatus serves GET /v1/rooms/{id}/agent-status/{agent_id}.
func (s *Service) getStatus(w http.ResponseWriter, r *http.Request) {
	if err := hubhttp.CheckQuery(r.URL.Query()); err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	roomID, agent := r.PathValue("room_id"), r.PathValue("agent_id")
	if !identity.ValidAgentID(agent) {
		hubhttp.WriteError(w, r, s.logger, invalidParam("agent_id", "path agent_id is not a canonical Agent ID"))
		return
	}
	if err := s.statusReadable(r, roomID); err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	doc := s.statuses.get(roomID, agent, s.now())
	if doc == nil {
		hubhttp.WriteError(w, r, s.logger, hubhttp.Errorf(adp.CodeAgentStatusNotFound, "no current agent status for %s", agent))
		return
	}
	hubhttp.WriteJSON(w, http.StatusOK, json.RawMessage(doc))
}
