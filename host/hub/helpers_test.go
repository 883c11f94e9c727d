package hub_test

import (
	"encoding/json"
	"os"
	"reflect"
	"strconv"
	"testing"
	"time"

	"apconnect/host/hub/hubtest"
	"apconnect/host/identity"
	"apconnect/host/proto/profile"
)

// vectorEpoch is created_at of the profile vectors' history: a clock set
// here accepts them as live writes.
var vectorEpoch = time.UnixMilli(1779753601000)

type profileVectors struct {
	Payloads struct {
		Valid, Invalid []struct {
			Name    string          `json:"name"`
			Actor   string          `json:"actor"`
			Payload json.RawMessage `json:"payload"`
		}
	} `json:"payloads"`
	History struct {
		Envelopes []json.RawMessage `json:"envelopes"`
		Latest    map[string]any    `json:"latest"`
	} `json:"history"`
	ExplicitEmpty struct {
		Envelope json.RawMessage `json:"envelope"`
		Document json.RawMessage `json:"document"`
	} `json:"explicit_empty"`
}

func loadProfileVectors(t *testing.T) *profileVectors {
	t.Helper()
	b, err := os.ReadFile("../proto/profile/testdata/agent-profile-1.0.vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v profileVectors
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return &v
}

// wantOK fails unless the response is 200.
func wantOK(t *testing.T, r *hubtest.Response) {
	t.Helper()
	if r.Status != 200 {
		t.Fatalf("status %d, want 200: %s", r.Status, r.Body)
	}
}

// wantError fails unless the response is an Agent Identity error with this
// status and code, and a well-formed body.
func wantError(t *testing.T, r *hubtest.Response, status int, code string) {
	t.Helper()
	if r.Status != status || r.ErrorCode() != code {
		t.Fatalf("got %d %q, want %d %q: %s", r.Status, r.ErrorCode(), status, code, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("error Content-Type %q", ct)
	}
	var body map[string]map[string]any
	if err := json.Unmarshal(r.Body, &body); err != nil || len(body) != 1 {
		t.Fatalf("error body is not {\"error\":{...}}: %s", r.Body)
	}
	e := body["error"]
	if msg, ok := e["message"].(string); !ok || msg == "" {
		t.Fatalf("error without message: %s", r.Body)
	}
	for k := range e {
		if k != "code" && k != "message" && k != "data" {
			t.Fatalf("unexpected error member %q: %s", k, r.Body)
		}
	}
	if d, ok := e["data"]; ok {
		if _, isObj := d.(map[string]any); !isObj {
			t.Fatalf("error data is not an object: %s", r.Body)
		}
	}
}

// wantMaxSeen checks the Max-Seen-Nonce header.
func wantMaxSeen(t *testing.T, r *hubtest.Response, n int64) {
	t.Helper()
	if got := r.Header.Get("Max-Seen-Nonce"); got != strconv.FormatInt(n, 10) {
		t.Fatalf("Max-Seen-Nonce %q, want %d", got, n)
	}
}

// jsonEqual compares two JSON texts by value.
func jsonEqual(t *testing.T, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got invalid JSON %s: %v", got, err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("want invalid JSON %s: %v", want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("JSON differs\n got: %s\nwant: %s", got, want)
	}
}

// validateSchema checks a response body against a definition of the Agent
// Profile schema.
func validateSchema(t *testing.T, def string, body []byte) {
	t.Helper()
	s, err := profile.Schema(def)
	if err != nil {
		t.Fatal(err)
	}
	v, err := identity.ParseStrict(body)
	if err != nil {
		t.Fatalf("response is not strict JSON: %v", err)
	}
	if err := s.Validate(v); err != nil {
		t.Fatalf("response does not match %s: %v\n%s", def, err, body)
	}
}

// payloadFor is a minimal profile payload for an agent.
func payloadFor(a *hubtest.Agent, name string) string {
	return `{"id":"` + a.ID + `","name":` + strconv.Quote(name) + `}`
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
