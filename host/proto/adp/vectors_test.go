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
		Registry      []json.RawMessage `json:"registry"`
		Classes       map[string]string `json:"classes"`
		HeadChecked   []string          `json:"head_checked"`
		HeadAdvancing []string          `json:"head_advancing"`
		BaseChecks    []struct {
			Name     string `json:"name"`
			Type     string `json:"type"`
			BaseSeq  int64  `json:"base_seq"`
			Anchored bool   `json:"anchored"`
			HeadSeq  int64  `json:"head_seq"`
			Expected string `json:"expected"`
		} `json:"base_checks"`
	} `json:"freshness"`
	Patterns struct {
		Valid   []string `json:"valid"`
		Invalid []string `json:"invalid"`
	} `json:"patterns"`
	TypeNames struct {
		Valid   []string `json:"valid"`
		Invalid []string `json:"invalid"`
	} `json:"type_names"`
	OpenRoles struct {
		Effective []struct {
			Name       string         `json:"name"`
			Visibility Visibility     `json:"visibility"`
			Policy     map[string]any `json:"policy"`
			Expected   []Role         `json:"expected"`
		} `json:"effective"`
		Invalid []struct {
			Name       string         `json:"name"`
			Visibility Visibility     `json:"visibility"`
			Policy     map[string]any `json:"policy"`
		} `json:"invalid"`
	} `json:"open_roles"`
	PayloadValidation []struct {
		Name   string          `json:"name"`
		Schema json.RawMessage `json:"schema"`
		Value  json.RawMessage `json:"value"`
		Valid  bool            `json:"valid"`
	} `json:"payload_validation"`
	BlankStrings []struct {
		Value string `json:"value"`
		Valid bool   `json:"valid"`
	} `json:"blank_strings"`
	AtomicImport []struct {
		Name        string            `json:"name"`
		Initial     []json.RawMessage `json:"initial"`
		Declaration json.RawMessage   `json:"declaration"`
		Genesis     bool              `json:"genesis"`
		Error       string            `json:"error"`
	} `json:"atomic_import"`
}

// strictValue parses raw JSON as a vector value.
func strictValue(t *testing.T, raw []byte) any {
	t.Helper()
	v, err := identity.ParseStrict(raw)
	if err != nil {
		t.Fatal(err)
	}
	return v
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
			Protocol: Protocol, Type: "room.archive", RoomID: v.RoomID,
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

// materializeAll parses and materializes declarations of the vectors.
func materializeAll(t *testing.T, raws []json.RawMessage) []*materialized {
	t.Helper()
	var mats []*materialized
	for i, raw := range raws {
		d, err := ParseDeclaration(strictValue(t, raw), "")
		if err != nil {
			t.Fatal(err)
		}
		m, err := (*Rules)(nil).materialize(t.Context(), current, d, "/"+itoa(i), Limits{})
		if err != nil {
			t.Fatal(err)
		}
		mats = append(mats, m)
	}
	return mats
}

// vectorRegistry materializes the freshness registry of the vectors.
func vectorRegistry(t *testing.T, v *discourseVectors) Registry {
	t.Helper()
	reg, err := declare(Registry{}, materializeAll(t, v.Freshness.Registry), true, 0)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestVectorFreshnessClasses(t *testing.T) {
	v := loadVectors(t)
	reg := vectorRegistry(t, v)
	var checked, advancing []string
	for typ, want := range v.Freshness.Classes {
		got, err := ClassOf(typ, reg)
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		if string(got) != want {
			t.Errorf("%s: class %s, want %s", typ, got, want)
		}
		if got.HeadChecked() {
			checked = append(checked, typ)
		}
		if got.AdvancesHead() {
			advancing = append(advancing, typ)
		}
	}
	for _, tc := range []struct {
		name      string
		got, want []string
	}{{"head_checked", checked, v.Freshness.HeadChecked}, {"head_advancing", advancing, v.Freshness.HeadAdvancing}} {
		want := slices.Clone(tc.want)
		slices.Sort(want)
		slices.Sort(tc.got)
		if len(want) == 0 || !slices.Equal(tc.got, want) {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, want)
		}
	}
	if _, err := ClassOf(TypeJoinRequest, reg); ErrorCode(err) != CodeInvalidEvent {
		t.Errorf("room.join.request has a class: %v", err)
	}
	if _, err := ClassOf("poll.vote", reg); ErrorCode(err) != CodeTypeNotDefined {
		t.Errorf("undeclared type: %v", err)
	}
}

func TestVectorBaseChecks(t *testing.T) {
	v := loadVectors(t)
	reg := vectorRegistry(t, v)
	if len(v.Freshness.BaseChecks) == 0 {
		t.Fatal("no base_checks")
	}
	hashAt := func(seq int64) string { return "hash-" + itoa(int(seq)) }
	for _, tc := range v.Freshness.BaseChecks {
		class, err := ClassOf(tc.Type, reg)
		if err != nil {
			t.Fatalf("%s: %v", tc.Name, err)
		}
		base := Link{Seq: tc.BaseSeq, Hash: hashAt(tc.BaseSeq)}
		if !tc.Anchored {
			base.Hash = "base-hash"
		}
		head := Link{Seq: tc.HeadSeq, Hash: hashAt(tc.HeadSeq)}
		anchor := func(seq int64) (string, bool) { return hashAt(seq), true }
		err = CheckBase(class, head, 10, base, anchor, false)
		want := tc.Expected
		if want == "ok" {
			want = ""
		}
		if ErrorCode(err) != want {
			t.Errorf("%s: %v, want %s", tc.Name, err, tc.Expected)
		}
	}
}

func TestVectorTypeNames(t *testing.T) {
	v := loadVectors(t)
	for _, s := range v.TypeNames.Valid {
		if !ValidCustomTypeName(s) {
			t.Errorf("valid type name %q refused", s)
		}
		def := obj{"type": s, "kind": "message", "title": "T", "schema": obj{}}
		if _, err := ParseDeclaration(jsonValue(t, def), ""); err != nil {
			t.Errorf("definition of %q refused: %v", s, err)
		}
	}
	for _, s := range v.TypeNames.Invalid {
		if ValidCustomTypeName(s) {
			t.Errorf("invalid type name %q accepted", s)
		}
		def := obj{"type": s, "kind": "message", "title": "T", "schema": obj{}}
		if _, err := ParseDeclaration(jsonValue(t, def), ""); ErrorCode(err) != CodeInvalidEvent {
			t.Errorf("definition of %q: %v, want invalid_event", s, err)
		}
	}
}

func TestVectorOpenRoles(t *testing.T) {
	v := loadVectors(t)
	for _, tc := range v.OpenRoles.Effective {
		policy := map[string]any{}
		if tc.Policy != nil {
			policy = jsonValue(t, tc.Policy).(map[string]any)
		}
		if err := ValidatePolicy(policy, tc.Visibility); err != nil {
			t.Errorf("%s: %v", tc.Name, err)
			continue
		}
		p, err := parsePolicy(policy, "", tc.Visibility, current)
		if err != nil {
			t.Fatal(err)
		}
		got := p.EffectiveOpenRoles(tc.Visibility)
		if !slices.Equal(got, tc.Expected) && !(len(got) == 0 && len(tc.Expected) == 0) {
			t.Errorf("%s: effective open roles %v, want %v", tc.Name, got, tc.Expected)
		}
	}
	for _, tc := range v.OpenRoles.Invalid {
		if err := ValidatePolicy(jsonValue(t, tc.Policy), tc.Visibility); ErrorCode(err) != CodeInvalidEvent {
			t.Errorf("%s: %v, want invalid_event", tc.Name, err)
		}
		payload := createPayload(obj{"visibility": string(tc.Visibility), "policy": tc.Policy})
		env := sign(t, "creator", identity.Event{Type: TypeRoomCreate, CreatedAt: t0, Payload: jsonValue(t, payload)})
		if err := CheckCreate(newRules(), env); ErrorCode(err) != CodeInvalidEvent {
			t.Errorf("%s: room.create: %v, want invalid_event", tc.Name, err)
		}
	}
}

func TestVectorPayloadValidation(t *testing.T) {
	v := loadVectors(t)
	for _, tc := range v.PayloadValidation {
		schema := strictValue(t, tc.Schema).(map[string]any)
		decl := obj{"type": "x.case", "kind": "message", "title": "Case", "schema": schema}
		d, err := ParseDeclaration(jsonValue(t, decl), "")
		if err != nil {
			t.Fatalf("%s: %v", tc.Name, err)
		}
		if _, err := (*Rules)(nil).materialize(t.Context(), current, d, "", DefaultLimits()); err != nil {
			t.Fatalf("%s: schema refused: %v", tc.Name, err)
		}
		err = (*Rules)(nil).schemas().ValidatePayload(d.Def.Schema, strictValue(t, tc.Value))
		if (err == nil) != tc.Valid {
			t.Errorf("%s: %v, want valid=%v", tc.Name, err, tc.Valid)
		}
		if err != nil && ErrorCode(err) != CodePayloadSchemaViolation {
			t.Errorf("%s: code %s", tc.Name, ErrorCode(err))
		}
		// The schema is stored unchanged.
		a, _ := identity.Canonicalize(schema)
		b, _ := identity.Canonicalize(d.Def.Schema)
		if string(a) != string(b) {
			t.Errorf("%s: schema changed to %s", tc.Name, b)
		}
	}
}

func TestVectorBlankStrings(t *testing.T) {
	v := loadVectors(t)
	if len(v.BlankStrings) == 0 {
		t.Fatal("no blank_strings")
	}
	for _, tc := range v.BlankStrings {
		if IsBlank(tc.Value) == tc.Valid {
			t.Errorf("IsBlank(%q) = %v", tc.Value, !tc.Valid)
		}
		want := ""
		if !tc.Valid {
			want = CodeInvalidEvent
		}
		// room.create topic
		env := sign(t, "creator", identity.Event{Type: TypeRoomCreate, CreatedAt: t0, Payload: jsonValue(t, createPayload(obj{"topic": tc.Value}))})
		if err := CheckCreate(newRules(), env); ErrorCode(err) != want {
			t.Errorf("room.create topic %q: %v", tc.Value, err)
		}
		// type title
		if _, err := ParseDeclaration(jsonValue(t, obj{"type": "x.t", "kind": "message", "title": tc.Value, "schema": obj{}}), ""); ErrorCode(err) != want {
			t.Errorf("title %q: %v", tc.Value, err)
		}
		f := activeRoom(t, nil)
		// room.update topic
		if err := f.room.Check(f.rules, f.event("creator", TypeRoomUpdate, obj{"topic": tc.Value}), f.options()); ErrorCode(err) != want {
			t.Errorf("room.update topic %q: %v", tc.Value, err)
		}
		// message.create content_type
		if err := f.room.Check(f.rules, f.event("alice", TypeMessageCreate, obj{"content_type": tc.Value, "content": "x"}), f.options()); ErrorCode(err) != want {
			t.Errorf("content_type %q: %v", tc.Value, err)
		}
	}
}

func TestVectorAtomicImport(t *testing.T) {
	v := loadVectors(t)
	if len(v.AtomicImport) == 0 {
		t.Fatal("no atomic_import")
	}
	for _, tc := range v.AtomicImport {
		initial := materializeAll(t, tc.Initial)
		reg, err := declare(Registry{}, initial, true, 0)
		if err != nil {
			t.Fatal(err)
		}
		before, _ := identity.Canonicalize(reg.Value())
		err = func() error {
			d, err := ParseDeclaration(strictValue(t, tc.Declaration), "")
			if err != nil {
				return err
			}
			m, err := (*Rules)(nil).materialize(t.Context(), current, d, "", Limits{})
			if err != nil {
				return err
			}
			if tc.Genesis {
				_, err = declare(Registry{}, append(slices.Clone(initial), m), true, 0)
			} else {
				_, err = declare(reg, []*materialized{m}, false, 0)
			}
			return err
		}()
		if ErrorCode(err) != tc.Error {
			t.Errorf("%s: %v, want %s", tc.Name, err, tc.Error)
		}
		after, _ := identity.Canonicalize(reg.Value())
		if string(before) != string(after) {
			t.Errorf("%s: the registry changed", tc.Name)
		}
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
