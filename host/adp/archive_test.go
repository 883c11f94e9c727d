package adp

import (
	"encoding/json"
	"slices"
	"testing"

	"apconnect/host/identity"
)

func manifestFor(f *fixture) *ArchiveManifest {
	last := f.records[len(f.records)-1]
	return &ArchiveManifest{
		Protocol: identity.ProtocolDiscourse, Type: "room.archive", RoomID: testRoom,
		URL: testHost + "/v1/rooms/" + testRoom, GeneratedAt: tEnd + 1000,
		LastSeq: last.Seq, LastHash: last.Hash,
	}
}

// cloneRecords deep-copies records through their JSON form.
func cloneRecords(t *testing.T, recs []*Record) []*Record {
	t.Helper()
	out := make([]*Record, len(recs))
	for i, r := range recs {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if out[i], err = ParseRecord(b); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestVerifyArchive(t *testing.T) {
	const url = "https://packs.example/triage-1.0.json"
	doc := triagePack(t)
	f := busyRoom(t)
	f.rules.Packs = StaticPacks{url: doc}
	f.must("creator", TypeTypeDefine, obj{"pack": url, "digest": PackDigest(doc)})
	f.must("alice", "triage.label", obj{"label": "bug"})
	f.must("creator", TypeRoomClose, obj{})
	docs := map[string][]byte{url: doc}

	t.Run("clean", func(t *testing.T) {
		rep, err := VerifyArchive(manifestFor(f), f.records, docs, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !rep.OK() {
			t.Fatalf("problems %+v", rep.Problems)
		}
		if len(rep.Redacted) != 1 || rep.Status != RoomEnded || rep.LastSeq != int64(len(f.records)) {
			t.Fatalf("report %+v", rep)
		}
		// Host limits can be applied too.
		lim := DefaultLimits()
		rep, _ = VerifyArchive(manifestFor(f), f.records, docs, &ArchiveOptions{Limits: &lim})
		if !rep.OK() {
			t.Fatalf("problems under host limits %+v", rep.Problems)
		}
	})

	t.Run("missing pack document", func(t *testing.T) {
		rep, _ := VerifyArchive(manifestFor(f), f.records, nil, nil)
		codes := problemCodes(rep)
		if !slices.Contains(codes, CodePackUnavailable) || !slices.Contains(codes, CodeTypeNotDefined) {
			t.Fatalf("problems %+v", rep.Problems)
		}
	})

	t.Run("every problem is reported", func(t *testing.T) {
		recs := cloneRecords(t, f.records)
		n := len(recs)
		recs[2].AcceptedAt++                                    // hash no longer matches: seq 3
		recs[4].Envelope.Signature = recs[5].Envelope.Signature // seq 5
		recs = slices.Delete(recs, 7, 8)                        // seq 8 missing
		recs = append(recs, recs[9])                            // a duplicate
		m := manifestFor(f)
		m.LastHash = recs[0].Hash
		rep, err := VerifyArchive(m, recs, docs, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := []Problem{
			{Seq: 0, Code: CodeChainBroken, Pointer: "/last_hash"},
			{Seq: 3, Code: CodeInvalidRecord, Pointer: "/hash"},
			{Seq: 5, Code: CodeInvalidSignature, Pointer: "/envelope/signature"},
			{Seq: 9, Code: CodeChainBroken, Pointer: "/seq"},  // seq 8 missing
			{Seq: 11, Code: CodeChainBroken, Pointer: "/seq"}, // duplicate
		}
		for _, w := range want {
			found := false
			for _, p := range rep.Problems {
				if p.Seq == w.Seq && p.Code == w.Code && p.Pointer == w.Pointer {
					found = true
				}
			}
			if !found {
				t.Errorf("missing problem %+v in %+v", w, rep.Problems)
			}
		}
		if rep.Records != n {
			t.Errorf("records %d", rep.Records)
		}
	})

	t.Run("a record the host should have rejected", func(t *testing.T) {
		g := activeRoom(t, nil)
		// A faulty host accepts an observer's message without Check.
		env := g.event("olga", TypeMessageCreate, obj{"content_type": "text/plain", "content": "sneaky"})
		rec, err := NewRecord(testRoom, g.room.Last.Link(), g.now, env)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.room.Apply(g.rules, rec); err != nil {
			t.Fatal(err)
		}
		g.records = append(g.records, rec)
		g.must("alice", TypeMessageCreate, obj{"content_type": "text/plain", "content": "after"})
		rep := Replay(nil, g.records)
		if len(rep.Problems) != 1 || rep.Problems[0].Seq != rec.Seq || rep.Problems[0].Code != CodePermissionDenied || rep.Problems[0].Pointer != "/envelope/event/actor" {
			t.Fatalf("problems %+v", rep.Problems)
		}
	})

	t.Run("a redacted membership record", func(t *testing.T) {
		recs := cloneRecords(t, f.records)
		recs[1].Envelope, recs[1].Redaction = nil, &Redaction{Hash: recs[1].Envelope.Hash, Type: TypeRoomJoin}
		rep := Replay(nil, recs)
		if !slices.Contains(problemCodes(rep), CodeInvalidRecord) {
			t.Fatalf("problems %+v", rep.Problems)
		}
	})

	t.Run("manifest of another host", func(t *testing.T) {
		m := manifestFor(f)
		m.URL = "https://elsewhere.example/v1/rooms/" + testRoom
		rep, _ := VerifyArchive(m, f.records, docs, nil)
		if len(rep.Problems) != 1 || rep.Problems[0].Code != CodeHostMismatch || rep.Problems[0].Seq != 1 {
			t.Fatalf("problems %+v", rep.Problems)
		}
	})

	t.Run("manifest fields", func(t *testing.T) {
		m := manifestFor(f)
		m.Protocol, m.Type, m.RoomID, m.LastSeq = "x", "y", "other", 2
		rep, _ := VerifyArchive(m, f.records, docs, &ArchiveOptions{HostOrigin: testHost})
		if got := problemCodes(rep); len(got) != 5 {
			t.Fatalf("problems %+v", rep.Problems)
		}
		if _, err := VerifyArchive(nil, f.records, docs, nil); ErrorCode(err) != CodeInvalidRequest {
			t.Fatal(err)
		}
	})

	t.Run("manifest parsing", func(t *testing.T) {
		b, _ := json.Marshal(manifestFor(f))
		m, err := ParseArchiveManifest(b)
		if err != nil || m.LastHash != f.records[len(f.records)-1].Hash {
			t.Fatalf("%v %+v", err, m)
		}
		_, err = ParseArchiveManifest([]byte(`{"protocol":"agent-discourse/1.0","type":"room.archive"}`))
		wantCode(t, err, CodeInvalidRequest)
	})

	t.Run("without genesis signatures still verify", func(t *testing.T) {
		recs := cloneRecords(t, f.records)[1:]
		recs[2].Envelope.Signature = recs[3].Envelope.Signature
		rep := Replay(nil, recs)
		if len(rep.Problems) != 2 || rep.Problems[0].Code != CodeChainBroken || rep.Problems[1].Code != CodeInvalidSignature || rep.Problems[1].Seq != 4 {
			t.Fatalf("problems %+v", rep.Problems)
		}
		if rep.Room != nil {
			t.Fatal("a room without genesis")
		}
	})

	t.Run("empty", func(t *testing.T) {
		if rep := Replay(nil, nil); rep.OK() {
			t.Fatal("an empty archive verified")
		}
	})
}

func problemCodes(rep *ArchiveReport) []string {
	var out []string
	for _, p := range rep.Problems {
		out = append(out, p.Code)
	}
	return out
}
