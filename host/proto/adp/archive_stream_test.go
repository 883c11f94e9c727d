package adp

import (
	"errors"
	"reflect"
	"slices"
	"testing"
)

// An archive added to an ArchiveStream in chunks of any size reports what
// VerifyArchive reports on the whole, clean or with problems (a bad hash, a
// bad signature, a missing and a repeated record); a record below one added
// before is refused with ErrOutOfOrder.
func TestArchiveStreamMatchesVerifyArchive(t *testing.T) {
	const url = "https://packs.example/triage-1.0.json"
	doc := archivePack(t, url)
	f := busyRoom(t)
	f.rules.Packs = StaticPacks{url: doc}
	f.must("creator", TypeTypeDefine, obj{"pack": url, "digest": archiveDigest(t, doc)})
	f.must("alice", "triage.label", obj{"label": "bug"})
	f.must("creator", TypeRoomClose, obj{})
	docs := map[string][]byte{url: doc}

	bad := cloneRecords(t, f.records)
	bad[2].AcceptedAt++
	bad[4].Envelope.Signature = bad[5].Envelope.Signature
	bad = slices.Insert(slices.Delete(bad, 7, 8), 9, bad[8]) // seq 8 missing, seq 10 twice
	for name, recs := range map[string][]*Record{"clean": f.records, "problems": bad} {
		m := manifestFor(f)
		want, err := VerifyArchive(m, recs, docs, nil)
		if err != nil {
			t.Fatal(err)
		}
		if name == "problems" && len(want.Problems) < 4 {
			t.Fatalf("the tampered archive shows only %+v", want.Problems)
		}
		for _, chunk := range []int{1, 3, len(recs)} {
			st, err := NewArchiveStream(m, docs, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < len(recs); i += chunk {
				if err := st.Add(recs[i:min(i+chunk, len(recs))]); err != nil {
					t.Fatal(err)
				}
			}
			got := st.Report()
			got.Room, want.Room = nil, nil
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s in chunks of %d:\n got %+v\nwant %+v", name, chunk, got, want)
			}
		}
	}
	st, _ := NewArchiveStream(manifestFor(f), docs, nil)
	if err := st.Add(f.records[3:5]); err != nil {
		t.Fatal(err)
	}
	if err := st.Add(f.records[2:3]); !errors.Is(err, ErrOutOfOrder) {
		t.Fatalf("a record below the last added: %v", err)
	}
}
