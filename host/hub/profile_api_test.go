package hub_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	"apconnect/host/identity"
)

func eventID(t *testing.T, env []byte) string {
	t.Helper()
	var e identity.Envelope
	if err := json.Unmarshal(env, &e); err != nil {
		t.Fatal(err)
	}
	return e.Hash
}

func historyLen(t *testing.T, h *hubtest.Hub, id string) int {
	t.Helper()
	r := h.Do(http.MethodGet, "/v1/profiles/"+id+"/events?limit=100", nil, nil)
	wantOK(t, r)
	var l struct{ Result []json.RawMessage }
	r.Decode(t, &l)
	return len(l.Result)
}

// TestProfileExactResubmission: a resubmitted accepted update is an
// idempotent lookup answered with the current document — also after a newer
// update, outside the time window and below the nonce maximum — and never
// adds to the history.
func TestProfileExactResubmission(t *testing.T) {
	clock := hubtest.NewClock(time.Now())
	h := hubtest.Start(t, hubtest.WithClock(clock))
	a := hubtest.NewAgent(1)
	v1 := a.ProfileUpdate(t, clock.Now(), 10, payloadFor(a, "first"))
	first := h.Do(http.MethodPost, "/v1/profiles", v1, nil)
	wantOK(t, first)

	again := h.Do(http.MethodPost, "/v1/profiles", v1, nil)
	wantOK(t, again)
	jsonEqual(t, again.Body, first.Body)
	wantMaxSeen(t, again, 10)

	v2 := a.ProfileUpdate(t, clock.Now(), 11, payloadFor(a, "second"))
	second := h.Do(http.MethodPost, "/v1/profiles", v2, nil)
	wantOK(t, second)

	// Resubmitting v1 now returns the current (v2) document.
	r := h.Do(http.MethodPost, "/v1/profiles", v1, nil)
	wantOK(t, r)
	jsonEqual(t, r.Body, second.Body)

	// Outside the window, and after the nonce cache expired: still a lookup.
	clock.Advance(time.Hour)
	r = h.Do(http.MethodPost, "/v1/profiles", v1, nil)
	wantOK(t, r)
	jsonEqual(t, r.Body, second.Body)
	wantMaxSeen(t, r, 11) // the durable comparison value
	if n := historyLen(t, h, a.ID); n != 2 {
		t.Fatalf("history has %d updates, want 2", n)
	}
	// The same bytes re-indented are the same envelope.
	var pretty strings.Builder
	var v any
	json.Unmarshal(v1, &v)
	enc := json.NewEncoder(&pretty)
	enc.SetIndent("", "  ")
	enc.Encode(v)
	r = h.Do(http.MethodPost, "/v1/profiles", pretty.String(), nil)
	wantOK(t, r)
	jsonEqual(t, r.Body, second.Body)
}

// TestProfileFullReplacement: a new update replaces the document; omitted
// optional fields are not inherited.
func TestProfileFullReplacement(t *testing.T) {
	h := hubtest.Start(t)
	a := hubtest.NewAgent(2)
	wantOK(t, h.Do(http.MethodPost, "/v1/profiles", a.ProfileUpdate(t, h.Now(), 1,
		`{"id":"`+a.ID+`","name":"A","description":"d","capabilities":["x"],"extra":{"k":1}}`), nil))
	now := h.Now()
	env := a.ProfileUpdate(t, now, 2, payloadFor(a, "B"))
	r := h.Do(http.MethodPost, "/v1/profiles", env, nil)
	wantOK(t, r)
	want := fmt.Sprintf(`{"id":%q,"name":"B","updated_at":%d,"event_id":%q}`, a.ID, now.UnixMilli(), eventID(t, env))
	jsonEqual(t, r.Body, []byte(want))
	got := h.Do(http.MethodGet, "/v1/profiles/"+a.ID, nil, nil)
	jsonEqual(t, got.Body, []byte(want))
}

// TestProfileRestartKeepsState: profiles, history and the durable nonce
// comparison survive a restart, also after the nonce cache has expired.
func TestProfileRestartKeepsState(t *testing.T) {
	dir := t.TempDir()
	clock := hubtest.NewClock(time.Now())
	h := hubtest.Start(t, hubtest.WithDir(dir), hubtest.WithClock(clock))
	a := hubtest.NewAgent(3)
	env := a.ProfileUpdate(t, clock.Now(), 50, payloadFor(a, "kept"))
	doc := h.Do(http.MethodPost, "/v1/profiles", env, nil)
	wantOK(t, doc)
	caBefore := readFile(t, h.CAFile())

	clock.Advance(time.Hour) // well past the nonce cache's validity
	h = h.Restart()
	if got := readFile(t, h.CAFile()); got != caBefore {
		t.Fatal("restart replaced ca.pem")
	}
	r := h.Do(http.MethodGet, "/v1/profiles/"+a.ID, nil, nil)
	wantOK(t, r)
	jsonEqual(t, r.Body, doc.Body)
	if n := historyLen(t, h, a.ID); n != 1 {
		t.Fatalf("history has %d updates after restart, want 1", n)
	}
	r = h.Do(http.MethodPost, "/v1/profiles", a.ProfileUpdate(t, clock.Now(), 40, payloadFor(a, "older")), nil)
	wantError(t, r, http.StatusConflict, identity.CodeNonceNotGreater)
	wantMaxSeen(t, r, 50)
	// Exact resubmission still resolves from the durable history.
	r = h.Do(http.MethodPost, "/v1/profiles", env, nil)
	wantOK(t, r)
	jsonEqual(t, r.Body, doc.Body)
	wantOK(t, h.Do(http.MethodPost, "/v1/profiles", a.ProfileUpdate(t, clock.Now(), 51, payloadFor(a, "newer")), nil))
}

// TestProfileDurableNonceComparison: once the nonce cache entry has expired,
// the latest accepted profile.update still bounds the next one.
func TestProfileDurableNonceComparison(t *testing.T) {
	clock := hubtest.NewClock(time.Now())
	h := hubtest.Start(t, hubtest.WithClock(clock))
	a := hubtest.NewAgent(4)
	wantOK(t, h.Do(http.MethodPost, "/v1/profiles", a.ProfileUpdate(t, clock.Now(), 1000, payloadFor(a, "x")), nil))
	clock.Advance(301 * time.Second)
	for _, n := range []int64{999, 1000} {
		r := h.Do(http.MethodPost, "/v1/profiles", a.ProfileUpdate(t, clock.Now(), n, payloadFor(a, "lower")), nil)
		wantError(t, r, http.StatusConflict, identity.CodeNonceNotGreater)
		wantMaxSeen(t, r, 1000)
	}
	r := h.Do(http.MethodPost, "/v1/profiles", a.ProfileUpdate(t, clock.Now(), 1001, payloadFor(a, "higher")), nil)
	wantOK(t, r)
	wantMaxSeen(t, r, 1001)
}

// TestProfileHistoryPagination: newest first by nonce, limit defaults to 1,
// cursors page through and are bound to their agent, bad input is
// invalid_request and unknown agents not_found.
func TestProfileHistoryPagination(t *testing.T) {
	h := hubtest.Start(t)
	a, b := hubtest.NewAgent(5), hubtest.NewAgent(6)
	var hashes []string
	for n := int64(1); n <= 5; n++ {
		env := a.ProfileUpdate(t, h.Now(), n, payloadFor(a, fmt.Sprint("v", n)))
		wantOK(t, h.Do(http.MethodPost, "/v1/profiles", env, nil))
		hashes = append(hashes, eventID(t, env))
	}
	wantOK(t, h.Do(http.MethodPost, "/v1/profiles", b.ProfileUpdate(t, h.Now(), 9, payloadFor(b, "b")), nil))

	type page struct {
		Result []struct {
			Hash  string `json:"hash"`
			Event struct {
				Nonce   int64 `json:"nonce"`
				Payload struct {
					ID string `json:"id"`
				} `json:"payload"`
			} `json:"event"`
		} `json:"result"`
		NextCursor *string `json:"next_cursor"`
	}
	get := func(query string) (*hubtest.Response, page) {
		r := h.Do(http.MethodGet, "/v1/profiles/"+a.ID+"/events"+query, nil, nil)
		var p page
		if r.Status == 200 {
			validateSchema(t, "profileEventsResponse", r.Body)
			r.Decode(t, &p)
		}
		return r, p
	}

	r, p := get("")
	wantOK(t, r)
	if len(p.Result) != 1 || p.Result[0].Event.Nonce != 5 || p.NextCursor == nil {
		t.Fatalf("default page: %s", r.Body)
	}
	var seen []int64
	cursor := ""
	for range 10 {
		q := "?limit=2"
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		r, p = get(q)
		wantOK(t, r)
		for _, e := range p.Result {
			if e.Event.Payload.ID != a.ID {
				t.Fatalf("foreign envelope in history: %s", r.Body)
			}
			seen = append(seen, e.Event.Nonce)
		}
		if p.NextCursor == nil {
			break
		}
		cursor = *p.NextCursor
	}
	if fmt.Sprint(seen) != "[5 4 3 2 1]" {
		t.Fatalf("paged nonces %v, want [5 4 3 2 1]", seen)
	}
	if p.Result[0].Hash != hashes[0] {
		t.Fatal("last page does not end at the first update")
	}
	r, p = get("?limit=1000") // capped, not rejected
	wantOK(t, r)
	if len(p.Result) != 5 || p.NextCursor != nil {
		t.Fatalf("limit=1000: %s", r.Body)
	}

	_, first := get("?limit=1")
	foreign := h.Do(http.MethodGet, "/v1/profiles/"+b.ID+"/events?cursor="+*first.NextCursor, nil, nil)
	wantError(t, foreign, http.StatusBadRequest, identity.CodeInvalidRequest)
	for _, q := range []string{"?limit=0", "?limit=-1", "?limit=abc", "?limit=%2B2", "?limit=1&limit=2", "?cursor=%21%21", "?cursor=", "?after=3"} {
		r, _ := get(q)
		wantError(t, r, http.StatusBadRequest, identity.CodeInvalidRequest)
	}
	wantError(t, h.Do(http.MethodGet, "/v1/profiles/"+hubtest.NewAgent(99).ID+"/events", nil, nil), http.StatusNotFound, identity.CodeNotFound)
	wantError(t, h.Do(http.MethodGet, "/v1/profiles/did:agent:nope/events", nil, nil), http.StatusBadRequest, identity.CodeInvalidRequest)
}

// TestProfileRead covers GET /v1/profiles/{agent_id}.
func TestProfileRead(t *testing.T) {
	h := hubtest.Start(t)
	a := hubtest.NewAgent(7)
	wantError(t, h.Do(http.MethodGet, "/v1/profiles/"+a.ID, nil, nil), http.StatusNotFound, identity.CodeNotFound)
	wantOK(t, h.Do(http.MethodPost, "/v1/profiles", a.ProfileUpdate(t, h.Now(), 1, payloadFor(a, "seven")), nil))
	r := h.Do(http.MethodGet, "/v1/profiles/"+a.ID, nil, nil)
	wantOK(t, r)
	validateSchema(t, "profileDocument", r.Body)
	// A non-canonical Agent ID (trailing bits set) is not a lookup key.
	bad := a.ID[:len(a.ID)-1] + "h"
	if identity.ValidAgentID(bad) {
		t.Fatal("test id is canonical")
	}
	wantError(t, h.Do(http.MethodGet, "/v1/profiles/"+bad, nil, nil), http.StatusBadRequest, identity.CodeInvalidRequest)
	wantError(t, h.Do(http.MethodGet, "/v1/profiles/"+a.ID+"?x=1", nil, nil), http.StatusBadRequest, identity.CodeInvalidRequest)
	// Reads are public, but a token that is sent must be valid.
	tok := a.Token(t, h.Origin(), h.Now(), time.Minute)
	wantOK(t, h.Do(http.MethodGet, "/v1/profiles/"+a.ID, nil, hubtest.Bearer(tok)))
	wrongAud := a.Token(t, "https://example.com", h.Now(), time.Minute)
	wantError(t, h.Do(http.MethodGet, "/v1/profiles/"+a.ID, nil, hubtest.Bearer(wrongAud)), http.StatusUnauthorized, identity.CodeInvalidToken)
	// Unsupported methods answer 405 in the error shape.
	r = h.Do(http.MethodDelete, "/v1/profiles/"+a.ID, nil, nil)
	wantError(t, r, http.StatusMethodNotAllowed, identity.CodeInvalidRequest)
	if r.Header.Get("Allow") != "GET, HEAD" {
		t.Fatalf("Allow %q", r.Header.Get("Allow"))
	}
	wantError(t, h.Do(http.MethodGet, "/v1/profiles", nil, nil), http.StatusMethodNotAllowed, identity.CodeInvalidRequest)
	wantError(t, h.Do(http.MethodGet, "/v1/profiles/batch", nil, nil), http.StatusMethodNotAllowed, identity.CodeInvalidRequest)
	wantError(t, h.Do(http.MethodGet, "/v2/anything", nil, nil), http.StatusNotFound, identity.CodeNotFound)
}

// TestProfileBatch covers POST /v1/profiles/batch.
func TestProfileBatch(t *testing.T) {
	h := hubtest.Start(t)
	a, b, unknown := hubtest.NewAgent(10), hubtest.NewAgent(11), hubtest.NewAgent(12)
	wantOK(t, h.Do(http.MethodPost, "/v1/profiles", a.ProfileUpdate(t, h.Now(), 1, payloadFor(a, "a")), nil))
	wantOK(t, h.Do(http.MethodPost, "/v1/profiles", b.ProfileUpdate(t, h.Now(), 1, payloadFor(b, "b")), nil))

	batch := func(body any) *hubtest.Response { return h.Do(http.MethodPost, "/v1/profiles/batch", body, nil) }
	r := batch(map[string]any{"ids": []string{b.ID, unknown.ID, a.ID, b.ID}})
	wantOK(t, r)
	validateSchema(t, "profileBatchResponse", r.Body)
	var got map[string][]struct {
		ID string `json:"id"`
	}
	r.Decode(t, &got)
	if len(got) != 1 || len(got["result"]) != 2 || got["result"][0].ID != b.ID || got["result"][1].ID != a.ID {
		t.Fatalf("batch result (want b, a and no next_cursor): %s", r.Body)
	}
	r = batch(map[string]any{"ids": []string{}})
	wantOK(t, r)
	jsonEqual(t, r.Body, []byte(`{"result":[]}`))

	ids := make([]string, 1000)
	for i := range ids {
		ids[i] = unknown.ID
	}
	ids[999] = a.ID
	r = batch(map[string]any{"ids": ids})
	wantOK(t, r)
	r.Decode(t, &got)
	if len(got["result"]) != 1 {
		t.Fatalf("1000 ids: %s", r.Body)
	}
	r = batch(map[string]any{"ids": append(ids, a.ID)})
	wantError(t, r, http.StatusBadRequest, identity.CodeInvalidRequest)

	for name, body := range map[string]string{
		"not canonical":  `{"ids":["did:agent:nope"]}`,
		"not a string":   `{"ids":[1]}`,
		"missing ids":    `{}`,
		"ids not array":  `{"ids":"x"}`,
		"unknown field":  `{"ids":[],"cursor":"x"}`,
		"duplicate name": `{"ids":[],"ids":[]}`,
		"not an object":  `[]`,
		"not JSON":       `{"ids":`,
	} {
		t.Run(name, func(t *testing.T) {
			wantError(t, batch(body), http.StatusBadRequest, identity.CodeInvalidRequest)
		})
	}
	r = h.Do(http.MethodPost, "/v1/profiles/batch", `{"ids":[]}`, http.Header{"Content-Type": {"text/plain"}})
	wantError(t, r, http.StatusUnsupportedMediaType, identity.CodeInvalidRequest)
}

// TestProfileDiscovery checks /.well-known/agent-profile.
func TestProfileDiscovery(t *testing.T) {
	h := hubtest.Start(t)
	r := h.Do(http.MethodGet, "/.well-known/agent-profile", nil, nil)
	wantOK(t, r)
	validateSchema(t, "discoveryDocument", r.Body)
	var d struct {
		Protocol  string            `json:"protocol"`
		Service   string            `json:"service"`
		Endpoints map[string]string `json:"endpoints"`
		Features  []string          `json:"features"`
		Limits    map[string]int    `json:"limits"`
	}
	r.Decode(t, &d)
	if d.Protocol != "agent-profile/1.0" || d.Service != h.Origin() {
		t.Fatalf("discovery: %s", r.Body)
	}
	if d.Endpoints["profiles"] != h.Origin()+"/v1/profiles" || d.Endpoints["profile_batch"] != h.Origin()+"/v1/profiles/batch" || len(d.Endpoints) != 2 {
		t.Fatalf("endpoints: %v", d.Endpoints)
	}
	if fmt.Sprint(d.Features) != "[signed-updates event-history batch-read]" {
		t.Fatalf("features: %v", d.Features)
	}
	if d.Limits["name_chars"] != 128 || d.Limits["batch_ids"] != 1000 || d.Limits["extra_bytes"] != 32768 {
		t.Fatalf("limits: %v", d.Limits)
	}
	// Every advertised endpoint answers on this origin.
	wantOK(t, h.Do(http.MethodPost, strings.TrimPrefix(d.Endpoints["profile_batch"], h.Origin()), `{"ids":[]}`, nil))
}

// TestProfileLimits: section 4.2 limits are enforced with payload_too_large,
// counting Unicode scalar values, and the limits are configurable.
func TestProfileLimits(t *testing.T) {
	h := hubtest.Start(t, hubtest.WithOptions(func(o *hub.Options) { o.Limits.Profile.Capabilities = 3 }))
	a := hubtest.NewAgent(13)
	nonce := int64(0)
	submit := func(payload string) *hubtest.Response {
		nonce++
		return h.Do(http.MethodPost, "/v1/profiles", a.ProfileUpdate(t, h.Now(), nonce, payload), nil)
	}
	id := `"id":"` + a.ID + `"`
	caps := func(n int) string {
		s := make([]string, n)
		for i := range s {
			s[i] = fmt.Sprintf("%q", fmt.Sprint("c", i))
		}
		return "[" + strings.Join(s, ",") + "]"
	}
	for _, c := range []struct {
		name, payload string
		ok            bool
	}{
		{"name of 128 two-byte characters", `{` + id + `,"name":"` + strings.Repeat("é", 128) + `"}`, true},
		{"name of 129 characters", `{` + id + `,"name":"` + strings.Repeat("é", 129) + `"}`, false},
		{"description of 2048", `{` + id + `,"name":"n","description":"` + strings.Repeat("d", 2048) + `"}`, true},
		{"description of 2049", `{` + id + `,"name":"n","description":"` + strings.Repeat("d", 2049) + `"}`, false},
		{"capabilities at the configured 3", `{` + id + `,"name":"n","capabilities":` + caps(3) + `}`, true},
		{"capabilities over it", `{` + id + `,"name":"n","capabilities":` + caps(4) + `}`, false},
		{"extra of 32 KiB", `{` + id + `,"name":"n","extra":{"k":"` + strings.Repeat("x", 32768-len(`{"k":""}`)) + `"}}`, true},
		{"extra over 32 KiB", `{` + id + `,"name":"n","extra":{"k":"` + strings.Repeat("x", 32769-len(`{"k":""}`)) + `"}}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := submit(c.payload)
			if c.ok {
				wantOK(t, r)
			} else {
				wantError(t, r, http.StatusRequestEntityTooLarge, identity.CodePayloadTooLarge)
			}
		})
	}
	var links []string
	for i := range 65 {
		links = append(links, fmt.Sprintf(`{"name":"l","url":"https://example.com/%d","rel":"homepage"}`, i))
	}
	r := submit(`{` + id + `,"name":"n","links":[` + strings.Join(links, ",") + `]}`)
	wantError(t, r, http.StatusRequestEntityTooLarge, identity.CodePayloadTooLarge)
}

// TestProfileURLHostsOverHTTPS (D-25): over the real endpoint, a URL field
// that names no host and a delegation id "." are invalid_event with the
// pointer of the field, and nothing is stored.
func TestProfileURLHostsOverHTTPS(t *testing.T) {
	h := hubtest.Start(t)
	a := hubtest.NewAgent(60)
	for i, c := range []struct{ fragment, pointer string }{
		{`"avatar_url":"https://"`, "/event/payload/avatar_url"},
		{`"delegations":[{"principal":{"id":"https://"}}]`, "/event/payload/delegations/0/principal/id"},
		{`"delegations":[{"id":".","principal":{"id":"https://org.example"}}]`, "/event/payload/delegations/0/id"},
	} {
		r := h.Do(http.MethodPost, "/v1/profiles", a.ProfileUpdate(t, h.Now(), int64(i+1), `{"id":"`+a.ID+`","name":"n",`+c.fragment+`}`), nil)
		wantError(t, r, http.StatusBadRequest, identity.CodeInvalidEvent)
		var e struct {
			Error struct {
				Data struct{ Pointer string } `json:"data"`
			} `json:"error"`
		}
		r.Decode(t, &e)
		if e.Error.Data.Pointer != c.pointer {
			t.Errorf("%s: pointer %q, want %q", c.fragment, e.Error.Data.Pointer, c.pointer)
		}
	}
	wantError(t, h.Do(http.MethodGet, "/v1/profiles/"+a.ID, nil, nil), http.StatusNotFound, identity.CodeNotFound)
}
