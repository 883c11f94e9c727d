package knowledge

import (
	"crypto/sha3"
	"strconv"
	"strings"
	"testing"

	"apconnect/host/identity"
)

// The digest is SHA3-256 over the JCS of the query without its cursor,
// defaults filled in: written out by hand here.
func TestQueryDigest(t *testing.T) {
	limit := int64(5)
	q := &Query{Filters: Filters{Type: TypePublish, Language: "EN"}, Limit: &limit, Cursor: "c"}
	canon := `{"after_seq":0,"language":"EN","limit":5,"type":"knowledge.publish"}`
	sum := sha3.Sum256([]byte(canon))
	if got := q.Digest(); got != identity.EncodeBase64URL(sum[:]) {
		t.Fatalf("digest %s of %v", got, q.Binding())
	}
	explicit := &Query{Filters: q.Filters, Limit: &limit, AfterSeq: new(int64)}
	if explicit.Digest() != q.Digest() {
		t.Fatal("explicit defaults change the digest")
	}
	hundred := int64(DefaultQueryLimit)
	if (&Query{Limit: &hundred}).Digest() != (&Query{}).Digest() {
		t.Fatal("an explicit default limit changes the digest")
	}
}

func TestParseCursor(t *testing.T) {
	c := Cursor{Checkpoint: 12, AsOf: tNow, LastSeq: 4, Digest: digestOf("q")}
	back, err := ParseCursor(c.String())
	if err != nil || back != c {
		t.Fatalf("%v %v", back, err)
	}
	for _, bad := range []string{"", "1.2.3", "1.2.3.d.e", "+1.2.3.d", "1..3.d", "1.2.x.d", "12345678901234567.2.3.d"} {
		if _, err := ParseCursor(bad); code(err) != CodeInvalidCursor {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// A service paging with Window and Page returns every matching record once,
// in seq order, and records submitted after the first page stay out.
func TestWindowTraversal(t *testing.T) {
	w := newWorld(t)
	recs := records(w.all())
	for _, limit := range []int64{1, 2, 3, 100} {
		q := &Query{Filters: Filters{Actor: signerOf("alice").AgentID()}, Limit: &limit}
		var got []int64
		current := int64(5) // the first page sees five records
		for page := 0; page < 20; page++ {
			win, err := q.Window(current, tNow+int64(page))
			if err != nil {
				t.Fatalf("limit %d page %d: %v", limit, page, err)
			}
			if win.Checkpoint != 5 || win.AsOf != tNow {
				t.Fatalf("limit %d page %d: scope moved to %d/%d", limit, page, win.Checkpoint, win.AsOf)
			}
			res, next := win.Page(recs[:current], &q.Filters)
			for _, r := range res {
				got = append(got, r.Seq)
			}
			current = int64(len(recs)) // later submissions
			if next == "" {
				break
			}
			q = q.WithCursor(next)
		}
		if want := []int64{1, 2, 3}; !equalInts(got, want) {
			t.Fatalf("limit %d: seqs %v, want %v", limit, got, want)
		}
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestWindowRefusals(t *testing.T) {
	two := int64(2)
	q := &Query{Limit: &two}
	good := Cursor{Checkpoint: 5, AsOf: tNow, LastSeq: 2, Digest: q.Digest()}
	tests := []struct {
		name   string
		q      *Query
		cursor string
		want   string
	}{
		{"good cursor", q, good.String(), "ok"},
		{"other query", &Query{}, good.String(), CodeInvalidCursor},
		{"checkpoint beyond the service", q, Cursor{9, tNow, 2, q.Digest()}.String(), CodeInvalidCursor},
		{"last beyond checkpoint", q, Cursor{5, tNow, 6, q.Digest()}.String(), CodeInvalidCursor},
		{"as_of beyond 2^53", q, "5.9999999999999999.2." + q.Digest(), CodeInvalidCursor},
		{"after_seq above last", &Query{Limit: &two, AfterSeq: ptr[int64](3)}, Cursor{5, tNow, 2, (&Query{Limit: &two, AfterSeq: ptr[int64](3)}).Digest()}.String(), CodeInvalidCursor},
		{"malformed", q, "5." + strconv.FormatInt(tNow, 10) + ".2", CodeInvalidCursor},
		{"digest with a dot", q, good.String() + ".x", CodeInvalidCursor},
	}
	for _, tc := range tests {
		if _, err := tc.q.WithCursor(tc.cursor).Window(5, tNow); code(err) != tc.want {
			t.Errorf("%s: got %v, want %s", tc.name, err, tc.want)
		}
	}
	if _, err := (&Query{AfterSeq: ptr[int64](6)}).Window(5, tNow); code(err) != CodeInvalidRequest {
		t.Errorf("after_seq beyond the checkpoint: %v", err)
	}
	if _, err := (&Query{}).Window(5, -1); code(err) != CodeInvalidRequest {
		t.Errorf("negative clock: %v", err)
	}
	if !strings.HasPrefix(good.String(), "5.") {
		t.Fatal(good.String())
	}
}

func ptr[T any](v T) *T { return &v }
