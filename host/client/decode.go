package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"apconnect/host/identity"
	"apconnect/host/proto/adp"
)

// parseObject strictly parses a JSON object.
func parseObject(data []byte) (map[string]any, error) {
	v, err := identity.ParseStrict(data)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("the body is not a JSON object")
	}
	return obj, nil
}

// parseList strictly parses an Agent Identity list (8.2): "result" is a
// required array; "next_cursor", when present, a non-empty string.
func parseList(data []byte) ([]any, string, error) {
	obj, err := parseObject(data)
	if err != nil {
		return nil, "", err
	}
	items, ok := obj["result"].([]any)
	if !ok {
		return nil, "", errors.New(`a list needs a "result" array`)
	}
	var next string
	if v, present := obj["next_cursor"]; present {
		next, ok = v.(string)
		if !ok || next == "" {
			return nil, "", errors.New(`"next_cursor" must be a non-empty string`)
		}
	}
	return items, next, nil
}

// decodeValue decodes a strictly parsed value into a typed struct, keeping
// numbers exact inside untyped members.
func decodeValue(v any, out any, pointer string) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("%s: %w", pointerOrRoot(pointer), err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("%s: %w", pointerOrRoot(pointer), err)
	}
	return nil
}

func pointerOrRoot(p string) string {
	if p == "" {
		return "(root)"
	}
	return p
}

// validHash reports whether s is a canonical base64url 32-byte hash.
func validHash(s string) bool {
	_, err := identity.DecodeBase64URLLen(s, 32)
	return err == nil
}

// itemPointer is the JSON pointer of item i of a list.
func itemPointer(i int) string { return "/result/" + strconv.Itoa(i) }

// recordFromValue reads a server record and checks it belongs to roomID.
func recordFromValue(v any, roomID, pointer string) (*adp.Record, error) {
	rec, err := adp.RecordFromValue(v, pointer)
	if err != nil {
		return nil, err
	}
	if err := checkRecordRoom(rec, roomID, pointer); err != nil {
		return nil, err
	}
	return rec, nil
}

// checkRecordRoom checks that a record at pointer belongs to roomID (any
// room when roomID is "").
func checkRecordRoom(rec *adp.Record, roomID, pointer string) error {
	if roomID != "" && rec.RoomID != roomID {
		return fmt.Errorf("%s: record of room %q, want %q", pointerOrRoot(pointer), rec.RoomID, roomID)
	}
	return nil
}

// roomFromValue reads a room resource into out (a *RoomResource, or a
// *MyRoom whose RoomResource is rr) and checks it.
func roomFromValue(v any, out any, rr *RoomResource, pointer string) error {
	obj, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: a room is a JSON object", pointerOrRoot(pointer))
	}
	if err := decodeValue(obj, out, pointer); err != nil {
		return err
	}
	if err := checkRoom(rr, pointer); err != nil {
		return err
	}
	rr.Raw = obj
	return nil
}

// checkRoom checks the formats of a decoded room resource.
func checkRoom(out *RoomResource, pointer string) error {
	if !adp.ValidRoomID(out.ID) {
		return fmt.Errorf("%s/id: invalid room id", pointer)
	}
	if out.Hash != "" && !validHash(out.Hash) {
		return fmt.Errorf("%s/hash: not a canonical hash", pointer)
	}
	if out.PreHash != "" && !validHash(out.PreHash) {
		return fmt.Errorf("%s/pre_hash: not a canonical hash", pointer)
	}
	if out.Head.Hash != "" && !validHash(out.Head.Hash) {
		return fmt.Errorf("%s/head/hash: not a canonical hash", pointer)
	}
	if out.Creator != "" && !identity.ValidAgentID(out.Creator) {
		return fmt.Errorf("%s/creator: invalid Agent ID", pointer)
	}
	if out.Seq < 0 || out.Head.Seq < 0 || out.Head.Seq > out.Seq {
		return fmt.Errorf("%s: seq %d and head.seq %d are inconsistent", pointerOrRoot(pointer), out.Seq, out.Head.Seq)
	}
	if out.Head.Seq == 0 && out.Head.Hash == "" && out.Seq > 0 && out.Hash != "" {
		out.Head = adp.Link{Seq: out.Seq, Hash: out.Hash}
	}
	return nil
}

// joinRequestFromValue reads a join request resource of roomID.
func joinRequestFromValue(v any, roomID, pointer string) (*JoinRequest, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: a join request is a JSON object", pointerOrRoot(pointer))
	}
	var jr JoinRequest
	if err := decodeValue(obj, &jr, pointer); err != nil {
		return nil, err
	}
	if !validHash(jr.ID) {
		return nil, fmt.Errorf("%s/id: not a canonical event ID", pointer)
	}
	if jr.Request == nil {
		return nil, fmt.Errorf("%s/request: missing", pointer)
	}
	ev := jr.Request.Event
	if jr.Request.Hash != jr.ID || ev.Type != adp.TypeJoinRequest || adp.RoomOf(&ev) != roomID {
		return nil, fmt.Errorf("%s/request: not the room.join.request %s of room %s", pointer, jr.ID, roomID)
	}
	switch jr.Status {
	case adp.JoinPending, adp.JoinApproved, adp.JoinRejected, adp.JoinExpired:
	default:
		return nil, fmt.Errorf("%s/status: unknown status %q", pointer, jr.Status)
	}
	if _, ok := identity.IntValue(obj["expires_at"]); !ok {
		return nil, fmt.Errorf("%s/expires_at: missing or not an integer", pointer)
	}
	if jr.ReviewedBy != "" && !identity.ValidAgentID(jr.ReviewedBy) {
		return nil, fmt.Errorf("%s/reviewed_by: invalid Agent ID", pointer)
	}
	if jr.ReviewEventID != "" && !validHash(jr.ReviewEventID) {
		return nil, fmt.Errorf("%s/review_event_id: not a canonical event ID", pointer)
	}
	jr.Raw = obj
	return &jr, nil
}

// agentStatusFromValue reads an agent status of roomID. A live item (sse)
// must not look like a record and may lack updated_at.
func agentStatusFromValue(v any, roomID, pointer string, sse bool) (*AgentStatus, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: an agent status is a JSON object", pointerOrRoot(pointer))
	}
	if sse {
		for _, k := range []string{"seq", "pre_hash", "hash", "envelope"} {
			if _, present := obj[k]; present {
				return nil, fmt.Errorf("%s/%s: a room.agent_status item must not carry record fields", pointer, k)
			}
		}
	}
	var st AgentStatus
	if err := decodeValue(obj, &st, pointer); err != nil {
		return nil, err
	}
	if st.RoomID != roomID {
		return nil, fmt.Errorf("%s/room_id: status of room %q, want %q", pointer, st.RoomID, roomID)
	}
	if !identity.ValidAgentID(st.AgentID) {
		return nil, fmt.Errorf("%s/agent_id: invalid Agent ID", pointer)
	}
	if st.State == "" {
		return nil, fmt.Errorf("%s/state: missing", pointer)
	}
	if st.SeenHash != "" && !validHash(st.SeenHash) {
		return nil, fmt.Errorf("%s/seen_hash: not a canonical hash", pointer)
	}
	if !sse {
		for _, k := range []string{"expires_at", "updated_at"} {
			if _, ok := identity.IntValue(obj[k]); !ok {
				return nil, fmt.Errorf("%s/%s: missing or not an integer", pointer, k)
			}
		}
	}
	st.Raw = obj
	return &st, nil
}

// joinNoticeFromValue reads a room.join_request live item of roomID.
func joinNoticeFromValue(v any, roomID string) (*JoinRequestNotice, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("a room.join_request item is a JSON object")
	}
	for _, k := range []string{"seq", "pre_hash", "hash", "envelope"} {
		if _, present := obj[k]; present {
			return nil, fmt.Errorf("/%s: a room.join_request item must not carry record fields", k)
		}
	}
	var n JoinRequestNotice
	if err := decodeValue(obj, &n, ""); err != nil {
		return nil, err
	}
	if n.RoomID != roomID {
		return nil, fmt.Errorf("/room_id: notice of room %q, want %q", n.RoomID, roomID)
	}
	if !validHash(n.RequestID) {
		return nil, errors.New("/request_id: not a canonical event ID")
	}
	if !identity.ValidAgentID(n.Applicant) {
		return nil, errors.New("/applicant: invalid Agent ID")
	}
	n.Raw = obj
	return &n, nil
}

// profileFromValue reads a profile document.
func profileFromValue(v any, pointer string) (*ProfileDocument, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: a profile is a JSON object", pointerOrRoot(pointer))
	}
	var p ProfileDocument
	if err := decodeValue(obj, &p, pointer); err != nil {
		return nil, err
	}
	if !identity.ValidAgentID(p.ID) {
		return nil, fmt.Errorf("%s/id: invalid Agent ID", pointer)
	}
	if p.Name == "" {
		return nil, fmt.Errorf("%s/name: missing", pointer)
	}
	if !validHash(p.EventID) {
		return nil, fmt.Errorf("%s/event_id: not a canonical event ID", pointer)
	}
	if _, ok := identity.IntValue(obj["updated_at"]); !ok {
		return nil, fmt.Errorf("%s/updated_at: missing or not an integer", pointer)
	}
	p.Raw = obj
	return &p, nil
}

// decodePage parses the list response resp of GET u and decodes each item
// with item, which gets the item, its JSON pointer and the items decoded so
// far (for ordering checks). limit > 0 refuses a longer page. Every failure
// is a *ResponseError naming the request.
func decodePage[T any](u string, resp *response, limit int, item func(v any, pointer string, prev []T) (T, error)) (*Page[T], error) {
	items, next, err := parseList(resp.body)
	if err != nil {
		return nil, bad(http.MethodGet, u, resp.status, err)
	}
	if limit > 0 && len(items) > limit {
		return nil, bad(http.MethodGet, u, resp.status, fmt.Errorf("%d items for limit %d", len(items), limit))
	}
	page := &Page[T]{Items: make([]T, 0, len(items)), NextCursor: next}
	for i, it := range items {
		v, err := item(it, itemPointer(i), page.Items)
		if err != nil {
			return nil, bad(http.MethodGet, u, resp.status, err)
		}
		page.Items = append(page.Items, v)
	}
	return page, nil
}
