package discourse_test

import (
	"bytes"
	"encoding/json"
	"regexp"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"apconnect/host/connector"
	"apconnect/host/connector/discourse"
	"apconnect/host/connector/profile"
	"apconnect/host/engine"
)

// schema_get's schemas stand alone: each compiles by itself and judges
// payloads as the host does.
func TestSchemaGetSchemasStandAlone(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, 0xA1, "")
	roomID, _ := pollRoom(t, alice, h)
	res := must[*connector.SchemaGetResult](t, "agent_protocols_schema_get")(alice.conn.SchemaGet(ctx, alice.sess,
		connector.SchemaGetInput{Protocol: discourse.Protocol, RoomID: roomID}))
	byType := map[string]*jsonschema.Schema{}
	for i, s := range res.Schemas {
		raw, _ := json.Marshal(s.Schema)
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		c.UseRegexpEngine(ecmaRegexp)
		url := "mem://schema/" + s.Type + ".json"
		if err := c.AddResource(url, doc); err != nil {
			t.Fatal(err)
		}
		sch, err := c.Compile(url)
		if err != nil {
			t.Fatalf("schemas[%d] (%s) does not compile alone: %v", i, s.Type, err)
		}
		byType[s.Type] = sch
	}
	if len(byType) != 12+4 || len(res.RegisteredPacks) != 5 {
		t.Fatalf("%d types, %d packs", len(byType), len(res.RegisteredPacks))
	}
	for _, tc := range []struct {
		typ     string
		payload string
		ok      bool
	}{
		{"room.update", `{"topic":"New topic"}`, true},
		{"room.update", `{"bogus":1}`, false},
		{"message.create", `{"content_type":"text/plain","content":"hi"}`, true},
		{"room.leave", `{"reason":"done"}`, true},
		{"poll.vote", `{"poll_event_id":"cJg9aS9kgYX-vm1vpgdjCuaGSffm_EW5RoAJbAbk-ts","option_ids":["a"]}`, true},
		{"poll.vote", `{"option_ids":["a"]}`, false},
	} {
		v, _ := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(tc.payload)))
		if err := byType[tc.typ].Validate(v); (err == nil) != tc.ok {
			t.Errorf("%s %s: valid %v, want %v (%v)", tc.typ, tc.payload, err == nil, tc.ok, err)
		}
	}
	prof := must[*connector.SchemaGetResult](t, "agent_protocols_schema_get")(alice.conn.SchemaGet(ctx, alice.sess,
		connector.SchemaGetInput{Protocol: profile.Protocol, Type: "profile.update"}))
	if len(prof.Schemas) != 1 || prof.RegisteredPacks != nil {
		t.Fatalf("profile: %+v", prof)
	}
	for _, in := range []connector.SchemaGetInput{
		{Protocol: "agent-unknown/1.0"}, {Protocol: profile.Protocol, RoomID: roomID}, {Protocol: discourse.Protocol, Type: "no.such"},
	} {
		if _, err := alice.conn.SchemaGet(ctx, alice.sess, in); code(err) == "" {
			t.Errorf("%+v: no error", in)
		}
	}
	if _, err := alice.conn.SchemaGet(ctx, alice.sess, connector.SchemaGetInput{Protocol: "agent-unknown/1.0"}); code(err) != engine.CodeUnsupportedProtocol {
		t.Errorf("unknown protocol: %v", err)
	}
}

var uEscape = regexp.MustCompile(`\\u([0-9A-Fa-f]{4})`)

// ecmaRegexp compiles the kernel schema's ECMA-262 patterns (\uXXXX
// escapes) with Go's regexp, as a client's validator would.
func ecmaRegexp(s string) (jsonschema.Regexp, error) {
	return regexp.Compile(uEscape.ReplaceAllString(s, `\x{$1}`))
}
