package hubtest

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"apconnect/host/identity"
	"apconnect/host/proto/adp"
)

// JSONValue turns a Go value (maps, slices, strings, integers) into the
// strictly parsed form events carry, failing the test if it is not I-JSON.
func JSONValue(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("hubtest: encode: %v", err)
	}
	out, err := identity.ParseStrict(b)
	if err != nil {
		t.Fatalf("hubtest: %v", err)
	}
	return out
}

// ADPEvent signs an Agent Discourse event of type typ created at now with
// the agent's next nonce. roomID is "" for room.create; base is nil for
// room.create and room.join.request. payload is any JSON-encodable value.
func (a *Agent) ADPEvent(t testing.TB, now time.Time, typ, roomID string, base *adp.Link, payload any) []byte {
	t.Helper()
	ev := adp.NewEvent(typ, "", now.UnixMilli(), JSONValue(t, payload), adp.Fields{RoomID: roomID, Base: base})
	ev.Nonce = a.NextNonce(now)
	return a.SignJSON(t, ev)
}

// AuthHeader returns an Authorization header with a fresh request JWT of
// agent a for this hub (nil for a nil agent: an anonymous request).
func (h *Hub) AuthHeader(t testing.TB, a *Agent) http.Header {
	t.Helper()
	if a == nil {
		return nil
	}
	return Bearer(a.Token(t, h.Origin(), h.Now(), time.Minute))
}

// Get sends an authenticated GET as agent a (anonymous when a is nil).
func (h *Hub) Get(t testing.TB, path string, a *Agent) *Response {
	t.Helper()
	return h.Do(http.MethodGet, path, nil, h.AuthHeader(t, a))
}

// Post sends a signed envelope to path.
func (h *Hub) Post(path string, envelope []byte) *Response {
	return h.Do(http.MethodPost, path, envelope, nil)
}

// RoomHead reads a room's resource as agent a and returns its head and its
// latest record (seq and hash), failing the test unless the read succeeds.
func (h *Hub) RoomHead(t testing.TB, roomID string, a *Agent) (head, last adp.Link) {
	t.Helper()
	r := h.Get(t, "/v1/rooms/"+roomID, a)
	if r.Status != http.StatusOK {
		t.Fatalf("hubtest: GET room %s: %d %s", roomID, r.Status, r.Body)
	}
	var res struct {
		Seq  int64    `json:"seq"`
		Hash string   `json:"hash"`
		Head adp.Link `json:"head"`
	}
	r.Decode(t, &res)
	return res.Head, adp.Link{Seq: res.Seq, Hash: res.Hash}
}
