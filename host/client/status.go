package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"apconnect/host/identity"
	"apconnect/host/text"
)

// maxStatusPages bounds how many pages AgentStatuses follows.
const maxStatusPages = 32

// AgentStatuses lists a room's current agent statuses
// (GET /v1/rooms/{room_id}/agent-status), following next_cursor to the end
// (at most 32 pages), authenticated when the Host has a signer. Each Agent
// ID appears at most once (ADP 16.4).
func (h *Host) AgentStatuses(ctx context.Context, roomID string) ([]*AgentStatus, error) {
	room, err := h.roomURL(ctx, roomID)
	if err != nil {
		return nil, err
	}
	u := room + "/agent-status"
	var out []*AgentStatus
	seen := map[string]bool{}
	cursor := ""
	for range maxStatusPages {
		qs := url.Values{}
		setStr(qs, "cursor", cursor)
		resp, err := h.get(ctx, u, qs, authIfSigner, h.svc.opts.MaxResponseBytes)
		if err != nil {
			return nil, err
		}
		items, next, err := parseList(resp.body)
		if err != nil {
			return nil, bad(http.MethodGet, u, resp.status, err)
		}
		for i, it := range items {
			st, err := agentStatusFromValue(it, roomID, itemPointer(i), false)
			if err != nil {
				return nil, bad(http.MethodGet, u, resp.status, err)
			}
			if seen[st.AgentID] {
				return nil, bad(http.MethodGet, u, resp.status, fmt.Errorf("%s: a second status of %s", itemPointer(i), st.AgentID))
			}
			seen[st.AgentID] = true
			out = append(out, st)
		}
		if next == "" {
			return out, nil
		}
		cursor = next
	}
	return nil, bad(http.MethodGet, u, http.StatusOK, fmt.Errorf("more than %d pages of agent statuses", maxStatusPages))
}

// AgentStatus reads one agent's current status
// (GET /v1/rooms/{room_id}/agent-status/{agent_id}); none is the *Error
// agent_status_not_found.
func (h *Host) AgentStatus(ctx context.Context, roomID, agentID string) (*AgentStatus, error) {
	if !identity.ValidAgentID(agentID) {
		return nil, fmt.Errorf("client: invalid Agent ID %q", text.Truncate(agentID, 80))
	}
	room, err := h.roomURL(ctx, roomID)
	if err != nil {
		return nil, err
	}
	u := room + "/agent-status/" + url.PathEscape(agentID)
	resp, err := h.get(ctx, u, nil, authIfSigner, h.svc.opts.MaxResourceBytes)
	if err != nil {
		return nil, err
	}
	return parseStatus(http.MethodGet, u, resp, roomID, agentID)
}

// PutAgentStatus replaces the authenticated agent's status
// (PUT /v1/rooms/{room_id}/agent-status) and returns the stored status. It
// needs a signer. A PUT replaces state, so it is retried like a read.
func (h *Host) PutAgentStatus(ctx context.Context, roomID string, s AgentStatusInput) (*AgentStatus, error) {
	if h.signer == nil {
		return nil, ErrNoSigner
	}
	if s.State == "" {
		return nil, errors.New("client: agent status needs a state")
	}
	if s.SeenHash != "" && !validHash(s.SeenHash) {
		return nil, errors.New("client: agent status seen_hash is not a canonical hash")
	}
	if s.SeenSeq < 0 || s.ExpiresAt < 0 {
		return nil, errors.New("client: agent status seen_seq and expires_at must not be negative")
	}
	room, err := h.roomURL(ctx, roomID)
	if err != nil {
		return nil, err
	}
	u := room + "/agent-status"
	body, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	resp, err := h.svc.do(ctx, call{method: http.MethodPut, url: u, body: body, auth: authRequired, signer: h.signer,
		maxBytes: h.svc.opts.MaxResourceBytes})
	if err != nil {
		return nil, err
	}
	return parseStatus(http.MethodPut, u, resp, roomID, h.signer.AgentID())
}

// parseStatus reads a single agent status of agentID.
func parseStatus(method, u string, resp *response, roomID, agentID string) (*AgentStatus, error) {
	v, err := identity.ParseStrict(resp.body)
	if err != nil {
		return nil, bad(method, u, resp.status, err)
	}
	st, err := agentStatusFromValue(v, roomID, "", false)
	if err != nil {
		return nil, bad(method, u, resp.status, err)
	}
	if st.AgentID != agentID {
		return nil, bad(method, u, resp.status, fmt.Errorf("/agent_id: status of %s, want %s", st.AgentID, agentID))
	}
	return st, nil
}
