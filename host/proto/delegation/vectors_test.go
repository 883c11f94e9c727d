package delegation

import (
	"encoding/json"
	"os"
	"testing"

	"apconnect/host/identity"
)

// vectors is testdata/1.0.vectors.json (see testdata/SOURCE.md).
type vectors struct {
	DelegationIDs struct {
		Valid   []string `json:"valid"`
		Invalid []string `json:"invalid"`
	} `json:"delegation_ids"`
	PrincipalDocuments []struct {
		Name     string          `json:"name"`
		Valid    bool            `json:"valid"`
		Document json.RawMessage `json:"document"`
	} `json:"principal_documents"`
	Audiences struct {
		Valid   []string `json:"valid"`
		Invalid []string `json:"invalid"`
	} `json:"audiences"`
	Acceptance struct {
		Document json.RawMessage `json:"document"`
		Cases    []struct {
			Name       string          `json:"name"`
			Mode       string          `json:"mode"`
			Envelope   json.RawMessage `json:"envelope"`
			AcceptedAt int64           `json:"accepted_at"`
			Previous   json.RawMessage `json:"previous"`
			Expected   string          `json:"expected"`
		} `json:"cases"`
	} `json:"acceptance"`
}

func loadVectors(t *testing.T) *vectors {
	t.Helper()
	data, err := os.ReadFile("testdata/1.0.vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.PrincipalDocuments) < 30 || len(v.Acceptance.Cases) < 15 {
		t.Fatalf("vectors look truncated: %d documents, %d acceptance cases", len(v.PrincipalDocuments), len(v.Acceptance.Cases))
	}
	return &v
}

func TestVectorsDelegationIDs(t *testing.T) {
	v := loadVectors(t)
	for _, id := range v.DelegationIDs.Valid {
		if err := ValidateID(id); err != nil {
			t.Errorf("valid id %q: %v", id, err)
		}
	}
	for _, id := range v.DelegationIDs.Invalid {
		if ValidID(id) {
			t.Errorf("invalid id %q accepted", id)
		}
	}
}

func TestVectorsAudiences(t *testing.T) {
	v := loadVectors(t)
	for _, a := range v.Audiences.Valid {
		if err := ValidateAudience(a); err != nil {
			t.Errorf("valid audience %q: %v", a, err)
		}
	}
	for _, a := range v.Audiences.Invalid {
		if err := ValidateAudience(a); err == nil {
			t.Errorf("invalid audience %q accepted", a)
		}
	}
}

func TestVectorsPrincipalDocuments(t *testing.T) {
	v := loadVectors(t)
	for _, c := range v.PrincipalDocuments {
		doc, err := ParsePrincipalDocument(c.Document)
		if (err == nil) != c.Valid {
			t.Errorf("%s: valid=%v, got %v", c.Name, c.Valid, err)
			continue
		}
		if err != nil {
			if code := ErrorCode(err); code != CodePrincipalUnresolvable {
				t.Errorf("%s: code %q, want principal_unresolvable", c.Name, code)
			}
			continue
		}
		// A valid document round-trips through its JSON form unchanged.
		again, err := json.Marshal(doc)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		want, _ := identity.CanonicalizeJSON(c.Document)
		if string(again) != string(want) {
			t.Errorf("%s: round trip\n got %s\nwant %s", c.Name, again, want)
		}
	}
}

func TestVectorsAcceptance(t *testing.T) {
	v := loadVectors(t)
	doc, err := ParsePrincipalDocument(v.Acceptance.Document)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range v.Acceptance.Cases {
		env, err := identity.ParseEnvelope(c.Envelope)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		var previous *Credential
		if string(c.Previous) != "null" {
			if previous, err = ParseCredential(c.Previous); err != nil {
				t.Fatalf("%s: previous: %v", c.Name, err)
			}
		}
		switch c.Mode {
		case "live":
			err = CheckAcceptance(env, doc, doc.ID, c.AcceptedAt, previous)
		case "historical":
			err = CheckHistorical(&Record{Envelope: env, AcceptedAt: c.AcceptedAt}, doc, doc.ID, previous)
		default:
			t.Fatalf("%s: mode %q", c.Name, c.Mode)
		}
		got := "ok"
		if err != nil {
			got = ErrorCode(err)
		}
		if got != c.Expected {
			t.Errorf("%s: got %s (%v), want %s", c.Name, got, err, c.Expected)
		}
		if c.Mode == "live" && c.Expected == "ok" {
			// An accepted event materializes; a revocation keeps the grant.
			cred, err := Materialize(env, StatusActive, c.AcceptedAt, previous)
			if err != nil {
				t.Fatalf("%s: materialize: %v", c.Name, err)
			}
			if cred.EventID != env.Hash || cred.Controller != env.Event.Actor || cred.AcceptedAt != c.AcceptedAt {
				t.Errorf("%s: materialized %+v", c.Name, cred)
			}
			if previous != nil && env.Event.Type == TypeRevoke &&
				(cred.Status != StatusRevoked || cred.GrantEventID != previous.GrantEventID) {
				t.Errorf("%s: revocation materialized %+v", c.Name, cred)
			}
		}
	}
}
