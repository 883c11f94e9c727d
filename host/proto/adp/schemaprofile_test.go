package adp

import (
	"slices"
	"strings"
	"testing"
)

func TestRegisteredPacks(t *testing.T) {
	ids := RegisteredPackIDs()
	want := []string{"adp:reactions/1.0", "adp:deliberation/1.0", "adp:curation/1.0", "adp:moderation/1.0", "adp:realtime/1.0"}
	if !slices.Equal(ids, want) {
		t.Fatalf("ids %v", ids)
	}
	// Appendix A: kind and default roles of every registered type.
	appendix := map[string]struct {
		kind  Kind
		roles []Role
	}{
		"reaction.create": {KindSignal, []Role{RoleModerator, RoleSpeaker, RoleObserver}},
		"question.create": {KindMessage, []Role{RoleModerator, RoleSpeaker}},
		"proposal.create": {KindMessage, []Role{RoleModerator, RoleSpeaker}},
		"poll.create":     {KindMessage, []Role{RoleModerator, RoleSpeaker}},
		"poll.vote":       {KindSignal, []Role{RoleModerator, RoleSpeaker}},
		"resource.add":    {KindMessage, []Role{RoleModerator, RoleSpeaker}},
		"graph.update":    {KindControl, []Role{RoleModerator}},
		"artifact.create": {KindControl, []Role{RoleModerator}},
		"turn.update":     {KindControl, []Role{RoleModerator}},
		"claim.update":    {KindControl, []Role{RoleModerator}},
		"steer.create":    {KindSignal, []Role{RoleModerator, RoleSpeaker}},
		"session.offer":   {KindSignal, []Role{RoleModerator, RoleSpeaker}},
		"session.answer":  {KindSignal, []Role{RoleModerator, RoleSpeaker}},
		"session.close":   {KindSignal, []Role{RoleModerator, RoleSpeaker}},
	}
	seen := 0
	for _, id := range ids {
		p, ok := RegisteredPack(id)
		if !ok {
			t.Fatalf("pack %s missing", id)
		}
		for _, def := range p.Types {
			seen++
			a, ok := appendix[def.Type]
			if !ok {
				t.Errorf("%s: not in Appendix A", def.Type)
				continue
			}
			if def.Kind != a.kind || !slices.Equal(def.SenderRoles(), a.roles) {
				t.Errorf("%s: kind %s roles %v, want %s %v", def.Type, def.Kind, def.SenderRoles(), a.kind, a.roles)
			}
			if !ValidCustomTypeName(def.Type) {
				t.Errorf("%s: not a custom type name", def.Type)
			}
			if err := CheckTypeSchema(def.Schema, DefaultLimits(), nil); err != nil {
				t.Errorf("%s: schema outside the profile: %v", def.Type, err)
			}
		}
	}
	if seen != len(appendix) {
		t.Errorf("%d registered types, Appendix A lists %d", seen, len(appendix))
	}
	// The bundled copy is the normative file, byte for byte.
	if _, err := ParsePackDocument(RegisteredPacksJSON(), DefaultLimits(), nil); err != nil {
		t.Fatal(err)
	}
}

func TestTypeSchemaProfile(t *testing.T) {
	cases := []struct {
		name   string
		schema obj
		// wantPaths are the error paths, sorted; nil means the schema is
		// accepted.
		wantPaths []string
	}{
		{"plain", obj{"type": "object", "properties": obj{"a": obj{"type": "integer"}}}, nil},
		{"draft 2020-12 $schema", obj{"$schema": Draft202012, "type": "object"}, nil},
		{"local pointer ref", obj{"$defs": obj{"s": obj{"type": "string"}}, "properties": obj{"a": obj{"$ref": "#/$defs/s"}}}, nil},
		{"anchor ref", obj{"$defs": obj{"s": obj{"$anchor": "str", "type": "string"}}, "properties": obj{"a": obj{"$ref": "#str"}}}, nil},
		{"recursive root ref", obj{"type": "object", "properties": obj{"child": obj{"$ref": "#"}}}, nil},
		{"embedded resource with an absolute $id", obj{
			"$defs":      obj{"a": obj{"$id": "https://evil.example/a.json", "$defs": obj{"b": obj{"type": "integer"}}, "$ref": "#/$defs/b"}},
			"properties": obj{"x": obj{"$ref": "#/$defs/a"}},
		}, nil},
		{"keyword-like property names and enum values", obj{
			"properties": obj{"$vocabulary": obj{"type": "string"}, "$ref": obj{"type": "string"}},
			"enum":       arr{obj{"$ref": "https://evil.example/x", "$dynamicRef": "#a"}},
		}, nil},
		{"valid patterns", obj{"pattern": "^[A-Za-z0-9_-]{43}$", "patternProperties": obj{"^x-[a-z]+$": true}}, nil},

		{"$dynamicRef", obj{"$dynamicRef": "#meta"}, []string{"/$dynamicRef"}},
		{"$dynamicAnchor", obj{"$dynamicAnchor": "meta"}, []string{"/$dynamicAnchor"}},
		{"$recursiveRef", obj{"$recursiveRef": "#"}, []string{"/$recursiveRef"}},
		{"$recursiveAnchor", obj{"$recursiveAnchor": true}, []string{"/$recursiveAnchor"}},
		{"$vocabulary", obj{"$vocabulary": obj{}}, []string{"/$vocabulary"}},
		{"banned keyword deep inside", obj{"properties": obj{"a": obj{"items": obj{"allOf": arr{obj{"$dynamicRef": "#x"}}}}}}, []string{"/properties/a/items/allOf/0/$dynamicRef"}},
		{"draft-07 $schema", obj{"$schema": "http://json-schema.org/draft-07/schema#"}, []string{"/$schema"}},
		{"remote $ref", obj{"$ref": "https://evil.example/s.json"}, []string{"/$ref"}},
		{"relative $ref", obj{"properties": obj{"a": obj{"$ref": "other.json#/a"}}}, []string{"/properties/a/$ref"}},
		{"file $ref", obj{"$ref": "file:///etc/passwd"}, []string{"/$ref"}},
		{"unresolvable pointer", obj{"$ref": "#/$defs/missing"}, []string{"/$ref"}},
		{"unresolvable anchor", obj{"$ref": "#nowhere"}, []string{"/$ref"}},
		{"ref into a non-keyword location", obj{"$ref": "#/x", "x": obj{"$dynamicRef": "#a"}}, []string{"/x/$dynamicRef"}},
		{"pattern outside I-Regexp", obj{"properties": obj{"a": obj{"pattern": "\\d+"}}}, []string{"/properties/a/pattern"}},
		{"dot outside a class", obj{"pattern": "a.b"}, []string{"/pattern"}},
		{"category escape", obj{"pattern": "\\p{L}"}, []string{"/pattern"}},
		{"patternProperties key", obj{"patternProperties": obj{"(?i)x": true}}, []string{"/patternProperties/(?i)x"}},
		{"several violations", obj{"$vocabulary": obj{}, "properties": obj{"a": obj{"pattern": "."}, "b": obj{"$ref": "https://x.example"}}}, []string{"/$vocabulary", "/properties/a/pattern", "/properties/b/$ref"}},
		{"not a valid draft 2020-12 schema", obj{"type": 5}, []string{"/type"}},
		{"negative minLength", obj{"minLength": -1}, []string{"/minLength"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckTypeSchema(jsonValue(t, tc.schema), DefaultLimits(), NewSchemaCache(8))
			if tc.wantPaths == nil {
				wantCode(t, err, "")
				return
			}
			wantCode(t, err, CodeInvalidTypeSchema)
			var paths []string
			for _, fe := range AsError(err).FieldErrors() {
				paths = append(paths, fe.Path)
			}
			paths = slices.Compact(paths)
			if !slices.Equal(paths, tc.wantPaths) {
				t.Errorf("paths %v, want %v (%v)", paths, tc.wantPaths, err)
			}
		})
	}

	t.Run("size limit", func(t *testing.T) {
		big := obj{"description": strings.Repeat("d", 17<<10)}
		wantCode(t, CheckTypeSchema(jsonValue(t, big), DefaultLimits(), nil), CodeInvalidTypeSchema)
		wantCode(t, CheckTypeSchema(jsonValue(t, big), VerifierLimits(), nil), "")
	})

	t.Run("not an object", func(t *testing.T) {
		wantCode(t, CheckTypeSchema(true, DefaultLimits(), nil), CodeInvalidTypeSchema)
	})
}

func TestSchemaCache(t *testing.T) {
	c := NewSchemaCache(2)
	schemas := []obj{{"type": "string"}, {"type": "integer"}, {"type": "boolean"}}
	for _, s := range schemas {
		if err := c.ValidatePayload(jsonValue(t, s).(map[string]any), "x"); err == nil && s["type"] != "string" {
			t.Errorf("%v accepted a string", s)
		}
	}
	if c.Len() != 2 {
		t.Fatalf("cache holds %d", c.Len())
	}
	// Equal schemas share an entry whatever their member order.
	a := jsonValue(t, obj{"type": "object", "required": arr{"a"}}).(map[string]any)
	d1, _ := SchemaDigest(a)
	d2, _ := SchemaDigest(map[string]any{"required": []any{"a"}, "type": "object"})
	if d1 != d2 {
		t.Fatal("digest depends on member order")
	}
}

func TestValidateKernel(t *testing.T) {
	status := jsonValue(t, obj{"state": "drafting", "seen_seq": 3, "expires_at": 10})
	if err := ValidateKernel("agentStatusInput", status); err != nil {
		t.Fatalf("valid status input rejected: %v", err)
	}
	err := ValidateKernel("agentStatusInput", jsonValue(t, obj{"state": "", "bogus": 1}))
	wantCode(t, err, CodeInvalidRequest)
	if fe := AsError(err).FieldErrors(); len(fe) < 2 {
		t.Fatalf("want every violation listed, got %v", fe)
	}
	// Precompiled definitions work the same way.
	if err := ValidateKernel("reasonPayload", jsonValue(t, obj{"reason": "x"})); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"noSuchDefinition", "agentStatus/properties", "", "../x"} {
		if err := ValidateKernel(bad, status); err == nil || ErrorCode(err) != "" {
			t.Fatalf("ValidateKernel(%q) = %v, want a plain error", bad, err)
		}
	}
}
