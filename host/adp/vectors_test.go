package adp

import (
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"os"
	"slices"
	"testing"

	"apconnect/host/identity"
)

type discourseVectors struct {
	Seeds           map[string]string `json:"seeds"`
	RoomID          string            `json:"room_id"`
	Records         []json.RawMessage `json:"records"`
	RedactedRecords []json.RawMessage `json:"redacted_records"`
	LastSeq         int64             `json:"last_seq"`
	LastHash        string            `json:"last_hash"`
	HeadSeqAfter    []int64           `json:"head_seq_after"`
	Freshness       struct {
		Registry  []json.RawMessage `json:"registry"`
		Classes   map[string]string `json:"classes"`
		HeadBound []string          `json:"head_bound"`
	} `json:"freshness"`
	Patterns struct {
		Valid   []string `json:"valid"`
		Invalid []string `json:"invalid"`
	} `json:"patterns"`
}

func loadVectors(t testing.TB) *discourseVectors {
	t.Helper()
	b, err := os.ReadFile("testdata/1.0.vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := identity.ParseStrict(b); err != nil {
		t.Fatalf("vectors are not strict I-JSON: %v", err)
	}
	var v discourseVectors
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return &v
}

func parseVectorRecords(t *testing.T, raws []json.RawMessage) []*Record {
	t.Helper()
	out := make([]*Record, len(raws))
	for i, raw := range raws {
		rec, err := ParseRecord(raw)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		out[i] = rec
	}
	return out
}

func TestVectorRecordHashes(t *testing.T) {
	v := loadVectors(t)
	for _, set := range [][]json.RawMessage{v.Records, v.RedactedRecords} {
		for _, rec := range parseVectorRecords(t, set) {
			h, err := RecordHash(rec.RoomID, rec.Seq, rec.PreHash, rec.EnvelopeHash(), rec.AcceptedAt)
			if err != nil {
				t.Fatal(err)
			}
			if h != rec.Hash {
				t.Errorf("seq %d: record hash %s, vector %s", rec.Seq, h, rec.Hash)
			}
			if rec.RoomID != v.RoomID {
				t.Errorf("seq %d: room %s", rec.Seq, rec.RoomID)
			}
		}
	}
}

func TestVectorSignaturesReproduced(t *testing.T) {
	v := loadVectors(t)
	signers := map[string]*identity.KeySigner{}
	for name, seedHex := range v.Seeds {
		seed, err := hex.DecodeString(seedHex)
		if err != nil {
			t.Fatal(err)
		}
		s := identity.NewKeySigner(ed25519.NewKeyFromSeed(seed))
		signers[s.AgentID()] = s
		_ = name
	}
	for _, rec := range parseVectorRecords(t, v.Records) {
		env := rec.Envelope
		if err := env.Verify(); err != nil {
			t.Fatalf("seq %d: %v", rec.Seq, err)
		}
		s, ok := signers[env.Event.Actor]
		if !ok {
			t.Fatalf("seq %d: actor %s is not derived from a vector seed", rec.Seq, env.Event.Actor)
		}
		again, err := identity.SignEvent(s, env.Event)
		if err != nil {
			t.Fatal(err)
		}
		if again.Hash != env.Hash || again.Signature != env.Signature {
			t.Errorf("seq %d: re-signing gives %s/%s, vector %s/%s", rec.Seq, again.Hash, again.Signature, env.Hash, env.Signature)
		}
	}
}

func TestVectorChain(t *testing.T) {
	v := loadVectors(t)
	for _, tc := range []struct {
		name     string
		raws     []json.RawMessage
		redacted []int64
	}{
		{"plain", v.Records, nil},
		{"redacted", v.RedactedRecords, []int64{3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs := parseVectorRecords(t, tc.raws)
			res, err := VerifyChain(v.RoomID, Link{}, recs)
			if err != nil {
				t.Fatal(err)
			}
			if res.Last.Seq != v.LastSeq || res.Last.Hash != v.LastHash {
				t.Errorf("last = %+v, want %d %s", res.Last, v.LastSeq, v.LastHash)
			}
			if !slices.Equal(res.Redacted, tc.redacted) {
				t.Errorf("redacted = %v, want %v", res.Redacted, tc.redacted)
			}
			// From an anchor: the tail verifies against the record before it.
			tail, err := VerifyChain(v.RoomID, recs[1].Link(), recs[2:])
			if err != nil || tail.Last.Hash != v.LastHash {
				t.Errorf("tail from anchor: %v %+v", err, tail)
			}
			// The wrong anchor breaks the chain.
			_, err = VerifyChain(v.RoomID, recs[0].Link(), recs[2:])
			wantCode(t, err, CodeChainBroken)
		})
	}
}

func TestVectorHeadSeqAfter(t *testing.T) {
	v := loadVectors(t)
	for _, raws := range [][]json.RawMessage{v.Records, v.RedactedRecords} {
		recs := parseVectorRecords(t, raws)
		rules := &Rules{Limits: DefaultLimits(), HostOrigin: "https://api.example.com"}
		room, err := VerifyGenesis(rules, recs[0])
		if err != nil {
			t.Fatal(err)
		}
		heads := []int64{room.Head.Seq}
		lookup := RecordHashFunc(func(seq int64) (string, bool) { return recs[seq-1].Hash, seq >= 1 && seq <= int64(len(recs)) })
		for _, rec := range recs[1:] {
			if err := room.VerifyRecord(rules, rec, CheckOptions{Records: lookup}); err != nil {
				t.Fatalf("seq %d: %v", rec.Seq, err)
			}
			if err := room.Apply(rules, rec); err != nil {
				t.Fatalf("seq %d: %v", rec.Seq, err)
			}
			heads = append(heads, room.Head.Seq)
		}
		if !slices.Equal(heads, v.HeadSeqAfter) {
			t.Errorf("head_seq_after = %v, want %v", heads, v.HeadSeqAfter)
		}
		if room.Last.Hash != v.LastHash {
			t.Errorf("last hash %s", room.Last.Hash)
		}
	}
}

func TestVectorReplay(t *testing.T) {
	v := loadVectors(t)
	for _, tc := range []struct {
		raws     []json.RawMessage
		redacted []int64
	}{{v.Records, nil}, {v.RedactedRecords, []int64{3}}} {
		recs := parseVectorRecords(t, tc.raws)
		manifest := &ArchiveManifest{
			Protocol: identity.ProtocolDiscourse, Type: "room.archive", RoomID: v.RoomID,
			URL: "https://api.example.com/v1/rooms/" + v.RoomID, GeneratedAt: 1779760800000,
			LastSeq: v.LastSeq, LastHash: v.LastHash,
		}
		lim := DefaultLimits()
		rep, err := VerifyArchive(manifest, recs, nil, &ArchiveOptions{Limits: &lim})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.OK() {
			t.Fatalf("problems: %+v", rep.Problems)
		}
		if !slices.Equal(rep.Redacted, tc.redacted) {
			t.Errorf("redacted %v", rep.Redacted)
		}
		if rep.Status != RoomEnded || rep.Room.EndTime != 1779760800000 {
			t.Errorf("status %s end %d", rep.Status, rep.Room.EndTime)
		}
	}
}

func TestVectorFreshnessClasses(t *testing.T) {
	v := loadVectors(t)
	var mats []*materialized
	for i, raw := range v.Freshness.Registry {
		val, err := identity.ParseStrict(raw)
		if err != nil {
			t.Fatal(err)
		}
		d, err := ParseDeclaration(val, "")
		if err != nil {
			t.Fatal(err)
		}
		m, err := (*Rules)(nil).materialize(t.Context(), d, "/"+itoa(i), Limits{})
		if err != nil {
			t.Fatal(err)
		}
		mats = append(mats, m)
	}
	reg, err := declare(Registry{}, mats, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	var headBound []string
	for typ, want := range v.Freshness.Classes {
		got, err := ClassOf(typ, reg)
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		switch want {
		case "message", "control":
			// The vectors name the kind of head-bound types.
			if got != ClassHeadBound {
				t.Errorf("%s: class %s, want head-bound (%s)", typ, got, want)
			}
			if IsBuiltin(typ) {
				if q, _ := QuotaClass(typ, reg); string(q) != want {
					t.Errorf("%s: quota class %s, want %s", typ, q, want)
				}
			} else if def, _ := reg.Lookup(typ); string(def.Kind) != want {
				t.Errorf("%s: kind %s, want %s", typ, def.Kind, want)
			}
		default:
			if string(got) != want {
				t.Errorf("%s: class %s, want %s", typ, got, want)
			}
		}
		if got.BaseMustBeHead() {
			headBound = append(headBound, typ)
		}
		if got.AdvancesHead() != (want != "signal") {
			t.Errorf("%s: AdvancesHead = %v", typ, got.AdvancesHead())
		}
	}
	slices.Sort(headBound)
	wantHB := slices.Clone(v.Freshness.HeadBound)
	slices.Sort(wantHB)
	if !slices.Equal(headBound, wantHB) {
		t.Errorf("head-bound = %v, want %v", headBound, wantHB)
	}
	if _, err := ClassOf(TypeJoinRequest, reg); ErrorCode(err) != CodeInvalidEvent {
		t.Errorf("room.join.request has a class: %v", err)
	}
	if _, err := ClassOf("poll.vote", reg); ErrorCode(err) != CodeTypeNotDefined {
		t.Errorf("undeclared type: %v", err)
	}
}

func TestVectorPatterns(t *testing.T) {
	v := loadVectors(t)
	for _, p := range v.Patterns.Valid {
		if err := CheckPattern(p); err != nil {
			t.Errorf("valid pattern %q rejected: %v", p, err)
		}
	}
	for _, p := range v.Patterns.Invalid {
		if err := CheckPattern(p); err == nil {
			t.Errorf("invalid pattern %q accepted", p)
		}
	}
}
