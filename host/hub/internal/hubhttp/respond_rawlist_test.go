package hubhttp

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"testing"
)

// TestWriteListRaw checks that a list of stored JSON texts is written as
// encoding/json writes the same list: result never null, next_cursor only
// when set.
func TestWriteListRaw(t *testing.T) {
	for _, c := range []struct {
		items []json.RawMessage
		next  string
	}{
		{nil, ""},
		{[]json.RawMessage{}, "c1"},
		{[]json.RawMessage{[]byte(`{"seq":1,"s":"<a & b>"}`)}, ""},
		{[]json.RawMessage{[]byte(`{"seq":1}`), []byte(`{"seq":2}`), []byte(`[1,"x"]`)}, "ZXZlbnRz\"fi/+"},
	} {
		rec := httptest.NewRecorder()
		WriteList(rec, c.items, c.next)
		items := c.items
		if items == nil {
			items = []json.RawMessage{}
		}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(List[json.RawMessage]{Result: items, NextCursor: c.next}); err != nil {
			t.Fatal(err)
		}
		if rec.Body.String() != want.String() {
			t.Errorf("%+v:\n got %q\nwant %q", c, rec.Body.String(), want.String())
		}
		if ct := rec.Header().Get("Content-Type"); ct != "application/json" || rec.Code != 200 {
			t.Errorf("status %d, content type %q", rec.Code, ct)
		}
	}
}
