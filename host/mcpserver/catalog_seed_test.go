package mcpserver

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"

	"apconnect/host/toolcatalog"
)

// The tables in this file restate the connector spec
// (shared/seeds/000_4f452237482b62c2.txt, section 4.3) independently of the
// schema files, plus the additions DECISIONS.md takes from the later
// revision: an optional host on every room-scoped tool, extra on
// room_create, unread_count in timeline results and rejected as a
// room_join status. catalog_sdk_test.go holds the other catalog of the
// union (DECISIONS #2), the reference SDK 0.12.6's.

const pfx = "agent_protocols_"

// seedTool is one row of the seed's tool tables: input fields without "?"
// (required) and with "?" (optional), and the result fields without "?".
type seedTool struct {
	required []string
	optional []string
	results  []string // required result fields
	resultsO []string // optional result fields
}

var seedTools = map[string]seedTool{
	"identity_current": {results: []string{"agent_id", "public_key", "profiles", "hosts"}},
	"hosts_list":       {results: []string{"hosts"}},
	"rooms_search": {
		required: []string{"host"},
		optional: []string{"status", "tag", "keyword", "creator", "starts_after", "ends_before", "language", "limit", "cursor"},
		results:  []string{"rooms"}, resultsO: []string{"next_cursor"},
	},
	"rooms_list": {
		optional: []string{"status", "membership", "limit", "cursor"},
		results:  []string{"rooms"}, resultsO: []string{"next_cursor"},
	},
	"room_open": {
		required: []string{"host", "room_id"},
		optional: []string{"subscribe", "refresh"},
		results:  []string{"room", "sync"}, resultsO: []string{"active_turn"},
	},
	"room_state": {
		required: []string{"room_id"},
		optional: []string{"refresh", "include_types"},
		results:  []string{"room", "sync"},
	},
	"room_members_list": {
		required: []string{"room_id"},
		optional: []string{"status", "role", "include_profiles", "limit", "cursor"},
		results:  []string{"members", "sync"}, resultsO: []string{"next_cursor"},
	},
	"room_member_get": {
		required: []string{"room_id", "agent_id"},
		optional: []string{"include_profile", "include_recent_activity"},
		results:  []string{"member", "sync"}, resultsO: []string{"recent"},
	},
	"agent_status_list": {
		required: []string{"room_id"},
		optional: []string{"refresh"},
		results:  []string{"statuses"}, resultsO: []string{"sync"},
	},
	"agent_status_get": {
		required: []string{"room_id", "agent_id"},
		optional: []string{"refresh"},
		resultsO: []string{"status", "sync"},
	},
	"agent_status_set": {
		required: []string{"room_id", "state"},
		optional: []string{"summary", "seen_seq", "seen_hash", "claim_id", "activity", "expires_at", "extra"},
		results:  []string{"status"}, resultsO: []string{"sync"},
	},
	"room_timeline": {
		required: []string{"room_id"},
		optional: []string{"after_seq", "before_seq", "limit", "types", "actors", "unread_only", "mark_read", "refresh", "include_records"},
		results:  []string{"items", "sync", "unread_count"}, resultsO: []string{"next_after_seq"},
	},
	"room_mark_read": {
		required: []string{"room_id", "through_seq"},
		results:  []string{"room_id", "read_seq", "unread_count"},
	},
	"inbox_next": {
		optional: []string{"room_id", "kinds", "limit", "wait_ms", "claim"},
		results:  []string{"items", "pending_count"},
	},
	"inbox_ack": {
		required: []string{"ids", "action"},
		optional: []string{"defer_until"},
		results:  []string{"acknowledged", "pending_count"},
	},
	"drafts_list": {
		optional: []string{"room_id", "limit", "cursor"},
		results:  []string{"drafts"}, resultsO: []string{"next_cursor"},
	},
	"draft_get": {
		required: []string{"draft_id"},
		results:  []string{"draft", "changes", "sync"},
	},
	"draft_commit": {
		required: []string{"draft_id", "action"},
		optional: []string{"content", "content_type", "mentions", "references", "extra", "type", "payload", "base_seq", "base_hash", "on_head_mismatch"},
		// "same write result shape": status always; sync except for the
		// stay_silent outcome, which sends nothing (checked separately).
		results:  []string{"status"},
		resultsO: []string{"record", "item", "draft", "changes", "sync"},
	},
	"draft_drop": {
		required: []string{"draft_id"},
		results:  []string{"status", "draft_id", "pending_count"},
	},
	"profile_update": {
		required: []string{"profile_service", "profile"},
		results:  []string{"profile", "envelope"},
	},
	"room_create": {
		required: []string{"host", "topic", "visibility", "start_time", "end_time"},
		optional: []string{"agenda", "guidance", "tags", "language", "policy", "types", "extra"},
		results:  []string{"room", "envelope", "sync"},
	},
	"room_join": {
		required: []string{"room_id", "role"},
		optional: []string{"host", "perspective", "reason", "request_id", "extra"},
		results:  []string{"status"}, resultsO: []string{"record", "member", "join_request", "sync"},
	},
	"room_leave": {
		required: []string{"room_id"},
		optional: []string{"reason"},
		results:  []string{"record", "sync"},
	},
	"room_send_message": {
		required: []string{"room_id", "content"},
		optional: []string{"content_type", "mentions", "references", "extra", "base_seq", "base_hash", "on_head_mismatch"},
		results:  []string{"status", "sync"}, resultsO: []string{"record", "item", "draft", "changes"},
	},
	"room_submit_event": {
		required: []string{"room_id", "type", "payload"},
		optional: []string{"mentions", "references", "base_seq", "base_hash", "on_head_mismatch"},
		results:  []string{"status", "sync"}, resultsO: []string{"record", "item", "draft", "changes"},
	},
	"join_requests_list": {
		required: []string{"room_id"},
		optional: []string{"status", "limit", "cursor"},
		results:  []string{"join_requests"}, resultsO: []string{"next_cursor"},
	},
	"join_request_review": {
		required: []string{"room_id", "request_id", "decision"},
		optional: []string{"role", "reason"},
		results:  []string{"record", "sync"},
	},
}

// seedHints are exactly the hints the seed's tables list ("readOnlyHint:
// true, openWorldHint: true", ...). Hints the seed leaves out are ours; see
// chosenHints.
var seedHints = map[string]map[string]bool{
	"identity_current":    {"readOnlyHint": true},
	"hosts_list":          {"readOnlyHint": true},
	"rooms_search":        {"readOnlyHint": true, "openWorldHint": true},
	"rooms_list":          {"readOnlyHint": true},
	"room_open":           {"readOnlyHint": false, "idempotentHint": true, "openWorldHint": true},
	"room_state":          {"readOnlyHint": true}, // overridden: see hintOverrides
	"room_members_list":   {"readOnlyHint": true},
	"room_member_get":     {"readOnlyHint": true},
	"agent_status_list":   {"readOnlyHint": true, "openWorldHint": true},
	"agent_status_get":    {"readOnlyHint": true, "openWorldHint": true},
	"agent_status_set":    {"readOnlyHint": false, "openWorldHint": true},
	"room_timeline":       {"readOnlyHint": false, "idempotentHint": true},
	"room_mark_read":      {"readOnlyHint": false, "idempotentHint": true},
	"inbox_next":          {"readOnlyHint": false},
	"inbox_ack":           {"readOnlyHint": false, "idempotentHint": true},
	"drafts_list":         {"readOnlyHint": true},
	"draft_get":           {"readOnlyHint": true},
	"draft_commit":        {"readOnlyHint": false, "openWorldHint": true},
	"draft_drop":          {"readOnlyHint": false, "idempotentHint": true},
	"profile_update":      {"readOnlyHint": false, "openWorldHint": true},
	"room_create":         {"readOnlyHint": false, "openWorldHint": true},
	"room_join":           {"readOnlyHint": false, "openWorldHint": true},
	"room_leave":          {"readOnlyHint": false},
	"room_send_message":   {"readOnlyHint": false},
	"room_submit_event":   {"readOnlyHint": false},
	"join_requests_list":  {"readOnlyHint": true},
	"join_request_review": {"readOnlyHint": false},
}

// hintOverrides are the hints where the union cannot keep the seed's (or
// 0.12.6's) value, with the reason.
var hintOverrides = map[string]map[string]string{
	// 0.12.6's subscribe input (the union's) sets the live-follow flag, and
	// the tool opens rooms on first use: it is not read-only (0.12.6 says
	// false too).
	"room_state": {"readOnlyHint": "subscribe changes local state"},
}

// chosenHints are all four hints as served: {readOnly, destructive,
// idempotent, openWorld}. Where the seed is silent:
//   - destructiveHint is false for reads and for append-only writes; true
//     where a call irreversibly removes or replaces something: draft_drop and
//     draft_commit (stay_silent discards the draft), room_leave (ends your
//     membership), room_submit_event (room.close, room.cancel,
//     room.member.remove), join_request_review (reject is final),
//     profile_update (replaces the published profile).
//   - idempotentHint is true for every read; false for writes that sign a new
//     event or claim new items, so clients never retry them automatically.
//   - openWorldHint is true whenever the tool may contact a host or profile
//     service, including reads that do so on refresh or include_profile(s).
//
// Where 0.12.6 chose differently for a shared tool, catalog_sdk_test.go
// lists the difference and why.
var chosenHints = map[string][4]bool{
	"identity_current":    {true, false, true, false},
	"hosts_list":          {true, false, true, false},
	"rooms_search":        {true, false, true, true},
	"rooms_list":          {true, false, true, true},
	"room_open":           {false, false, true, true},
	"room_state":          {false, false, true, true},
	"room_members_list":   {true, false, true, true},
	"room_member_get":     {true, false, true, true},
	"agent_status_list":   {true, false, true, true},
	"agent_status_get":    {true, false, true, true},
	"agent_status_set":    {false, false, false, true},
	"room_timeline":       {false, false, true, true},
	"room_mark_read":      {false, false, true, false},
	"inbox_next":          {false, false, false, false},
	"inbox_ack":           {false, false, true, false},
	"drafts_list":         {true, false, true, false},
	"draft_get":           {true, false, true, false},
	"draft_commit":        {false, true, false, true},
	"draft_drop":          {false, true, true, false},
	"profile_update":      {false, true, false, true},
	"room_create":         {false, false, false, true},
	"room_join":           {false, false, false, true},
	"room_leave":          {false, true, false, true},
	"room_send_message":   {false, false, false, true},
	"room_submit_event":   {false, true, false, true},
	"join_requests_list":  {true, false, true, true},
	"join_request_review": {false, true, false, true},
	// The 0.12.6 tools: reads are read-only and idempotent, except that
	// profiles_get pins what it verified (readOnlyHint false, as 0.12.6);
	// room_archive keeps the verified archive it read, a local copy like
	// the records room_state keeps, so it stays read-only as in 0.12.6;
	// room_watch replaces the watch list (idempotent) and may open the room
	// from its host (openWorldHint).
	"services_list":   {true, false, true, true},
	"profiles_get":    {false, false, true, true},
	"profile_history": {true, false, true, true},
	"schema_get":      {true, false, true, false},
	"room_archive":    {true, false, true, true},
	"room_watch":      {false, false, true, true},
	// The Delegation tools: reads are read-only and idempotent and reach
	// hosts; grant and revoke sign new events (not idempotent), and a
	// revocation ends a credential's authority at once (destructive).
	"principal_resolve":  {true, false, true, true},
	"delegation_check":   {true, false, true, true},
	"delegations_list":   {true, false, true, true},
	"delegation_history": {true, false, true, true},
	"delegation_grant":   {false, false, false, true},
	"delegation_revoke":  {false, true, false, true},
	// Agent Mail, as 0.12.6 (issue 21).
	"mail_mailboxes_list":  {false, false, true, true},
	"mail_mailbox_publish": {false, false, false, true},
	"mail_send":            {false, false, false, true},
	"mail_sync":            {false, false, false, true},
	"mail_list":            {false, false, true, false},
	"mail_resolve":         {false, false, false, true},
	// The Knowledge tools, as 0.12.6: reads are read-only, idempotent and
	// reach a service; a submission signs a new public event.
	"knowledge_submit": {false, false, false, true},
	"knowledge_query":  {true, false, true, true},
	"knowledge_get":    {true, false, true, true},
	"knowledge_search": {true, false, true, true},
	"knowledge_status": {true, false, true, true},
}

// seedEnums are the value lists the seed gives for inputs ("a" | "b").
// "kinds[]" means the enum of the array's items.
var seedEnums = map[string]map[string][]string{
	"rooms_list":          {"membership": {"member", "creator", "moderator", "pending", "all"}},
	"room_members_list":   {"status": {"active", "left", "removed", "banned", "all"}, "role": {"moderator", "speaker", "observer"}},
	"inbox_ack":           {"action": {"handled", "dismissed", "defer"}},
	"inbox_next":          {"kinds[]": {"room.message.new", "room.mention", "room.turn.assigned", "room.steer", "room.join.requested", "room.join.approved", "room.role.changed", "room.member.removed", "room.state.changed", "room.event.custom"}},
	"draft_commit":        {"action": {"revise", "send_as_is", "stay_silent", "send_anyway"}, "on_head_mismatch": {"hold", "reject", "send_anyway"}},
	"room_create":         {"visibility": {"public", "restricted", "private"}},
	"room_join":           {"role": {"moderator", "speaker", "observer"}},
	"room_send_message":   {"on_head_mismatch": {"hold", "reject", "send_anyway"}},
	"room_submit_event":   {"on_head_mismatch": {"hold", "reject", "send_anyway"}},
	"join_request_review": {"decision": {"approve", "reject"}, "role": {"moderator", "speaker", "observer"}},
}

// seedResultEnums are the result value lists the seed gives.
var seedResultEnums = map[string]map[string][]string{
	"room_join":         {"status": {"joined", "approval_required", "rejected"}},
	"room_send_message": {"status": {"sent", "held", "rejected"}},
	"room_submit_event": {"status": {"sent", "held", "rejected"}},
	"draft_drop":        {"status": {"dropped"}},
}

// The catalog is the union: the seed's 27 tools and the 0.12.6 catalog's
// Profile, Discourse, Delegation, Mail and Knowledge tools, 50 in all (18 shared).
func TestCatalogIsTheUnion(t *testing.T) {
	t.Parallel()
	var want []string
	for short := range seedTools {
		want = append(want, pfx+short)
	}
	if len(want) != 27 {
		t.Fatalf("test table has %d seed tools, want 27", len(want))
	}
	shared := 0
	for _, st := range sdkCatalog(t) {
		if slices.Contains(want, st.Name) {
			shared++
			continue
		}
		want = append(want, st.Name)
	}
	sort.Strings(want)
	if shared != 18 {
		t.Fatalf("union of %d tools with %d shared, want 18 shared", len(want), shared)
	}
	if got := toolcatalog.Names(); !slices.Equal(got, want) {
		t.Fatalf("catalog names\n got %v\nwant %v", got, want)
	}
	tools := Catalog()
	if len(tools) != len(want) {
		t.Fatalf("Catalog() has %d tools", len(tools))
	}
	for i, tool := range tools {
		if tool.Name != want[i] {
			t.Errorf("Catalog()[%d] = %s, want %s (sorted by name)", i, tool.Name, want[i])
		}
		if tool.Title == "" || tool.Description == "" {
			t.Errorf("%s: empty title or description", tool.Name)
		}
	}
}

func TestAnnotationsMatchSeedTable(t *testing.T) {
	t.Parallel()
	for short, want := range seedHints {
		tool, ok := Tool(pfx + short)
		if !ok {
			t.Fatalf("no tool %s", pfx+short)
		}
		got := servedHints(t, tool.Annotations)
		for hint, v := range want {
			if hintOverrides[short][hint] != "" {
				continue
			}
			if got[hint] != v {
				t.Errorf("%s: %s = %v, seed says %v", tool.Name, hint, got[hint], v)
			}
		}
	}
}

func TestAnnotationsAllFourExplicit(t *testing.T) {
	t.Parallel()
	for _, tool := range Catalog() {
		data, err := json.Marshal(tool.Annotations)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		for _, h := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
			if _, ok := m[h].(bool); !ok {
				t.Errorf("%s: %s not serialized explicitly (%s)", tool.Name, h, data)
			}
		}
		short := strings.TrimPrefix(tool.Name, pfx)
		want, ok := chosenHints[short]
		if !ok {
			t.Fatalf("chosenHints has no row for %s", short)
		}
		got := servedHints(t, tool.Annotations)
		if g := [4]bool{got["readOnlyHint"], got["destructiveHint"], got["idempotentHint"], got["openWorldHint"]}; g != want {
			t.Errorf("%s: hints {readOnly, destructive, idempotent, openWorld} = %v, want %v", tool.Name, g, want)
		}
	}
}

func TestInputFieldsMatchSeed(t *testing.T) {
	t.Parallel()
	for short, st := range seedTools {
		info, ok := toolcatalog.Info(pfx + short)
		if !ok {
			t.Fatalf("no tool %s", pfx+short)
		}
		want := slices.Concat(st.required, st.optional)
		if slices.Contains(want, "room_id") && !slices.Contains(want, "host") {
			want = append(want, "host") // DECISIONS: optional host on room-scoped tools
		}
		for _, in := range sdkInputs(t, pfx+short) {
			if !slices.Contains(want, in) {
				want = append(want, in) // DECISIONS #2: the union of the inputs
			}
		}
		if g, w := sorted(info.Inputs), sorted(want); !slices.Equal(g, w) {
			t.Errorf("%s: inputs\n got %v\nwant %v", info.Name, g, w)
		}
		if g, w := sorted(info.Required), sorted(st.required); !slices.Equal(g, w) {
			t.Errorf("%s: required inputs %v, seed says %v", info.Name, g, w)
		}
		if slices.Contains(info.Inputs, "room_id") && short != "room_open" && slices.Contains(info.Required, "host") {
			t.Errorf("%s: host must be optional on a room-scoped tool", info.Name)
		}
	}
}

func TestResultFieldsMatchSeed(t *testing.T) {
	t.Parallel()
	for short, st := range seedTools {
		out := servedSchema(t, pfx+short, false)
		var req []string
		reqAny, _ := out["required"].([]any)
		for _, r := range reqAny {
			req = append(req, r.(string))
		}
		want := slices.Clone(st.results)
		for _, r := range sdkRequiredResults(t, pfx+short) {
			if !slices.Contains(want, r) {
				want = append(want, r) // the union of the result members
			}
		}
		if g, w := sorted(req), sorted(want); !slices.Equal(g, w) {
			t.Errorf("%s: required result fields %v, seed and 0.12.6 say %v", short, g, w)
		}
		props := out["properties"].(map[string]any)
		for _, f := range slices.Concat(st.results, st.resultsO) {
			if _, ok := props[f]; !ok {
				t.Errorf("%s: result field %q not declared", short, f)
			}
		}
	}
}

func TestEnumsMatchSeed(t *testing.T) {
	t.Parallel()
	check := func(tool, field string, want []string, schema map[string]any) {
		t.Helper()
		name, items := strings.CutSuffix(field, "[]")
		p, ok := schema["properties"].(map[string]any)[name].(map[string]any)
		if !ok {
			t.Errorf("%s: no field %s", tool, name)
			return
		}
		if items {
			p = p["items"].(map[string]any)
		}
		var got []string
		for _, v := range p["enum"].([]any) {
			got = append(got, v.(string))
		}
		// The union: the seed's values, and 0.12.6's where it has the
		// same input (checked in catalog_sdk_test.go).
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("%s.%s: enum %v lacks the seed's %q", tool, field, got, w)
			}
		}
	}
	for short, fields := range seedEnums {
		in := servedSchema(t, pfx+short, true)
		for f, want := range fields {
			check(short, f, want, in)
		}
	}
	for short, fields := range seedResultEnums {
		out := servedSchema(t, pfx+short, false)
		for f, want := range fields {
			check(short, f, want, out)
		}
	}
}

func servedHints(t *testing.T, a any) map[string]bool {
	t.Helper()
	data, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]bool
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// servedSchema returns the input or output schema of tool as served.
func servedSchema(t *testing.T, tool string, input bool) map[string]any {
	t.Helper()
	def, ok := Tool(tool)
	if !ok {
		t.Fatalf("no tool %s", tool)
	}
	raw := def.OutputSchema.(json.RawMessage)
	if input {
		raw = def.InputSchema.(json.RawMessage)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func sorted(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}
