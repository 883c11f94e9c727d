package mcpserver

import (
	"testing"

	"apconnect/host/toolcatalog"
)

// Through the server: a 0.12.6 client's nulls and blanks reach the engine
// as omitted members, and a blank content stays a (refused) blank content.
func TestNullAndBlankInputsThroughTheServer(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, "alice", 0xA1, agentOptions{})
	roomID := alice.createRoom("public", nil)
	got := alice.call("room_timeline", obj{"room_id": roomID, "host": "", "after_seq": nil, "types": nil, "source": ""})
	if items, _ := got["items"].([]any); len(items) == 0 {
		t.Fatalf("timeline with blank and null members: %v", got)
	}
	got = alice.call("drafts_list", obj{"room_id": nil, "cursor": ""})
	if _, ok := got["drafts"].([]any); !ok {
		t.Fatalf("drafts_list: %v", got)
	}
	e := alice.callErr("room_send_message", obj{"room_id": roomID, "content": ""})
	if e.Code != toolcatalog.ErrCodeInvalidInput {
		t.Fatalf("blank content: %+v", e)
	}
	e = alice.callErr("room_timeline", obj{"room_id": roomID, "bogus": nil})
	if e.Code != toolcatalog.ErrCodeInvalidInput {
		t.Fatalf("undeclared null member: %+v", e)
	}
}
