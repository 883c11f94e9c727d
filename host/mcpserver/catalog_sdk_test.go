package mcpserver

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"apconnect/host/toolcatalog"
	"apconnect/test/catalogcheck"
)

// The other catalog of the union (DECISIONS #2) is the reference SDK
// 0.12.6's, kept in package catalogcheck.

type sdkTool = catalogcheck.SDKTool

// sdkCatalog returns the 0.12.6 tools, all five protocols' (apconnect
// speaks every one).
func sdkCatalog(t testing.TB) []sdkTool {
	t.Helper()
	if n := len(catalogcheck.SDKTools()); n != 41 {
		t.Fatalf("the 0.12.6 catalog has %d tools, want 41", n)
	}
	return catalogcheck.SDKTools()
}

func sdkToolNamed(t testing.TB, name string) (sdkTool, bool) {
	t.Helper()
	return catalogcheck.SDKToolNamed(name)
}

func sdkSchemaMap(t testing.TB, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// sdkInputs returns the input members 0.12.6 declares for a tool (none when
// it does not have the tool).
func sdkInputs(t testing.TB, name string) []string {
	t.Helper()
	return catalogcheck.SDKInputs(name)
}

func stringsOf(v any) []string {
	var out []string
	for _, e := range v.([]any) {
		out = append(out, e.(string))
	}
	return out
}

// sdkRequiredResults returns the result members 0.12.6 requires.
func sdkRequiredResults(t testing.TB, name string) []string {
	st, ok := sdkToolNamed(t, name)
	if !ok {
		return nil
	}
	if r, ok := sdkSchemaMap(t, st.OutputSchema)["required"]; ok {
		return stringsOf(r)
	}
	return nil
}

// sdkHintDiffs are the annotations where apconnect's value differs from
// 0.12.6's for a tool both have, and why. The test fails on any other
// difference, and on an entry here that no longer differs.
var sdkHintDiffs = map[string]map[string]string{
	"agent_protocols_room_members_list":  {"openWorldHint": "include_profiles reads profile services"},
	"agent_protocols_agent_status_list":  {"idempotentHint": "a read: repeating it changes nothing"},
	"agent_protocols_join_requests_list": {"idempotentHint": "a read: repeating it changes nothing"},
	"agent_protocols_inbox_next":         {"idempotentHint": "claim leases the items it returns, so a repeated call returns others"},
	"agent_protocols_room_watch": {
		"idempotentHint": "it replaces the watch list: repeating the call changes nothing more",
		"openWorldHint":  "a room not yet known is opened from its host",
	},
	"agent_protocols_draft_commit":        {"destructiveHint": "stay_silent (drop) discards the draft"},
	"agent_protocols_profile_update":      {"destructiveHint": "it replaces the whole published profile"},
	"agent_protocols_room_submit_event":   {"destructiveHint": "room.close, room.cancel and room.member.remove cannot be undone"},
	"agent_protocols_join_request_review": {"destructiveHint": "a rejection is final"},
	"agent_protocols_delegation_revoke":   {"destructiveHint": "it ends the credential's authority at once"},
}

func TestAnnotationsAgainstSDK(t *testing.T) {
	t.Parallel()
	for _, st := range sdkCatalog(t) {
		tool, ok := Tool(st.Name)
		if !ok {
			t.Errorf("%s: missing from the catalog", st.Name)
			continue
		}
		got := servedHints(t, tool.Annotations)
		for _, h := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
			reason, listed := sdkHintDiffs[st.Name][h]
			switch differs := got[h] != st.Annotations[h]; {
			case differs && !listed:
				t.Errorf("%s: %s = %v, 0.12.6 says %v, and sdkHintDiffs gives no reason", st.Name, h, got[h], st.Annotations[h])
			case !differs && listed:
				t.Errorf("%s: %s now agrees with 0.12.6; drop the sdkHintDiffs entry (%s)", st.Name, h, reason)
			}
		}
	}
}

// Every input 0.12.6 declares is declared, and nothing 0.12.6 lets a client
// omit is required (a client of either catalog must work). The 0.12.6-only
// profile tools take profile_service as optional: it defaults to the first
// configured profile service.
func TestInputsAgainstSDK(t *testing.T) {
	t.Parallel()
	for _, st := range sdkCatalog(t) {
		info, ok := toolcatalog.Info(st.Name)
		if !ok {
			continue
		}
		in := sdkSchemaMap(t, st.InputSchema)
		for _, k := range sdkInputs(t, st.Name) {
			if !slices.Contains(info.Inputs, k) {
				t.Errorf("%s: 0.12.6 input %q is not accepted", st.Name, k)
			}
		}
		var sdkReq []string
		if r, ok := in["required"]; ok {
			sdkReq = stringsOf(r)
		}
		for _, r := range info.Required {
			if !slices.Contains(sdkReq, r) {
				t.Errorf("%s: %q is required, but 0.12.6 clients may omit it", st.Name, r)
			}
		}
		// Enums: every 0.12.6 value is accepted.
		ours := servedSchema(t, st.Name, true)["properties"].(map[string]any)
		for k, v := range in["properties"].(map[string]any) {
			p := v.(map[string]any)
			o, _ := ours[k].(map[string]any)
			if e, ok := p["enum"]; ok {
				checkEnumSuperset(t, st.Name+"."+k, stringsOf(e), o["enum"])
			}
			if items, ok := p["items"].(map[string]any); ok {
				if e, ok := items["enum"]; ok {
					oi, _ := o["items"].(map[string]any)
					checkEnumSuperset(t, st.Name+"."+k+"[]", stringsOf(e), oi["enum"])
				}
			}
		}
	}
}

func checkEnumSuperset(t *testing.T, where string, want []string, got any) {
	t.Helper()
	if got == nil {
		return // not an enum here: any string passes
	}
	have := stringsOf(got)
	for _, w := range want {
		if !slices.Contains(have, w) {
			t.Errorf("%s: 0.12.6 value %q is refused (enum %v)", where, w, have)
		}
	}
}

// Every result member 0.12.6 declares is declared in our output schema too.
func TestResultsAgainstSDK(t *testing.T) {
	t.Parallel()
	for _, st := range sdkCatalog(t) {
		if _, ok := Tool(st.Name); !ok {
			continue
		}
		ours := servedSchema(t, st.Name, false)["properties"].(map[string]any)
		for k := range sdkSchemaMap(t, st.OutputSchema)["properties"].(map[string]any) {
			if _, ok := ours[k]; !ok {
				t.Errorf("%s: 0.12.6 result member %q is not declared", st.Name, k)
			}
		}
		for _, r := range sdkRequiredResults(t, st.Name) {
			if !slices.Contains(stringsOf(servedSchema(t, st.Name, false)["required"]), r) {
				t.Errorf("%s: 0.12.6 requires result member %q; we do not promise it", st.Name, r)
			}
		}
	}
}

// A value written against 0.12.6's input schema for every input, each enum
// value in turn, passes ours: the union of the inputs holds value by value,
// not only by name.
func TestSDKInputValuesPass(t *testing.T) {
	t.Parallel()
	for _, st := range sdkCatalog(t) {
		sch, ok := toolcatalog.InputSchema(st.Name)
		if !ok {
			continue
		}
		in := sdkSchemaMap(t, st.InputSchema)
		base := map[string]any{}
		var req []string
		if r, ok := in["required"]; ok {
			req = stringsOf(r)
		}
		props := in["properties"].(map[string]any)
		for _, r := range req {
			base[r] = sampleOf(st.Name, r, props[r].(map[string]any))[0]
		}
		check := func(args map[string]any) {
			data, _ := json.Marshal(args)
			if err := sch.ValidateJSON(sch.Normalize(data)); err != nil {
				t.Errorf("%s: 0.12.6-valid arguments %s refused: %v", st.Name, data, err)
			}
		}
		check(base)
		for k, v := range props {
			for _, val := range sampleOf(st.Name, k, v.(map[string]any)) {
				args := map[string]any{}
				for bk, bv := range base {
					args[bk] = bv
				}
				args[k] = val
				check(args)
			}
			// 0.12.6 input handling: null and "" stand for omitted.
			if !slices.Contains(req, k) {
				args := map[string]any{}
				for bk, bv := range base {
					args[bk] = bv
				}
				args[k] = nil
				check(args)
			}
		}
	}
}

// statusSamples: 0.12.6 types these status filters as free strings; the
// values a host knows are the ones our enums list.
var statusSamples = map[string][]any{
	"agent_protocols_rooms_list":         {"scheduled", "active", "ended", "cancelled"},
	"agent_protocols_join_requests_list": {"pending", "approved", "rejected", "expired"},
}

func sampleOf(tool, name string, p map[string]any) []any {
	if v, ok := statusSamples[tool]; ok && name == "status" {
		return v
	}
	return sampleFor(name, p)
}

// sampleFor returns realistic values of a 0.12.6 input: every enum value,
// or one value of the declared type shaped like what a client sends.
func sampleFor(name string, p map[string]any) []any {
	if e, ok := p["enum"]; ok {
		return e.([]any)
	}
	switch p["type"] {
	case "boolean":
		return []any{true, false}
	case "integer":
		if strings.HasSuffix(name, "_at") || strings.Contains(name, "time") || strings.HasPrefix(name, "starts") || strings.HasPrefix(name, "ends") {
			return []any{1779753700000}
		}
		if name == "before_seq" || name == "base_seq" || name == "seen_seq" {
			return []any{3}
		}
		if lo, ok := p["minimum"].(float64); ok && lo > 5 {
			return []any{lo}
		}
		return []any{5}
	case "array":
		items, _ := p["items"].(map[string]any)
		if items == nil {
			items = map[string]any{"type": "string"}
		}
		itemName := map[string]string{"ids": "agent_id", "mentions": "agent_id", "actors": "agent_id", "references": "event_id",
			"types": "type", "tags": "tag", "kinds": "kind", "services": "service"}[name]
		if itemName == "" {
			itemName = name
		}
		return []any{[]any{sampleFor(itemName, items)[0]}}
	case "object":
		switch name {
		case "profile":
			return []any{map[string]any{"name": "Reviewer"}}
		case "payload":
			return []any{map[string]any{"reason": "done"}}
		case "parts":
			return []any{map[string]any{"media_type": "text/plain", "data": "aGk"}}
		}
		return []any{map[string]any{}}
	}
	switch name {
	case "room_id":
		return []any{"d8ftedhpqhsusbg001tg"}
	case "host", "profile_service", "service":
		return []any{"https://hub.example"}
	case "agent_id", "creator", "speaker":
		return []any{"did:agent:6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0iw"}
	case "event_id", "base_hash", "seen_hash", "request_id":
		return []any{"cJg9aS9kgYX-vm1vpgdjCuaGSffm_EW5RoAJbAbk-ts"}
	case "type":
		return []any{"poll.vote"}
	case "content_type":
		return []any{"text/markdown"}
	case "language":
		return []any{"en"}
	case "draft_id":
		return []any{"draft_d8ftedhpqhsusbg001tg_1"}
	case "cursor":
		return []any{"c1"}
	}
	return []any{"some text"}
}
