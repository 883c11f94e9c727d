package identity

import (
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"
	"time"
)

// vectors mirrors agent-identity/1.0.vectors.json (Appendix A), copied
// verbatim into testdata (testdata/SOURCE.md says from which commits).
type vectors struct {
	Keys []struct {
		Seed      string `json:"seed"`
		PublicKey string `json:"public_key"`
		AgentID   string `json:"agent_id"`
	} `json:"keys"`
	Events []struct {
		Name      string          `json:"name"`
		Event     json.RawMessage `json:"event"`
		JCS       string          `json:"jcs"`
		Hash      string          `json:"hash"`
		Signature string          `json:"signature"`
		Seed      string          `json:"seed"`
	} `json:"events"`
	Signatures []struct {
		Name      string `json:"name"`
		PublicKey string `json:"public_key"`
		Message   string `json:"message"`
		Signature string `json:"signature"`
		Valid     bool   `json:"valid"`
	} `json:"signatures"`
	AgentIDs struct {
		Valid   []string `json:"valid"`
		Invalid []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"invalid"`
	} `json:"agent_ids"`
	JSON struct {
		Valid []struct {
			Name string `json:"name"`
			Text string `json:"text"`
		} `json:"valid"`
		Invalid []struct {
			Name string `json:"name"`
			Text string `json:"text"`
		} `json:"invalid"`
	} `json:"json"`
	EventsClosedShape struct {
		Invalid []struct {
			Name  string          `json:"name"`
			Event json.RawMessage `json:"event"`
		} `json:"invalid"`
	} `json:"events_closed_shape"`
	MaxSeenNonce []struct {
		Name      string `json:"name"`
		NextNonce int64  `json:"next_nonce"`
		NowMS     int64  `json:"now_ms"`
		Header    string `json:"header"`
		Accepted  bool   `json:"accepted"`
		NextAfter int64  `json:"next_after"`
	} `json:"max_seen_nonce"`
	Origins struct {
		Valid   []string `json:"valid"`
		Invalid []string `json:"invalid"`
	} `json:"origins"`
	RequestJWTs struct {
		Audience   string `json:"audience"`
		NowSecs    int64  `json:"now_secs"`
		MaxTTLSecs int64  `json:"max_ttl_secs"`
		Valid      []struct {
			Name   string `json:"name"`
			Token  string `json:"token"`
			Claims struct {
				Iss string `json:"iss"`
				Sub string `json:"sub"`
				Aud string `json:"aud"`
				Iat int64  `json:"iat"`
				Exp int64  `json:"exp"`
			} `json:"claims"`
		} `json:"valid"`
		Invalid []struct {
			Name  string `json:"name"`
			Token string `json:"token"`
		} `json:"invalid"`
	} `json:"request_jwts"`
	// Submissions are run through the hub's live-write pipeline
	// (host/hub/submission_vectors_test.go); here their envelopes verify.
	Submissions struct {
		Envelopes map[string]json.RawMessage `json:"envelopes"`
	} `json:"submissions"`
}

func loadVectors(t testing.TB) *vectors {
	t.Helper()
	b, err := os.ReadFile("testdata/agent-identity-1.0.vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Events) == 0 || len(v.Signatures) == 0 || len(v.MaxSeenNonce) == 0 {
		t.Fatal("vector file is missing sections")
	}
	return &v
}

func seedKey(t testing.TB, seedHex string) ed25519.PrivateKey {
	t.Helper()
	seed, err := hex.DecodeString(seedHex)
	if err != nil || len(seed) != ed25519.SeedSize {
		t.Fatalf("bad seed %q", seedHex)
	}
	return ed25519.NewKeyFromSeed(seed)
}

func TestVectorKeys(t *testing.T) {
	v := loadVectors(t)
	for _, k := range v.Keys {
		priv := seedKey(t, k.Seed)
		pub := priv.Public().(ed25519.PublicKey)
		if got := EncodeBase64URL(pub); got != k.PublicKey {
			t.Errorf("public key = %s, want %s", got, k.PublicKey)
		}
		if got := AgentIDFromPublicKey(pub); got != k.AgentID {
			t.Errorf("agent id = %s, want %s", got, k.AgentID)
		}
		back, err := ParseAgentID(k.AgentID)
		if err != nil || !back.Equal(pub) {
			t.Errorf("ParseAgentID(%s) = %x, %v", k.AgentID, back, err)
		}
	}
}

func TestVectorEvents(t *testing.T) {
	v := loadVectors(t)
	for _, tc := range v.Events {
		t.Run(tc.Name, func(t *testing.T) {
			var ev Event
			if err := json.Unmarshal(tc.Event, &ev); err != nil {
				t.Fatalf("event does not parse: %v", err)
			}
			jcs, err := ev.Canonical()
			if err != nil {
				t.Fatal(err)
			}
			if string(jcs) != tc.JCS {
				t.Fatalf("JCS mismatch\n got: %s\nwant: %s", jcs, tc.JCS)
			}
			// The generic path (parse the text, canonicalize the value) must
			// agree with the typed event path.
			generic, err := CanonicalizeJSON(tc.Event)
			if err != nil || string(generic) != tc.JCS {
				t.Fatalf("CanonicalizeJSON = %s, %v", generic, err)
			}
			id, err := ev.ID()
			if err != nil || id != tc.Hash {
				t.Fatalf("hash = %s, %v; want %s", id, err, tc.Hash)
			}
			env, err := SignEvent(NewKeySigner(seedKey(t, tc.Seed)), ev)
			if err != nil {
				t.Fatal(err)
			}
			if env.Hash != tc.Hash || env.Signature != tc.Signature {
				t.Fatalf("signed envelope = %s / %s; want %s / %s", env.Hash, env.Signature, tc.Hash, tc.Signature)
			}
			// The envelope survives a full wire round trip and verifies.
			wire, err := json.Marshal(env)
			if err != nil {
				t.Fatal(err)
			}
			back, err := ParseEnvelope(wire)
			if err != nil {
				t.Fatalf("ParseEnvelope(own output): %v", err)
			}
			if back.Hash != tc.Hash {
				t.Fatalf("round-trip hash %s", back.Hash)
			}
		})
	}
}

func TestVectorSignatures(t *testing.T) {
	v := loadVectors(t)
	for _, tc := range v.Signatures {
		t.Run(tc.Name, func(t *testing.T) {
			pub, err := DecodeBase64URL(tc.PublicKey)
			if err != nil {
				t.Fatal(err)
			}
			msg, err := DecodeBase64URL(tc.Message)
			if err != nil {
				t.Fatal(err)
			}
			sig, err := DecodeBase64URL(tc.Signature)
			if err != nil {
				t.Fatal(err)
			}
			err = VerifyStrict(pub, msg, sig)
			if tc.Valid && err != nil {
				t.Fatalf("valid signature rejected: %v", err)
			}
			if !tc.Valid && err == nil {
				t.Fatal("invalid signature accepted")
			}
		})
	}
}

func TestVectorAgentIDs(t *testing.T) {
	v := loadVectors(t)
	for _, id := range v.AgentIDs.Valid {
		if _, err := ParseAgentID(id); err != nil {
			t.Errorf("valid %s rejected: %v", id, err)
		}
	}
	for _, tc := range v.AgentIDs.Invalid {
		if _, err := ParseAgentID(tc.Value); err == nil {
			t.Errorf("%s: %q accepted", tc.Name, tc.Value)
		}
	}
}

func TestVectorJSON(t *testing.T) {
	v := loadVectors(t)
	for _, tc := range v.JSON.Valid {
		if _, err := ParseStrict([]byte(tc.Text)); err != nil {
			t.Errorf("%s: rejected: %v", tc.Name, err)
		}
	}
	for _, tc := range v.JSON.Invalid {
		_, err := ParseStrict([]byte(tc.Text))
		if err == nil {
			t.Errorf("%s: accepted", tc.Name)
			continue
		}
		if _, ok := err.(*JSONError); !ok {
			t.Errorf("%s: error %T is not a *JSONError", tc.Name, err)
		}
	}
}

// The closed event object: a field the event's protocol does not define
// (Agent Profile defines none beyond the six) is refused by CheckFields,
// which every protocol's rules apply; a missing identity field by parsing.
func TestVectorClosedShapes(t *testing.T) {
	v := loadVectors(t)
	for _, tc := range v.EventsClosedShape.Invalid {
		var ev Event
		err := json.Unmarshal(tc.Event, &ev)
		if err == nil {
			err = ev.CheckFields("")
		}
		if err == nil {
			t.Errorf("%s: accepted", tc.Name)
			continue
		}
		if ErrorCode(err) != CodeInvalidEvent {
			t.Errorf("%s: code %q, want invalid_event (%v)", tc.Name, ErrorCode(err), err)
		}
	}
}

func TestVectorMaxSeenNonce(t *testing.T) {
	v := loadVectors(t)
	for _, tc := range v.MaxSeenNonce {
		got, err := ApplyMaxSeenNonce(tc.NextNonce, tc.NowMS, tc.Header)
		if tc.Accepted {
			if err != nil || got != tc.NextAfter {
				t.Errorf("%s: got %d, %v; want %d", tc.Name, got, err, tc.NextAfter)
			}
		} else {
			if err == nil {
				t.Errorf("%s: accepted, next = %d", tc.Name, got)
			}
			if got != tc.NextNonce {
				t.Errorf("%s: rejected header changed next nonce to %d", tc.Name, got)
			}
		}
	}
}

func TestVectorOrigins(t *testing.T) {
	v := loadVectors(t)
	if len(v.Origins.Valid) == 0 || len(v.Origins.Invalid) == 0 {
		t.Fatal("the vectors have no origins section")
	}
	for _, s := range v.Origins.Valid {
		if !ValidOrigin(s) {
			t.Errorf("valid origin %q refused", s)
		}
	}
	for _, s := range v.Origins.Invalid {
		if ValidOrigin(s) {
			t.Errorf("invalid origin %q accepted", s)
		}
	}
}

// Request JWTs verify exactly as listed, at the vectors' clock with no
// skew (the SDK's verdicts; the hub tolerates DefaultClockSkew on top).
func TestVectorRequestJWTs(t *testing.T) {
	v := loadVectors(t)
	jw := v.RequestJWTs
	if len(jw.Valid) == 0 || len(jw.Invalid) == 0 {
		t.Fatal("the vectors have no request_jwts section")
	}
	now := time.Unix(jw.NowSecs, 0)
	maxTTL := time.Duration(jw.MaxTTLSecs) * time.Second
	for _, tc := range jw.Valid {
		c, err := VerifyToken(tc.Token, jw.Audience, now, maxTTL, 0)
		if err != nil {
			t.Errorf("%s: %v", tc.Name, err)
			continue
		}
		w := tc.Claims
		if c.AgentID != w.Iss || c.AgentID != w.Sub || c.Aud != w.Aud || c.IssuedAt.Unix() != w.Iat || c.ExpiresAt.Unix() != w.Exp {
			t.Errorf("%s: claims %+v, want %+v", tc.Name, c, w)
		}
	}
	for _, tc := range jw.Invalid {
		if _, err := VerifyToken(tc.Token, jw.Audience, now, maxTTL, 0); ErrorCode(err) != CodeInvalidToken {
			t.Errorf("%s: got %v, want invalid_token", tc.Name, err)
		}
	}
}

// The submission vectors' envelopes are authentic (their verdicts are the
// hub pipeline's, tested there).
func TestVectorSubmissionEnvelopes(t *testing.T) {
	v := loadVectors(t)
	if len(v.Submissions.Envelopes) != 3 {
		t.Fatalf("%d submission envelopes, want 3", len(v.Submissions.Envelopes))
	}
	for name, raw := range v.Submissions.Envelopes {
		if _, err := ParseEnvelope(raw); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
