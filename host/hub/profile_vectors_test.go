package hub_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"apconnect/host/hub/hubtest"
	"apconnect/host/identity"
)

// The code each invalid payload vector is rejected with.
var invalidVectorCodes = map[string]string{
	"payload id differs from actor": identity.CodeInvalidActor,
	"missing id":                    identity.CodeInvalidEvent,
	"missing name":                  identity.CodeInvalidEvent,
	"empty name":                    identity.CodeInvalidEvent,
	"undefined top-level field":     identity.CodeInvalidEvent,
	"service-derived updated_at inside the payload": identity.CodeInvalidEvent,
	"service-derived event_id inside the payload":   identity.CodeInvalidEvent,
	"non-HTTPS avatar":                           identity.CodeInvalidEvent,
	"non-HTTPS service endpoint":                 identity.CodeInvalidEvent,
	"duplicate service endpoints":                identity.CodeInvalidEvent,
	"link with a script scheme":                  identity.CodeInvalidEvent,
	"duplicate links by url and rel":             identity.CodeInvalidEvent,
	"undefined link field":                       identity.CodeInvalidEvent,
	"duplicate capabilities":                     identity.CodeInvalidEvent,
	"empty capability":                           identity.CodeInvalidEvent,
	"delegation hint with an invalid id":         identity.CodeInvalidEvent,
	"delegation hint without a principal":        identity.CodeInvalidEvent,
	"delegation hint with a non-HTTPS principal": identity.CodeInvalidEvent,
}

// TestProfilePayloadVectors signs every payload vector as its actor (the
// vectors' actor is the key with seed 0x09) and submits it over HTTPS:
// each valid one is accepted and materialized as signed, each invalid one
// rejected with its exact code, leaving the profile unchanged.
func TestProfilePayloadVectors(t *testing.T) {
	v := loadProfileVectors(t)
	if len(v.Payloads.Valid) != 2 || len(v.Payloads.Invalid) != len(invalidVectorCodes) {
		t.Fatalf("vectors: %d valid, %d invalid; the test knows 2 and %d", len(v.Payloads.Valid), len(v.Payloads.Invalid), len(invalidVectorCodes))
	}
	h := hubtest.Start(t)
	agent := hubtest.NewAgent(9)
	nonce := int64(0)
	var lastDoc []byte
	for _, c := range v.Payloads.Valid {
		t.Run("valid/"+c.Name, func(t *testing.T) {
			if c.Actor != agent.ID {
				t.Fatalf("vector actor %s is not seed 0x09's %s", c.Actor, agent.ID)
			}
			nonce++
			now := h.Now()
			env := agent.ProfileUpdate(t, now, nonce, string(c.Payload))
			r := h.Do(http.MethodPost, "/v1/profiles", env, nil)
			wantOK(t, r)
			wantMaxSeen(t, r, nonce)
			validateSchema(t, "profileDocument", r.Body)
			// The document is the payload plus updated_at and event_id.
			var doc map[string]any
			r.Decode(t, &doc)
			var e identity.Envelope
			if err := json.Unmarshal(env, &e); err != nil {
				t.Fatal(err)
			}
			var want map[string]any
			if err := json.Unmarshal(c.Payload, &want); err != nil {
				t.Fatal(err)
			}
			want["updated_at"] = float64(now.UnixMilli())
			want["event_id"] = e.Hash
			wantJSON, _ := json.Marshal(want)
			jsonEqual(t, r.Body, wantJSON)
			got := h.Do(http.MethodGet, "/v1/profiles/"+agent.ID, nil, nil)
			wantOK(t, got)
			jsonEqual(t, got.Body, r.Body)
			lastDoc = got.Body
		})
	}
	for _, c := range v.Payloads.Invalid {
		t.Run("invalid/"+c.Name, func(t *testing.T) {
			code, ok := invalidVectorCodes[c.Name]
			if !ok {
				t.Fatalf("no expected code for vector %q", c.Name)
			}
			r := h.Do(http.MethodPost, "/v1/profiles", agent.ProfileUpdate(t, h.Now(), nonce+1, string(c.Payload)), nil)
			status := http.StatusBadRequest
			wantError(t, r, status, code)
			got := h.Do(http.MethodGet, "/v1/profiles/"+agent.ID, nil, nil)
			jsonEqual(t, got.Body, lastDoc)
		})
	}
	// No rejected update entered the history.
	r := h.Do(http.MethodGet, "/v1/profiles/"+agent.ID+"/events?limit=100", nil, nil)
	wantOK(t, r)
	var list struct{ Result []json.RawMessage }
	r.Decode(t, &list)
	if len(list.Result) != len(v.Payloads.Valid) {
		t.Fatalf("history holds %d updates, want %d", len(list.Result), len(v.Payloads.Valid))
	}
}

// TestProfileHistoryVectors submits the history vectors in their listed
// order (nonces 5, 9, 7): the update with nonce 7 is rejected by the durable
// comparison, and the document is materialized from nonce 9 although 7 was
// created later. The explicit_empty update then materializes exactly its
// document.
func TestProfileHistoryVectors(t *testing.T) {
	v := loadProfileVectors(t)
	h := hubtest.Start(t, hubtest.WithClock(hubtest.NewClock(vectorEpoch)))

	for i, want := range []struct {
		status int
		code   string
		max    int64
	}{{200, "", 5}, {200, "", 9}, {409, identity.CodeNonceNotGreater, 9}} {
		r := h.Do(http.MethodPost, "/v1/profiles", []byte(v.History.Envelopes[i]), nil)
		if want.code == "" {
			wantOK(t, r)
		} else {
			wantError(t, r, want.status, want.code)
		}
		wantMaxSeen(t, r, want.max)
	}
	checkLatest(t, h, v)

	r := h.Do(http.MethodGet, "/v1/profiles/"+hubtest.NewAgent(9).ID+"/events?limit=10", nil, nil)
	wantOK(t, r)
	validateSchema(t, "profileEventsResponse", r.Body)
	var list struct {
		Result []json.RawMessage `json:"result"`
	}
	r.Decode(t, &list)
	if len(list.Result) != 2 {
		t.Fatalf("history has %d envelopes, want 2", len(list.Result))
	}
	jsonEqual(t, list.Result[0], v.History.Envelopes[1])
	jsonEqual(t, list.Result[1], v.History.Envelopes[0])

	r = h.Do(http.MethodPost, "/v1/profiles", []byte(v.ExplicitEmpty.Envelope), nil)
	wantOK(t, r)
	jsonEqual(t, r.Body, v.ExplicitEmpty.Document)
	r = h.Do(http.MethodGet, "/v1/profiles/"+hubtest.NewAgent(9).ID, nil, nil)
	wantOK(t, r)
	jsonEqual(t, r.Body, v.ExplicitEmpty.Document)
	validateSchema(t, "profileDocument", r.Body)
}

// TestProfileHistoryInNonceOrder accepts the history vectors in nonce order
// and returns them newest-nonce first; the latest document is nonce 9's even
// though nonce 7 carries the latest created_at.
func TestProfileHistoryInNonceOrder(t *testing.T) {
	v := loadProfileVectors(t)
	h := hubtest.Start(t, hubtest.WithClock(hubtest.NewClock(vectorEpoch)))
	for _, i := range []int{0, 2, 1} { // nonces 5, 7, 9
		wantOK(t, h.Do(http.MethodPost, "/v1/profiles", []byte(v.History.Envelopes[i]), nil))
	}
	checkLatest(t, h, v)
	r := h.Do(http.MethodGet, "/v1/profiles/"+hubtest.NewAgent(9).ID+"/events?limit=3", nil, nil)
	wantOK(t, r)
	var list struct {
		Result     []json.RawMessage `json:"result"`
		NextCursor *string           `json:"next_cursor"`
	}
	r.Decode(t, &list)
	if len(list.Result) != 3 || list.NextCursor != nil {
		t.Fatalf("history: %s", r.Body)
	}
	for i, j := range []int{1, 2, 0} { // nonces 9, 7, 5
		jsonEqual(t, list.Result[i], v.History.Envelopes[j])
	}
}

func checkLatest(t *testing.T, h *hubtest.Hub, v *profileVectors) {
	t.Helper()
	r := h.Do(http.MethodGet, "/v1/profiles/"+hubtest.NewAgent(9).ID, nil, nil)
	wantOK(t, r)
	var doc map[string]any
	r.Decode(t, &doc)
	for k, want := range v.History.Latest {
		if got := doc[k]; got != want {
			t.Fatalf("latest document %s = %v, want %v", k, got, want)
		}
	}
}
