package plugin_test

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"apconnect/host/plugin"
)

// evID is a distinct event ID per n.
func evID(n int) string {
	s := strconv.Itoa(n)
	return strings.Repeat("E", 43-len(s)) + s
}

func TestProposalEventIDs(t *testing.T) {
	a, b, c := evID(1), evID(2), evID(3)
	pr := plugin.Proposal{
		Type:       "demo.vote",
		References: []string{c, "not-an-id"},
		Payload: map[string]any{
			"z":    a,
			"list": []any{b, "short", map[string]any{"deep": c, "n": json.Number("7")}},
			"id":   strings.Repeat("x", 44),
		},
	}
	if got := plugin.ProposalEventIDs(pr); !slices.Equal(got, []string{c, b, a}) {
		t.Errorf("ids %v", got)
	}
	// A raw payload is read the same way.
	pr.Payload = json.RawMessage(`{"poll_event_id":"` + a + `","other":"` + b + `"}`)
	pr.References = nil
	if got := plugin.ProposalEventIDs(pr); !slices.Equal(got, []string{b, a}) {
		t.Errorf("raw ids %v", got)
	}
	// At most 128.
	var many []any
	for i := range 200 {
		many = append(many, evID(i))
	}
	pr.Payload = map[string]any{"ids": many}
	if got := plugin.ProposalEventIDs(pr); len(got) != 128 || got[0] != evID(0) {
		t.Errorf("%d ids", len(got))
	}
}

func rec(seq int, typ string, payloadBytes int) plugin.Record {
	return plugin.Record{
		Seq: int64(seq), EventID: evID(seq), Type: typ, Actor: otherID, CreatedAt: 1779753700000, AcceptedAt: 1779753700000 + int64(seq),
		Payload: json.RawMessage(`{"pad":"` + strings.Repeat("p", payloadBytes) + `"}`),
	}
}

func seqs(recs []plugin.Record) []int64 {
	var out []int64
	for _, r := range recs {
		out = append(out, r.Seq)
	}
	return out
}

func TestFillRecords(t *testing.T) {
	var held []plugin.Record
	for i := 1; i <= 10; i++ {
		typ := "demo.poll"
		if i%2 == 0 {
			typ = "other.type"
		}
		held = append(held, rec(i, typ, 10))
	}
	lookup := &plugin.HeldRecords{Records: held, WholeRoom: true}
	rc := &plugin.RoomContext{RoomID: roomID, Records: []plugin.Record{rec(99, "stale.type", 1)}}

	// The plugin's types, and referenced records of any type, in seq
	// order without duplicates; the stale window is replaced.
	scope := plugin.RecordScope{Types: []string{"demo.poll"}, EventIDs: []string{evID(4), evID(5), evID(77)}}
	if err := plugin.FillRecords(ctx(), rc, scope, lookup); err != nil {
		t.Fatal(err)
	}
	if got := seqs(rc.Records); !slices.Equal(got, []int64{1, 3, 4, 5, 7, 9}) || rc.RecordsTruncated {
		t.Errorf("records %v truncated %v", got, rc.RecordsTruncated)
	}
	// A host that does not hold the whole room says so.
	lookup.WholeRoom = false
	if err := plugin.FillRecords(ctx(), rc, scope, lookup); err != nil || !rc.RecordsTruncated {
		t.Errorf("partial: %v %v", rc.RecordsTruncated, err)
	}

	// More records of the plugin's types than fit: the newest, without a
	// gap, and the referenced ones first.
	held = nil
	for i := 1; i <= plugin.MaxContextRecords+10; i++ {
		held = append(held, rec(i, "demo.poll", 10))
	}
	lookup = &plugin.HeldRecords{Records: held, WholeRoom: true}
	scope = plugin.RecordScope{Types: []string{"demo.poll"}, EventIDs: []string{evID(1)}}
	if err := plugin.FillRecords(ctx(), rc, scope, lookup); err != nil {
		t.Fatal(err)
	}
	got := seqs(rc.Records)
	if len(got) != plugin.MaxContextRecords || got[0] != 1 || got[1] != 12 || got[len(got)-1] != int64(plugin.MaxContextRecords+10) || !rc.RecordsTruncated {
		t.Errorf("capped: %d records %v… truncated %v", len(got), got[:3], rc.RecordsTruncated)
	}

	// The payload budget: a referenced record too large to fit is left
	// out; the newest records of the types stop at the first that does
	// not fit.
	big := plugin.ContextPayloadBudget / 2
	held = []plugin.Record{rec(1, "demo.poll", 100), rec(2, "demo.poll", big), rec(3, "other.type", 2*big), rec(4, "demo.poll", big-100), rec(5, "demo.poll", 100)}
	lookup = &plugin.HeldRecords{Records: held, WholeRoom: true}
	scope = plugin.RecordScope{Types: []string{"demo.poll"}, EventIDs: []string{evID(3)}}
	if err := plugin.FillRecords(ctx(), rc, scope, lookup); err != nil {
		t.Fatal(err)
	}
	if got := seqs(rc.Records); !slices.Equal(got, []int64{4, 5}) || !rc.RecordsTruncated {
		t.Errorf("budget: %v truncated %v", got, rc.RecordsTruncated)
	}
}

func TestRecordScopes(t *testing.T) {
	full := loadFull(t, plugin.Limits{})
	if got := full.OwnTypes(); !slices.Equal(got, []string{"demo.bench", "demo.loop", "demo.panic", "demo.poll", "demo.vote"}) {
		t.Errorf("own types %v", got)
	}
	pr := plugin.Proposal{Type: "demo.vote", Actor: selfID, Payload: map[string]any{"poll_event_id": eventB, "option": "yes"}, References: []string{eventA}}
	if s := full.ValidateScope(pr); !slices.Equal(s.Types, full.OwnTypes()) || !slices.Equal(s.EventIDs, []string{eventA, eventB}) {
		t.Errorf("validate scope %+v", s)
	}
	if s := full.ToolScope("echo"); !slices.Equal(s.Types, full.OwnTypes()) || s.EventIDs != nil {
		t.Errorf("tool scope %+v", s)
	}
	if s := full.ToolScope("full_echo"); s.Types != nil {
		t.Errorf("scope of a tool by its MCP name %+v", s)
	}
	reg := plugin.NewRegistry(nil)
	if err := reg.Add(full); err != nil {
		t.Fatal(err)
	}
	if s := reg.ValidateScope(pr); !slices.Equal(s.Types, full.OwnTypes()) || len(s.EventIDs) != 2 {
		t.Errorf("registry validate scope %+v", s)
	}
	if s := reg.ValidateScope(plugin.Proposal{Type: "nobody.validates"}); s.Types != nil || s.EventIDs != nil {
		t.Errorf("scope of an unvalidated type %+v", s)
	}
	if s := reg.ToolScope("full_echo"); !slices.Equal(s.Types, full.OwnTypes()) {
		t.Errorf("registry tool scope %+v", s)
	}
	if s := reg.ToolScope("nobody_tool"); s.Types != nil {
		t.Errorf("scope of an unknown tool %+v", s)
	}

	// A context filled by the rule passes the validate envelope's schema
	// and reaches the plugin.
	r := room()
	lookup := &plugin.HeldRecords{Records: []plugin.Record{pollRecord(7, 1<<52)}, WholeRoom: true}
	if err := plugin.FillRecords(ctx(), r, reg.ValidateScope(pr), lookup); err != nil {
		t.Fatal(err)
	}
	if errs, err := reg.ValidateEvent(ctx(), pr, r); err != nil || len(errs) != 0 {
		t.Errorf("validate with a filled context: %v %v", errs, err)
	}
}
