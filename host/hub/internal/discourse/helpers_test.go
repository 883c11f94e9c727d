package discourse_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"
	"time"

	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	"apconnect/host/identity"
	"apconnect/host/proto/adp"
)

// t0 is the fixture clock's start: every hub in these tests runs on a
// settable clock, so room lifecycles are driven by moving it.
var t0 = time.UnixMilli(1_800_000_000_000)

type obj = map[string]any
type arr = []any

// fx is a hub under test with a settable clock and the rooms it created.
type fx struct {
	t        testing.TB
	h        *hubtest.Hub
	clock    *hubtest.Clock
	creators map[string]*hubtest.Agent // room id → creator
}

// newFx starts a hub on a clock at t0. Extra options (limits) may be given.
func newFx(t testing.TB, opts ...hubtest.Option) *fx {
	t.Helper()
	clock := hubtest.NewClock(t0)
	h := hubtest.Start(t, append([]hubtest.Option{hubtest.WithClock(clock)}, opts...)...)
	return &fx{t: t, h: h, clock: clock, creators: map[string]*hubtest.Agent{}}
}

// withLimits edits the hub's discourse limits.
func withLimits(edit func(l *hub.Limits)) hubtest.Option {
	return hubtest.WithOptions(func(o *hub.Options) { edit(&o.Limits) })
}

// agents returns n fresh test agents seeded from base.
func agents(base byte, n int) []*hubtest.Agent {
	out := make([]*hubtest.Agent, n)
	for i := range out {
		out[i] = hubtest.NewAgent(base + byte(i))
	}
	return out
}

// roomPayload is a room.create payload for this hub: public, active from
// a second ago for two hours, with overrides applied (a nil value deletes).
// A public room given no policy opens the speaker and observer roles, so
// anyone may join and speak (the 0.12.6 default opens observer only).
func (f *fx) roomPayload(over obj) obj {
	now := f.clock.Now().UnixMilli()
	p := obj{
		"host": f.h.Origin(), "topic": "Test room", "visibility": "public",
		"start_time": now - 1000, "end_time": now + 2*3600_000,
	}
	for k, v := range over {
		if v == nil {
			delete(p, k)
		} else {
			p[k] = v
		}
	}
	if _, set := over["policy"]; !set && p["visibility"] == "public" {
		p["policy"] = obj{"open_roles": arr{"speaker", "observer"}}
	}
	return p
}

// createRaw submits a room.create envelope built from payload.
func (f *fx) createRaw(a *hubtest.Agent, payload any) *hubtest.Response {
	f.t.Helper()
	return f.h.Post("/v1/rooms", a.ADPEvent(f.t, f.clock.Now(), adp.TypeRoomCreate, "", nil, payload))
}

// create creates a room (roomPayload with overrides) and returns its id.
func (f *fx) create(a *hubtest.Agent, over obj) string {
	f.t.Helper()
	r := f.createRaw(a, f.roomPayload(over))
	if r.Status != http.StatusCreated {
		f.t.Fatalf("room.create: %d %s", r.Status, r.Body)
	}
	var res struct {
		ID string `json:"id"`
	}
	r.Decode(f.t, &res)
	f.creators[res.ID] = a
	return res.ID
}

// head returns the room's head as its creator reads it.
func (f *fx) head(roomID string) adp.Link {
	f.t.Helper()
	h, _ := f.h.RoomHead(f.t, roomID, f.creators[roomID])
	return h
}

// last returns the room's latest record as its creator reads it.
func (f *fx) last(roomID string) adp.Link {
	f.t.Helper()
	_, l := f.h.RoomHead(f.t, roomID, f.creators[roomID])
	return l
}

// sendAt submits a room event anchored on base.
func (f *fx) sendAt(a *hubtest.Agent, roomID, typ string, payload any, base adp.Link) *hubtest.Response {
	f.t.Helper()
	return f.h.Post("/v1/rooms/"+roomID, a.ADPEvent(f.t, f.clock.Now(), typ, roomID, &base, payload))
}

// send submits a room event anchored on the current head.
func (f *fx) send(a *hubtest.Agent, roomID, typ string, payload any) *hubtest.Response {
	f.t.Helper()
	return f.sendAt(a, roomID, typ, payload, f.head(roomID))
}

// must submits a room event on the current head and fails unless accepted;
// it returns the record.
func (f *fx) must(a *hubtest.Agent, roomID, typ string, payload any) *adp.Record {
	f.t.Helper()
	r := f.send(a, roomID, typ, payload)
	if r.Status != http.StatusOK {
		f.t.Fatalf("%s by %s: %d %s", typ, a.ID[:16], r.Status, r.Body)
	}
	rec, err := adp.ParseRecord(r.Body)
	if err != nil {
		f.t.Fatalf("%s: response is not a server record: %v\n%s", typ, err, r.Body)
	}
	return rec
}

// join makes a join directly with role.
func (f *fx) join(a *hubtest.Agent, roomID string, role adp.Role) *adp.Record {
	f.t.Helper()
	return f.must(a, roomID, adp.TypeRoomJoin, obj{"role": role})
}

// message sends a text message.
func (f *fx) message(a *hubtest.Agent, roomID, text string) *hubtest.Response {
	f.t.Helper()
	return f.send(a, roomID, adp.TypeMessageCreate, obj{"content_type": "text/plain", "content": text})
}

// joinRequest submits a room.join.request envelope.
func (f *fx) joinRequest(a *hubtest.Agent, roomID string, payload any) *hubtest.Response {
	f.t.Helper()
	return f.h.Post("/v1/rooms/"+roomID+"/join-requests", a.ADPEvent(f.t, f.clock.Now(), adp.TypeJoinRequest, roomID, nil, payload))
}

// records fetches every record of a room as reader (nil: anonymous),
// following next_cursor.
func (f *fx) records(roomID string, reader *hubtest.Agent) []*adp.Record {
	f.t.Helper()
	var out []*adp.Record
	path := "/v1/rooms/" + roomID + "/events?limit=1000"
	for {
		r := f.h.Get(f.t, path, reader)
		if r.Status != http.StatusOK {
			f.t.Fatalf("GET events: %d %s", r.Status, r.Body)
		}
		var page struct {
			Result []json.RawMessage `json:"result"`
			Next   string            `json:"next_cursor"`
		}
		r.Decode(f.t, &page)
		for _, raw := range page.Result {
			rec, err := adp.ParseRecord(raw)
			if err != nil {
				f.t.Fatalf("stored record: %v\n%s", err, raw)
			}
			out = append(out, rec)
		}
		if page.Next == "" {
			return out
		}
		path = "/v1/rooms/" + roomID + "/events?cursor=" + page.Next
	}
}

// wantError asserts an Agent Identity error response with exact status and
// code, and returns its data object.
func wantError(t testing.TB, r *hubtest.Response, status int, code string) map[string]any {
	t.Helper()
	if r.Status != status || r.ErrorCode() != code {
		t.Fatalf("got %d %q, want %d %q: %s", r.Status, r.ErrorCode(), status, code, r.Body)
	}
	v, err := identity.ParseStrict(r.Body)
	if err != nil {
		t.Fatalf("error body is not strict JSON: %v", err)
	}
	if err := adp.ValidateKernel("errorResponse", v); err != nil {
		t.Fatalf("error body does not match the kernel errorResponse: %v\n%s", err, r.Body)
	}
	data, _ := v.(map[string]any)["error"].(map[string]any)["data"].(map[string]any)
	return data
}

// wantStatus asserts a success status.
func wantStatus(t testing.TB, r *hubtest.Response, status int) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
}

// wantShape validates a response body against a kernel schema definition.
func wantShape(t testing.TB, def string, body []byte) {
	t.Helper()
	v, err := identity.ParseStrict(body)
	if err != nil {
		t.Fatalf("%s: not strict JSON: %v\n%s", def, err, body)
	}
	if err := adp.ValidateKernel(def, v); err != nil {
		t.Fatalf("response does not match the kernel %s: %v\n%s", def, err, body)
	}
}

// decodeJSON parses a body into a generic value.
func decodeJSON(t testing.TB, b []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("invalid JSON %s: %v", b, err)
	}
	return v
}

// jsonEq compares two values by their JSON encodings.
func jsonEq(t testing.TB, got, want any) bool {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	var gv, wv any
	json.Unmarshal(g, &gv)
	json.Unmarshal(w, &wv)
	return reflect.DeepEqual(gv, wv)
}
