package knowledge

import (
	"fmt"
	"slices"
	"testing"
)

func TestValidatePayload(t *testing.T) {
	target := digestOf("t")
	tests := []struct {
		name, typ string
		payload   any
		want      string
		paths     []string
	}{
		{"publication", TypePublish, publication(KindObservation, nil), "ok", nil},
		{"assessment", TypeAssess, assessment(target, VerdictSupports, nil), "ok", nil},
		{"retraction", TypeRetract, retraction(target), "ok", nil},
		{"unknown type", "knowledge.update", m{}, CodeInvalidRequest, nil},
		{"retraction with a license", TypeRetract, m{"target": target, "reason": "r", "license": license}, CodeInvalidEvent, []string{""}},
		{"two members wrong", TypePublish, publication("claim", m{"title": ""}), CodeInvalidEvent, []string{"/kind", "/title"}},
		{"missing context member", TypeAssess, assessment(target, VerdictSupports, m{"context": m{"scope": "s", "conditions": a{}}}), CodeInvalidEvent, []string{"/context"}},
		{"collection without contains", TypePublish, publication(KindCollection, m{"relations": a{m{"relation": RelationExtends, "target": target}}}), CodeInvalidEvent, []string{"/relations"}},
		{"semantic: http evidence", TypePublish, publication(KindObservation, m{"evidence": a{m{"url": "http://x/", "description": "d"}}}), CodeInvalidEvent, []string{"/evidence/0/url"}},
		{"semantic: duplicate profiles", TypePublish, publication(KindObservation, m{"profiles": a{
			m{"profile": m{"url": "https://p/1", "digest": target}, "data": m{}},
			m{"profile": m{"url": "https://p/2", "digest": target}, "data": m{}}}}), CodeInvalidEvent, []string{"/profiles/1/profile/digest"}},
		{"not an object", TypePublish, a{}, CodeInvalidEvent, []string{""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidatePayload(tc.typ, val(t, tc.payload))
			if code(err) != tc.want {
				t.Fatalf("got %v, want %s", err, tc.want)
			}
			var paths []string
			for _, fe := range PayloadErrors(err) {
				if fe.Message == "" {
					t.Errorf("error at %q has no message", fe.Path)
				}
				paths = append(paths, fe.Path)
			}
			if tc.want == CodeInvalidEvent && !slices.Equal(slices.Compact(paths), tc.paths) {
				t.Fatalf("paths %q, want %q", paths, tc.paths)
			}
		})
	}
}

// At most MaxPayloadErrors are listed, and the first is the pointer.
func TestValidatePayloadListsAtMostSixteen(t *testing.T) {
	p := publication(KindObservation, nil)
	tags := a{}
	for i := 0; i < 20; i++ {
		tags = append(tags, fmt.Sprintf("BAD%d", i))
	}
	p["tags"] = tags
	err := ValidatePayload(TypePublish, val(t, p))
	list := PayloadErrors(err)
	if len(list) != MaxPayloadErrors || pointer(err) != list[0].Path {
		t.Fatalf("%d errors, pointer %q, first %q", len(list), pointer(err), list[0].Path)
	}
}
