package mcpserver

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"apconnect/host/toolcatalog"
)

const (
	testRoom  = "d8ftedhpqhsusbg001tg"
	testAgent = "did:agent:6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0iw"
	testHash  = "cJg9aS9kgYX-vm1vpgdjCuaGSffm_EW5RoAJbAbk-ts"
	testHost  = "https://api.al.ink"
)

// minimalArgs holds, per tool, the smallest valid arguments: exactly the
// required fields.
var minimalArgs = map[string]string{
	"identity_current":    `{}`,
	"hosts_list":          `{}`,
	"rooms_search":        `{"host":"` + testHost + `"}`,
	"rooms_list":          `{}`,
	"room_open":           `{"host":"` + testHost + `","room_id":"` + testRoom + `"}`,
	"room_state":          `{"room_id":"` + testRoom + `"}`,
	"room_members_list":   `{"room_id":"` + testRoom + `"}`,
	"room_member_get":     `{"room_id":"` + testRoom + `","agent_id":"` + testAgent + `"}`,
	"agent_status_list":   `{"room_id":"` + testRoom + `"}`,
	"agent_status_get":    `{"room_id":"` + testRoom + `","agent_id":"` + testAgent + `"}`,
	"agent_status_set":    `{"room_id":"` + testRoom + `","state":"drafting"}`,
	"room_timeline":       `{"room_id":"` + testRoom + `"}`,
	"room_mark_read":      `{"room_id":"` + testRoom + `","through_seq":42}`,
	"inbox_next":          `{}`,
	"inbox_ack":           `{"ids":["inbox_01J8ZM7A3G2T9B4Q6X8R0N1P2Q"],"action":"handled"}`,
	"drafts_list":         `{}`,
	"draft_get":           `{"draft_id":"draft_d8ftedhpqhsusbg001tg_1"}`,
	"draft_commit":        `{"draft_id":"draft_d8ftedhpqhsusbg001tg_1","action":"stay_silent"}`,
	"draft_drop":          `{"draft_id":"draft_d8ftedhpqhsusbg001tg_1"}`,
	"profile_update":      `{"profile_service":"https://profiles.example.com","profile":{"name":"ResearchAgent-v3"}}`,
	"room_create":         `{"host":"` + testHost + `","topic":"Multi-agent code review strategy","visibility":"public","start_time":1779757200000,"end_time":1779760800000}`,
	"room_join":           `{"room_id":"` + testRoom + `","role":"speaker"}`,
	"room_leave":          `{"room_id":"` + testRoom + `"}`,
	"room_send_message":   `{"room_id":"` + testRoom + `","content":"I support this proposal."}`,
	"room_submit_event":   `{"room_id":"` + testRoom + `","type":"reaction.create","payload":{"emoji":"+1"}}`,
	"join_requests_list":  `{"room_id":"` + testRoom + `"}`,
	"join_request_review": `{"room_id":"` + testRoom + `","request_id":"` + testHash + `","decision":"reject"}`,
	"services_list":       `{}`,
	"profiles_get":        `{}`,
	"profile_history":     `{}`,
	"schema_get":          `{"protocol":"agent-discourse/1.0"}`,
	"room_archive":        `{"room_id":"` + testRoom + `"}`,
	"room_watch":          `{"room_id":"` + testRoom + `"}`,
	"principal_resolve":   `{"url":"https://example.com/p"}`,
	"delegation_check":    `{"principal_id":"https://example.com/p","audience":"https://app.example"}`,
	"delegations_list":    `{}`,
	"delegation_grant":    `{"id":"del-1","principal_id":"https://example.com/p","subject":"` + testAgent + `","scopes":["review"],"audiences":["https://app.example"]}`,
	"delegation_revoke":   `{"id":"del-1","principal_id":"https://example.com/p"}`,
	"delegation_history":  `{"principal_id":"https://example.com/p","id":"del-1"}`,
	// Agent Mail (issue 21).
	"mail_mailboxes_list":  `{}`,
	"mail_mailbox_publish": `{"routes":["` + testHost + `"]}`,
	"mail_send":            `{"to":"` + testAgent + `/mail/AAECAwQFBgcICQoLDA0ODw?route=` + testHost + `","text":"hi"}`,
	"mail_sync":            `{}`,
	"mail_list":            `{}`,
	"mail_resolve":         `{"agent_id":"` + testAgent + `"}`,
	// Agent Knowledge (issue 22).
	"knowledge_submit": `{"services":["` + testHost + `"],"type":"knowledge.retract","payload":{"target":"` + testHash + `","reason":"Wrong."}}`,
	"knowledge_query":  `{"service":"` + testHost + `"}`,
	"knowledge_get":    `{"service":"` + testHost + `","ids":["` + testHash + `"]}`,
	"knowledge_search": `{"service":"` + testHost + `","text":"cache","mode":"lexical"}`,
	"knowledge_status": `{"service":"` + testHost + `","id":"` + testHash + `"}`,
}

// fullArgs exercise every optional field of the richer tools, with values
// taken from the spec's examples.
var fullArgs = map[string]string{
	"rooms_search": `{"host":"` + testHost + `","status":"active","tag":"research","keyword":"review","creator":"` + testAgent + `",
		"starts_after":0,"ends_before":1779760800000,"language":"en","limit":20,"cursor":"abc"}`,
	"room_timeline": `{"room_id":"` + testRoom + `","host":"` + testHost + `","after_seq":0,"before_seq":100,"limit":50,
		"types":["message.create","poll.vote"],"actors":["` + testAgent + `"],"unread_only":true,"mark_read":true,"refresh":false,"include_records":false}`,
	"room_send_message": `{"room_id":"` + testRoom + `","host":"` + testHost + `","content":"## Proposal","content_type":"text/markdown",
		"mentions":["` + testAgent + `"],"references":["` + testHash + `"],"extra":{"k":1},"base_seq":41,"base_hash":"` + testHash + `","on_head_mismatch":"send_anyway"}`,
	"room_create": `{"host":"` + testHost + `","topic":"Review","visibility":"restricted","start_time":1779757200000,"end_time":1779760800000,
		"agenda":"Compare workflows.","guidance":"Cite sources.","tags":["code-review","multi-agent"],"language":"en",
		"policy":{"invites":{"` + testAgent + `":"moderator"},"open_roles":["speaker","observer"],"max_speakers":20,"extra":{}},
		"types":[{"use":"adp:reactions/1.0"},{"type":"review.finding","kind":"message","title":"Finding","schema":{"type":"object"}}],"extra":{}}`,
	"agent_status_set": `{"room_id":"` + testRoom + `","state":"drafting","summary":"Preparing a response.","seen_seq":42,"seen_hash":"` + testHash + `",
		"claim_id":"ticket-123","activity":"reviewing","expires_at":1779754000000,"extra":{}}`,
	"inbox_next":          `{"room_id":"` + testRoom + `","host":"` + testHost + `","kinds":["room.mention","room.turn.assigned"],"limit":10,"wait_ms":30000,"claim":true}`,
	"inbox_ack":           `{"ids":["a","b"],"action":"defer","defer_until":1779754000000}`,
	"room_join":           `{"room_id":"` + testRoom + `","host":"` + testHost + `","role":"speaker","perspective":"security reviewer","reason":"I review signatures.","request_id":"` + testHash + `","extra":{}}`,
	"join_request_review": `{"room_id":"` + testRoom + `","host":"` + testHost + `","request_id":"` + testHash + `","decision":"approve","role":"speaker","reason":"relevant expertise"}`,
	"draft_commit": `{"draft_id":"d1","action":"revise","content":"Option B.","content_type":"text/plain","mentions":[],"references":[],"extra":{},
		"type":"review.finding","payload":{"severity":"low"},"base_seq":44,"base_hash":"` + testHash + `","on_head_mismatch":"hold"}`,
	"rooms_list": `{"scope":"public","host":"` + testHost + `","status":"active","tag":"research","keyword":"review","creator":"` + testAgent + `",
		"starts_after":0,"ends_before":1779760800000,"language":"en","limit":20,"cursor":"abc"}`,
	"room_state":        `{"room_id":"` + testRoom + `","host":"` + testHost + `","refresh":true,"include_types":false,"subscribe":true}`,
	"room_members_list": `{"room_id":"` + testRoom + `","host":"` + testHost + `","agent_id":"` + testAgent + `","status":"all","role":"speaker","include_profiles":true,"include_recent_activity":true,"limit":500,"cursor":"m1"}`,
	"drafts_list":       `{"room_id":"` + testRoom + `","host":"` + testHost + `","draft_id":"d1","limit":10,"cursor":"d1"}`,
	"services_list":     `{"host":"` + testHost + `","protocol":"agent-discourse/1.0"}`,
	"profiles_get":      `{"profile_service":"https://profiles.example.com","ids":["` + testAgent + `"]}`,
	"profile_history":   `{"profile_service":"https://profiles.example.com","agent_id":"` + testAgent + `","limit":100,"cursor":"c"}`,
	"schema_get":        `{"protocol":"agent-discourse/1.0","type":"poll.vote","room_id":"` + testRoom + `","host":"` + testHost + `"}`,
	"room_archive":      `{"room_id":"` + testRoom + `","host":"` + testHost + `","include_records":false}`,
	"room_watch":        `{"room_id":"` + testRoom + `","host":"` + testHost + `","types":["poll.create","poll.vote"]}`,
	"delegation_check":  `{"principal_id":"https://example.com/p","audience":"` + testAgent + `","subject":"` + testAgent + `","id":"del-1","cursor":"c","limit":100}`,
	"delegations_list":  `{"delegation_service":"https://example.com","status":"revoked","limit":5,"cursor":"c"}`,
	"delegation_grant": `{"id":"del-1","principal_id":"https://example.com/p","subject":"` + testAgent + `","relationship":"employee","scopes":["review"],
		"audiences":["https://app.example","` + testAgent + `"],"constraints":{"max":1},"not_before":1779753700000,"expires_at":1779760800000}`,
	"delegation_revoke":  `{"id":"del-1","principal_id":"https://example.com/p","reason":"left"}`,
	"delegation_history": `{"principal_id":"https://example.com/p","id":"del-1","cursor":"c"}`,
}

func inputSchema(t *testing.T, short string) *toolcatalog.Schema {
	t.Helper()
	s, ok := toolcatalog.InputSchema(pfx + short)
	if !ok {
		t.Fatalf("no input schema for %s", short)
	}
	return s
}

func TestEveryInputAcceptsMinimalExample(t *testing.T) {
	t.Parallel()
	want := strings.Split(strings.ReplaceAll(strings.Join(toolcatalog.Names(), ","), pfx, ""), ",")
	if got := sorted(slices.Collect(maps.Keys(minimalArgs))); !slices.Equal(got, want) {
		t.Fatalf("minimalArgs covers %v", got)
	}
	for short, args := range minimalArgs {
		if err := inputSchema(t, short).ValidateJSON([]byte(args)); err != nil {
			t.Errorf("%s: minimal arguments rejected: %v", short, err)
		}
	}
	for short, args := range fullArgs {
		if err := inputSchema(t, short).ValidateJSON([]byte(args)); err != nil {
			t.Errorf("%s: full arguments rejected: %v", short, err)
		}
	}
}

func TestEveryInputRejectsUnknownField(t *testing.T) {
	t.Parallel()
	for short, args := range minimalArgs {
		withUnknown := strings.TrimSuffix(strings.TrimSpace(args), "}")
		if withUnknown != "{" {
			withUnknown += ","
		}
		withUnknown += `"bogus_field":1}`
		err := inputSchema(t, short).ValidateJSON([]byte(withUnknown))
		ve := asValidationError(t, short, err)
		if len(ve.Issues) != 1 || ve.Issues[0].Path != "/bogus_field" || !strings.HasPrefix(ve.Issues[0].Message, "unknown field") {
			t.Errorf("%s: issues %+v, want one unknown-field issue at /bogus_field", short, ve.Issues)
		}
		if ve.Code() != toolcatalog.ErrCodeInvalidInput {
			t.Errorf("%s: code %q", short, ve.Code())
		}
	}
}

func TestEmptyArgumentsNameEveryMissingField(t *testing.T) {
	t.Parallel()
	for short, st := range seedTools {
		s := inputSchema(t, short)
		for _, empty := range []string{"", "null", "{}", "  "} {
			err := s.ValidateJSON([]byte(empty))
			if len(st.required) == 0 {
				if err != nil {
					t.Errorf("%s(%q): %v", short, empty, err)
				}
				continue
			}
			ve := asValidationError(t, short, err)
			var paths []string
			for _, is := range ve.Issues {
				if is.Message != "required field is missing" {
					t.Errorf("%s: unexpected issue %+v", short, is)
				}
				paths = append(paths, is.Path)
			}
			var want []string
			for _, r := range st.required {
				want = append(want, "/"+r)
			}
			if !slices.Equal(paths, sorted(want)) {
				t.Errorf("%s(%q): issue paths %v, want %v", short, empty, paths, sorted(want))
			}
		}
	}
}

func TestValidationIssues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tool, args string
		want       []toolcatalog.Issue // exact paths; message prefix
	}{
		{"room_timeline", `{"room_id":"r","source":"archive"}`, []toolcatalog.Issue{{Path: "/source", Message: "value must be one of"}}},
		{"room_timeline", `{"room_id":"r","limit":0,"after_seq":-1}`, []toolcatalog.Issue{{Path: "/after_seq", Message: "minimum"}, {Path: "/limit", Message: "minimum"}}},
		{"room_timeline", `{"room_id":"r","limit":1.5}`, []toolcatalog.Issue{{Path: "/limit", Message: "got number, want integer"}}},
		{"room_timeline", `{"room_id":"not a room id"}`, []toolcatalog.Issue{{Path: "/room_id", Message: "'not a room id' does not match pattern"}}},
		{"room_send_message", `{"room_id":"r","content":"x","mentions":["did:agent:short","did:agent:short"]}`,
			[]toolcatalog.Issue{{Path: "/mentions", Message: "items at 0 and 1 are equal"}, {Path: "/mentions/0", Message: "'did:agent:short' does not match pattern"}, {Path: "/mentions/1", Message: "'did:agent:short' does not match pattern"}}},
		{"room_send_message", `{"room_id":"r","content":"x","on_head_mismatch":"force"}`, []toolcatalog.Issue{{Path: "/on_head_mismatch", Message: "value must be one of"}}},
		{"room_send_message", `{"room_id":"r","content":""}`, []toolcatalog.Issue{{Path: "/content", Message: "minLength"}}},
		{"room_state", `{"room_id":"r","host":"http://api.al.ink"}`, []toolcatalog.Issue{{Path: "/host", Message: "'http://api.al.ink' does not match pattern"}}},
		{"room_state", `{"room_id":"r","host":"https://api.al.ink/v1"}`, []toolcatalog.Issue{{Path: "/host", Message: "'https://api.al.ink/v1' does not match pattern"}}},
		{"room_create", `{"host":"https://h.example","topic":"   ","visibility":"public","start_time":1,"end_time":2,"policy":{"open_roles":["moderator"],"bogus":1}}`,
			[]toolcatalog.Issue{{Path: "/policy/bogus", Message: "unknown field"}, {Path: "/policy/open_roles/0", Message: "value must be one of"}, {Path: "/topic", Message: "'   ' does not match pattern"}}},
		{"inbox_ack", `{"ids":[],"action":"handled"}`, []toolcatalog.Issue{{Path: "/ids", Message: "minItems"}}},
		{"profile_update", `{"profile_service":"https://p.example","profile":{"description":"x"}}`, []toolcatalog.Issue{{Path: "/profile/name", Message: "required field is missing"}}},
		{"inbox_next", `{"wait_ms":-1}`, []toolcatalog.Issue{{Path: "/wait_ms", Message: "minimum"}}},
		{"identity_current", `{"x":1}`, []toolcatalog.Issue{{Path: "/x", Message: "unknown field; this tool takes no arguments"}}},
		{"room_leave", `{"room_id":"r","why":"x"}`, []toolcatalog.Issue{{Path: "/why", Message: "unknown field; allowed fields: room_id, host, reason"}}},
		{"room_leave", `[]`, []toolcatalog.Issue{{Path: "", Message: "got array, want object"}}},
		// Strict I-JSON: rejected before schema validation.
		{"room_leave", `{"room_id":"a","room_id":"b"}`, []toolcatalog.Issue{{Path: "/room_id", Message: "duplicate"}}},
		{"room_mark_read", `{"room_id":"r","through_seq":9007199254740993}`, []toolcatalog.Issue{{Path: "/through_seq", Message: ""}}},
		{"room_leave", `{"room_id":"r"`, []toolcatalog.Issue{{Path: "", Message: ""}}},
	}
	for _, tc := range tests {
		err := inputSchema(t, tc.tool).ValidateJSON([]byte(tc.args))
		ve := asValidationError(t, tc.tool, err)
		if len(ve.Issues) != len(tc.want) {
			t.Errorf("%s %s: issues %+v, want %+v", tc.tool, tc.args, ve.Issues, tc.want)
			continue
		}
		for i, w := range tc.want {
			got := ve.Issues[i]
			if got.Path != w.Path || !strings.Contains(got.Message, w.Message) {
				t.Errorf("%s %s: issue %d = %+v, want path %q and message containing %q", tc.tool, tc.args, i, got, w.Path, w.Message)
			}
		}
		if !strings.HasPrefix(ve.Error(), "invalid arguments for "+pfx+tc.tool) {
			t.Errorf("Error() = %q", ve.Error())
		}
		data := ve.Data()
		if data["tool"] != pfx+tc.tool || len(data["issues"].([]toolcatalog.Issue)) != len(tc.want) {
			t.Errorf("Data() = %v", data)
		}
	}
}

func TestValidationErrorMessage(t *testing.T) {
	t.Parallel()
	err := inputSchema(t, "room_timeline").ValidateJSON([]byte(`{"limit":0,"x":1}`))
	want := "invalid arguments for agent_protocols_room_timeline: /limit: minimum: got 0, want 1; " +
		"/room_id: required field is missing; /x: unknown field; allowed fields: room_id, host, after_seq, before_seq, limit, types, actors, unread_only, mark_read, refresh, include_records, source"
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	root := &toolcatalog.ValidationError{Tool: "t", Issues: []toolcatalog.Issue{{Message: "bad"}}}
	if root.Error() != "invalid arguments for t: (arguments): bad" {
		t.Errorf("got %q", root.Error())
	}
}

func asValidationError(t *testing.T, tool string, err error) *toolcatalog.ValidationError {
	t.Helper()
	var ve *toolcatalog.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("%s: error %v (%T), want *toolcatalog.ValidationError", tool, err, err)
	}
	return ve
}

// The spec's own JSON examples (section 4.2 and 4.3) must validate against
// the result shapes they illustrate.
const (
	seedSync = `{"host":"https://api.al.ink","room_id":"d8ftedhpqhsusbg001tg","head_seq":42,
		"head_hash":"QmFzZTY0dXJsLWN1cnJlbnQtcmVjb3JkLWhhc2gwMDA","synced_seq":44,"remote_seq":45,
		"subscribed":true,"unread_count":3,"pending_inbox_count":1}`
	seedMember = `{"agent_id":"` + testAgent + `","role":"speaker","status":"active","is_creator":false,
		"perspective":"security reviewer","joined_seq":12,"left_seq":null,"last_event_seq":41,
		"profile":{"name":"ResearchAgent-v3","description":"Reviews technical proposals.","avatar_url":null},"extra":{}}`
	seedTimelineItem = `{"room_id":"d8ftedhpqhsusbg001tg","seq":42,"event_id":"` + testHash + `","type":"message.create",
		"kind":"message","actor":"` + testAgent + `","created_at":1779753700000,"received_at":1779753700123,
		"summary":"I support this proposal.","content_type":"text/plain","content":"I support this proposal.",
		"mentions":["did:agent:Target-000000000000000000000000000000000000"],"references":[],
		"payload":{"content_type":"text/plain","content":"I support this proposal."}}`
	seedInboxItem = `{"id":"inbox_01J8ZM7A3G2T9B4Q6X8R0N1P2Q","kind":"room.mention","priority":"high",
		"room_id":"d8ftedhpqhsusbg001tg","seq":42,"event_id":"` + testHash + `",
		"actor":"did:agent:Speaker-00000000000000000000000000000000000","created_at":1779753700123,
		"requires_response":true,"deadline":null,"reason":"mentioned",
		"suggested_tools":["agent_protocols_room_send_message"],"message":{"summary":"Can you review the signature section?"}}`
	seedHeldDraft = `{"id":"draft_d8ftedhpqhsusbg001tg_1","room_id":"d8ftedhpqhsusbg001tg","kind":"message",
		"created_at":1779753701123,"base_seq":42,"base_hash":"b2xkLXJvb20taGVhZC1oYXNoLTAwMDAwMDAwMDAwMDA",
		"current_sync":` + seedSync + `,
		"draft":{"room_id":"d8ftedhpqhsusbg001tg","content":"I think option B is safer.","content_type":"text/plain","mentions":[],"references":[],"extra":{}},
		"reason":"room_head_mismatch","options":["revise","send_as_is","stay_silent","send_anyway"]}`
	seedHost = `{"host":"https://api.al.ink","label":"dmsg","allowed":true,"features":["rooms","sse-event-stream","registered-packs"],
		"profile_service":"https://profiles.example.com","last_checked_at":1779753700123}`
	seedTurn = `{"turn_id":"turn_01J8ZM7A3G2T9B4Q6X8R0N1P2Q","speaker":"` + testAgent + `","assigned_seq":41,
		"expires_at":1779754000000,"instruction":"Please respond to the last question.","source_event_id":"` + testHash + `"}`
	testRecord = `{"room_id":"d8ftedhpqhsusbg001tg","seq":43,"pre_hash":"` + testHash + `","hash":"` + testHash + `",
		"accepted_at":1779753700123,"envelope":{"hash":"` + testHash + `","event":{"type":"message.create"},"signature":"sig"}}`
	testRoomView = `{"host":"https://api.al.ink","room_id":"d8ftedhpqhsusbg001tg","status":"active","visibility":"public",
		"topic":"Review","agenda":"","guidance":"Be brief.","creator":"` + testAgent + `","created_at":1,"start_time":1,"end_time":2,
		"tags":[],"language":"en","policy":{},"types":[],"self_member":` + seedMember + `,"members_count":3,
		"active_turn":null,"unread_count":0,"pending_inbox_count":0}`
	testKnowledgeItem = `{"id":"` + testHash + `","type":"knowledge.publish","actor":"` + testAgent + `","created_at":1,"seq":7,"accepted_at":2,
		"payload":{"kind":"observation","title":"t"}}`
	testStatus = `{"room_id":"d8ftedhpqhsusbg001tg","agent_id":"` + testAgent + `","state":"drafting","seen_seq":42,
		"expires_at":1779754000000,"updated_at":1779753700000,"extra":{}}`
)

// testCredential is a credential as a delegation service reads it.
const testCredential = `{"id":"del-1","protocol":"agent-delegation/1.0","principal_id":"https://example.com/p","subject":"` + testAgent + `",
	"scopes":["review"],"audiences":["https://app.example"],"status":"active","controller":"` + testAgent + `","grant_event_id":"` + testHash + `",
	"event_id":"` + testHash + `","accepted_at":1779753700000,"checked_at":1779753700000}`

// delegationResults are result examples of the Delegation tools.
var delegationResults = map[string]string{
	"principal_resolve": `{"principal":{"id":"https://example.com/p","protocol":"agent-delegation/1.0","controllers":[],"updated_at":1},
		"canonical_id":"https://example.com/p","requested_url":"https://example.com/alias","alias":true}`,
	"delegation_check": `{"canonical_id":"https://example.com/p","query_url":"https://example.com/v1/delegations/query",
		"delegations":[{"credential":` + testCredential + `,"verified":true,"usable":false,"reasons":["expired"]}],"complete":false,"next_cursor":"c"}`,
	"delegations_list":   `{"delegations":[` + testCredential + `],"next_cursor":"c"}`,
	"delegation_grant":   `{"credential":` + testCredential + `,"envelope":{"hash":"h","event":{},"signature":"s"}}`,
	"delegation_revoke":  `{"credential":` + testCredential + `,"envelope":{"hash":"h","event":{},"signature":"s"}}`,
	"delegation_history": `{"credential":` + testCredential + `,"records":[{"envelope":{"hash":"h","event":{},"signature":"s"},"accepted_at":1}],"signatures_verified":true}`,
}

const (
	testMailbox = `{"mailbox_id":"AAECAwQFBgcICQoLDA0ODw","address":"a","routes":["https://api.al.ink"],"card_hash":"` + testHash + `","created_at":1,"expires_at":2,"receive_until":3,"max_packet_bytes":262144,"status":"open","unread_count":0,"key_available":true,"pending_routes":[]}`
	testLetter  = `{"direction":"sent","message_id":"m","thread_id":"t","from":"` + testAgent + `","to":"` + testAgent + `","mailbox_id":"AAECAwQFBgcICQoLDA0ODw","created_at":1,"expires_at":2,"parts":[{"media_type":"text/plain","size":2,"text":"hi"}],"delivery":{"status":"queued","last_error":{"route":"https://api.al.ink","code":"unavailable","message":"m"}}}`
)

func TestResultExamplesValidate(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"identity_current":    `{"agent_id":"` + testAgent + `","public_key":"6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0iw","profiles":["https://profiles.example.com"],"hosts":[` + seedHost + `],"sync_mode":"explicit","tools":["agent_protocols_identity_current"]}`,
		"hosts_list":          `{"hosts":[` + seedHost + `]}`,
		"rooms_search":        `{"rooms":[{"room_id":"r","host":"https://api.al.ink","status":"active","topic":"t","tags":[],"role":null,"unread_count":0,"pending_inbox_count":0}],"next_cursor":"c"}`,
		"room_open":           `{"room":` + testRoomView + `,"sync":` + seedSync + `,"active_turn":` + seedTurn + `}`,
		"room_state":          `{"room":` + testRoomView + `,"sync":` + seedSync + `}`,
		"room_members_list":   `{"members":[` + seedMember + `],"sync":` + seedSync + `}`,
		"room_member_get":     `{"member":` + seedMember + `,"recent":[` + seedTimelineItem + `],"sync":` + seedSync + `}`,
		"agent_status_list":   `{"statuses":[` + testStatus + `],"sync":` + seedSync + `}`,
		"agent_status_get":    `{}`,
		"agent_status_set":    `{"status":` + testStatus + `}`,
		"room_timeline":       `{"items":[` + seedTimelineItem + `],"sync":` + seedSync + `,"next_after_seq":42,"unread_count":0,"history":{"source":"local","first_seq":1,"last_seq":44,"truncated":false}}`,
		"room_mark_read":      `{"room_id":"r","read_seq":42,"unread_count":0}`,
		"inbox_next":          `{"items":[` + seedInboxItem + `],"pending_count":1}`,
		"inbox_ack":           `{"acknowledged":["a"],"pending_count":0}`,
		"drafts_list":         `{"drafts":[` + seedHeldDraft + `]}`,
		"draft_get":           `{"draft":` + seedHeldDraft + `,"changes":[` + seedTimelineItem + `],"sync":` + seedSync + `}`,
		"draft_commit":        `{"status":"dropped","draft_id":"d1","pending_count":0}`,
		"draft_drop":          `{"status":"dropped","draft_id":"d1","pending_count":0}`,
		"profile_update":      `{"profile":{"id":"` + testAgent + `","name":"X"},"envelope":{"hash":"h","event":{},"signature":"s"}}`,
		"room_create":         `{"room":` + testRoomView + `,"envelope":{"hash":"h","event":{},"signature":"s"},"sync":` + seedSync + `}`,
		"room_join":           `{"status":"approval_required","join_request":{"id":"` + testHash + `","request":{"hash":"h","event":{},"signature":"s"},"status":"pending","expires_at":1,"reviewed_by":null,"reviewed_at":null,"review_event_id":null}}`,
		"room_leave":          `{"record":` + testRecord + `,"sync":` + seedSync + `}`,
		"room_send_message":   `{"status":"held","reason":"room_head_mismatch","draft":` + seedHeldDraft + `,"changes":[` + seedTimelineItem + `],"sync":` + seedSync + `}`,
		"room_submit_event":   `{"status":"sent","record":` + testRecord + `,"item":` + seedTimelineItem + `,"sync":` + seedSync + `}`,
		"join_requests_list":  `{"join_requests":[{"id":"` + testHash + `","status":"pending"}]}`,
		"join_request_review": `{"record":` + testRecord + `,"sync":` + seedSync + `}`,
		"rooms_list":          `{"rooms":[]}`,
		"services_list":       `{"services":[{"protocol":"agent-discourse/1.0","service":"https://api.al.ink","endpoints":{"rooms":"https://api.al.ink/v1/rooms"}}],"errors":[]}`,
		"profiles_get":        `{"profiles":[{"id":"` + testAgent + `","name":"X","updated_at":1,"event_id":"` + testHash + `"}],"missing":[],"profile_service":"https://profiles.example.com"}`,
		"profile_history":     `{"envelopes":[{"hash":"h","event":{},"signature":"s"}],"profile_service":"https://profiles.example.com","agent_id":"` + testAgent + `"}`,
		"schema_get":          `{"protocol":"agent-profile/1.0","schemas":[{"type":"profile.update","schema":{"$ref":"#/$defs/p","$defs":{"p":{}}}}]}`,
		"room_archive":        `{"manifest":{},"records":[` + testRecord + `],"verified":true,"redacted":[],"state_verified":true,"packs":[],"archive":{"uri":"agent-protocols://rooms/r/archive","records_count":1}}`,
		"room_watch":          `{"types":["poll.vote"],"sync":` + seedSync + `}`,
		// Agent Mail (issue 21).
		"mail_mailboxes_list":  `{"mailboxes":[` + testMailbox + `]}`,
		"mail_mailbox_publish": `{"mailbox":` + testMailbox + `,"published":["https://api.al.ink"],"failed":[{"route":"https://b.example","code":"unavailable","message":"m"}]}`,
		"mail_send":            `{"status":"queued","message":` + testLetter + `}`,
		"mail_sync":            `{"received":[` + testLetter + `],"delivered":[],"expired":[],"queued":1,"errors":[],"pending_inbox_count":1,"synced_at":1}`,
		"mail_list":            `{"messages":[` + testLetter + `],"unread_count":0,"next_cursor":"20"}`,
		"mail_resolve":         `{"agent_id":"` + testAgent + `","mailboxes":[{"address":"a","card":{},"usable":true}],"errors":[]}`,
		// Agent Knowledge (issue 22).
		"knowledge_submit": `{"id":"` + testHash + `","envelope":{"hash":"h","event":{},"signature":"s"},"results":[{"service":"https://k.example","item":` + testKnowledgeItem + `},{"service":"https://l.example","error":{"code":"missing_dependency","message":"m","data":{"missing":["x"]}}}]}`,
		"knowledge_query":  `{"items":[` + testKnowledgeItem + `],"service":"https://k.example","checkpoint":7,"as_of":1,"next_cursor":"7.1.7.d"}`,
		"knowledge_get":    `{"items":[` + testKnowledgeItem + `],"missing":["` + testHash + `"],"service":"https://k.example","checkpoint":7,"as_of":1}`,
		"knowledge_search": `{"hits":[{"item":` + testKnowledgeItem + `}],"ranking":{"mode":"lexical","id":"bm25"},"coverage":{"exhaustive":true,"reasons":[]},"service":"https://k.example","checkpoint":7,"as_of":1}`,
		"knowledge_status": `{"item":` + testKnowledgeItem + `,"complete":true,"status":"active","retractions":[],"successors":[],"assessments":["` + testHash + `"],"service":"https://k.example","checkpoint":7,"as_of":1}`,
	}
	for k, v := range delegationResults {
		tests[k] = v
	}
	if len(tests) != len(toolcatalog.Names()) {
		t.Fatalf("%d result examples for %d tools", len(tests), len(toolcatalog.Names()))
	}
	for short, doc := range tests {
		s, ok := toolcatalog.OutputSchema(pfx + short)
		if !ok || s.IsInput() || s.Tool() != pfx+short {
			t.Fatalf("toolcatalog.OutputSchema(%s) = %v, %v", short, s, ok)
		}
		if err := s.ValidateJSON([]byte(doc)); err != nil {
			t.Errorf("%s: %v", short, err)
		}
	}
}

func TestResultShapesRejectWrongResults(t *testing.T) {
	t.Parallel()
	tests := []struct{ tool, doc, path string }{
		{"room_send_message", `{"status":"sent"}`, "/sync"},
		{"room_send_message", `{"status":"queued","sync":` + seedSync + `}`, "/status"},
		{"room_join", `{"status":"pending"}`, "/status"},
		{"room_timeline", `{"items":[],"sync":` + seedSync + `}`, "/unread_count"},
		{"draft_commit", `{"status":"sent"}`, "/sync"},
		{"draft_commit", `{"status":"dropped"}`, "/draft_id"},
		{"inbox_next", `{"items":[{"id":"x","kind":"room.other","priority":"low","room_id":"r","created_at":1,"requires_response":false}],"pending_count":0}`, "/items/0/kind"},
		{"room_members_list", `{"members":[{"agent_id":"a","role":"speaker","status":"gone","is_creator":false}],"sync":` + seedSync + `}`, "/members/0/status"},
	}
	for _, tc := range tests {
		s, _ := toolcatalog.OutputSchema(pfx + tc.tool)
		err := s.ValidateJSON([]byte(tc.doc))
		ve := asValidationError(t, tc.tool, err)
		if !ve.Output || ve.Code() != toolcatalog.ErrCodeInvalidOutput {
			t.Errorf("%s: Output=%v Code=%s", tc.tool, ve.Output, ve.Code())
		}
		var found bool
		for _, is := range ve.Issues {
			found = found || is.Path == tc.path
		}
		if !found {
			t.Errorf("%s %s: issues %+v, want one at %s", tc.tool, tc.doc, ve.Issues, tc.path)
		}
	}
	// An output schema gets no {} default for empty data.
	s, _ := toolcatalog.OutputSchema(pfx + "room_leave")
	if err := s.ValidateJSON(nil); err == nil {
		t.Error("empty result accepted")
	}
}

func TestValidateValue(t *testing.T) {
	t.Parallel()
	s, _ := toolcatalog.OutputSchema(pfx + "room_mark_read")
	type markRead struct {
		RoomID      string `json:"room_id"`
		ReadSeq     int64  `json:"read_seq"`
		UnreadCount int    `json:"unread_count"`
	}
	if err := s.ValidateValue(markRead{RoomID: "r", ReadSeq: 3}); err != nil {
		t.Error(err)
	}
	if err := s.ValidateValue(map[string]any{"room_id": "r"}); err == nil {
		t.Error("incomplete result accepted")
	}
	if err := s.ValidateValue(json.RawMessage(`{"room_id":"r","read_seq":1,"unread_count":0}`)); err != nil {
		t.Error(err)
	}
	if err := s.ValidateValue([]byte(`{"room_id":"r"}`)); err == nil {
		t.Error("incomplete raw result accepted")
	}
	if err := s.ValidateValue(make(chan int)); err == nil || errors.As(err, new(*toolcatalog.ValidationError)) {
		t.Errorf("unmarshalable value: %v", err)
	}
}
