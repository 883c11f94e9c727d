package adp

import (
	"context"
	"fmt"
	"slices"
	"time"

	"apconnect/host/identity"
	"apconnect/host/text"
)

// createSpec is a checked room.create payload.
type createSpec struct {
	host, topic, agenda, guidance, language string
	visibility                              Visibility
	start, end                              int64
	tags                                    []string
	policy                                  Policy
	extra                                   map[string]any
	types                                   Registry
	imports                                 []*PackImport
}

// parseCreate applies the room.create rules of 8.1 and 8.3 to a payload
// under dialect d: the kernel schema, host binding (hostOrigin "" skips it),
// topic, times and the room duration limits, policy, and the type
// declarations with their conflicts, packs and schema profile. limits are the
// host limits (zero limits when materializing an accepted record).
func (r *Rules) parseCreate(d dialect, payload any, limits Limits, hostOrigin string) (*createSpec, error) {
	const at = "/event/payload"
	m, ok := payload.(map[string]any)
	if !ok {
		return nil, newError(CodeInvalidEvent, at, "payload must be a JSON object")
	}
	// The declarations are validated one by one below, so their errors point
	// at the failing declaration instead of a oneOf over both forms.
	shallow := make(map[string]any, len(m))
	for k, v := range m {
		shallow[k] = v
	}
	declsV, hasTypes := m["types"].([]any)
	if hasTypes {
		shallow["types"] = []any{}
	}
	if err := validateKernelAs(d, "roomCreatePayload", shallow, CodeInvalidEvent, at); err != nil {
		return nil, err
	}
	s := &createSpec{
		host:       str(m, "host"),
		topic:      str(m, "topic"),
		agenda:     str(m, "agenda"),
		guidance:   str(m, "guidance"),
		language:   str(m, "language"),
		visibility: Visibility(str(m, "visibility")),
		tags:       stringList(m, "tags"),
	}
	s.start, _ = intMember(m, "start_time")
	s.end, _ = intMember(m, "end_time")
	if len(s.tags) == 0 {
		s.tags = nil
	}
	if err := checkCreateHost(d, s.host, hostOrigin, at+"/host"); err != nil {
		return nil, err
	}
	if isBlankAs(d, s.topic) {
		return nil, newError(CodeInvalidEvent, at+"/topic", "topic must not be blank")
	}
	if err := checkTimes(s.start, s.end, limits, at); err != nil {
		return nil, err
	}
	if pv, ok := m["policy"].(map[string]any); ok {
		p, err := parsePolicy(pv, at+"/policy", s.visibility, d)
		if err != nil {
			return nil, err
		}
		s.policy = p
	}
	if x, ok := m["extra"].(map[string]any); ok {
		s.extra = cloneObject(x)
	}
	var mats []*materialized
	for i, dv := range declsV {
		ptr := fmt.Sprintf("%s/types/%d", at, i)
		decl, err := parseDeclaration(d, dv, ptr)
		if err != nil {
			return nil, err
		}
		mat, err := r.materialize(context.Background(), d, decl, ptr, limits)
		if err != nil {
			return nil, err
		}
		mats = append(mats, mat)
	}
	reg, err := declare(Registry{}, mats, true, limits.MaxTypes)
	if err != nil {
		return nil, err
	}
	s.types = reg
	for _, mat := range mats {
		if mat.imp != nil {
			s.imports = append(s.imports, mat.imp)
		}
	}
	return s, nil
}

// checkTimes applies start_time < end_time and the duration limits.
func checkTimes(start, end int64, limits Limits, at string) error {
	if start >= end {
		return newError(CodeInvalidEvent, at, "start_time (%d) must be before end_time (%d)", start, end)
	}
	d := time.Duration(end-start) * time.Millisecond
	if limits.MinRoomDuration > 0 && d < limits.MinRoomDuration {
		return newError(CodeInvalidEvent, at, "room duration %s is below this host's minimum %s", d, limits.MinRoomDuration)
	}
	if limits.MaxRoomDuration > 0 && d > limits.MaxRoomDuration {
		return newError(CodeInvalidEvent, at, "room duration %s exceeds this host's maximum %s", d, limits.MaxRoomDuration)
	}
	return nil
}

// checkCreateHost applies the host binding of room.create (8.3): host must
// be a serialized HTTPS origin (invalid_event) and, when hostOrigin is set,
// equal it exactly (host_mismatch). The historical dialect also accepts the
// 0f87fee drafts' reading: any https origin that normalizes to hostOrigin.
func checkCreateHost(d dialect, host, hostOrigin, at string) error {
	if !identity.ValidOrigin(host) {
		if d != historical {
			return newError(CodeInvalidEvent, at, "room.create host must be a serialized HTTPS origin (lowercase, no default port, no path)")
		}
		if _, err := identity.NormalizeOrigin(host); err != nil {
			return newError(CodeInvalidEvent, at, "room.create host must be an HTTPS origin")
		}
	}
	if hostOrigin == "" || host == hostOrigin {
		return nil
	}
	if d == historical {
		na, err1 := identity.NormalizeOrigin(host)
		nb, err2 := identity.NormalizeOrigin(hostOrigin)
		if err1 == nil && err2 == nil && na == nb {
			return nil
		}
	}
	return newError(CodeHostMismatch, at, "room.create names host %s, not this host (%s)", text.Truncate(host, 100), text.Truncate(hostOrigin, 100))
}

// contractUpdate is a checked room.update payload: present fields only.
type contractUpdate struct {
	topic, agenda, guidance, language *string
	tags                              *[]string
	policy                            *Policy
	start, end                        *int64
}

// parseUpdate applies the payload rules of 8.4 that do not depend on room
// state under dialect d: the kernel schema (non-empty, updatable fields
// only), topic, and the policy rules of 8.3 for a room of visibility vis.
func parseUpdate(d dialect, payload any, vis Visibility) (*contractUpdate, error) {
	const at = "/event/payload"
	if err := validateKernelAs(d, "roomUpdatePayload", payload, CodeInvalidEvent, at); err != nil {
		return nil, err
	}
	m := payload.(map[string]any)
	u := &contractUpdate{}
	strField := func(key string) *string {
		if v, ok := m[key].(string); ok {
			return &v
		}
		return nil
	}
	u.topic, u.agenda, u.guidance, u.language = strField("topic"), strField("agenda"), strField("guidance"), strField("language")
	if u.topic != nil && isBlankAs(d, *u.topic) {
		return nil, newError(CodeInvalidEvent, at+"/topic", "topic must not be blank")
	}
	if _, ok := m["tags"]; ok {
		tags := stringList(m, "tags")
		u.tags = &tags
	}
	if pv, ok := m["policy"].(map[string]any); ok {
		p, err := parsePolicy(pv, at+"/policy", vis, d)
		if err != nil {
			return nil, err
		}
		u.policy = &p
	}
	if n, ok := intMember(m, "start_time"); ok {
		u.start = &n
	}
	if n, ok := intMember(m, "end_time"); ok {
		u.end = &n
	}
	return u, nil
}

// effectiveTimes returns start_time and end_time after the update.
func (u *contractUpdate) effectiveTimes(r *Room) (int64, int64) {
	start, end := r.StartTime, r.EndTime
	if u.start != nil {
		start = *u.start
	}
	if u.end != nil {
		end = *u.end
	}
	return start, end
}

// applyTo writes the update into the room: present fields replace, empty
// values clear.
func (u *contractUpdate) applyTo(r *Room) {
	if u.topic != nil {
		r.Topic = *u.topic
	}
	if u.agenda != nil {
		r.Agenda = *u.agenda
	}
	if u.guidance != nil {
		r.Guidance = *u.guidance
	}
	if u.language != nil {
		r.Language = *u.language
	}
	if u.tags != nil {
		r.Tags = slices.Clone(*u.tags)
		if len(r.Tags) == 0 {
			r.Tags = nil
		}
	}
	if u.policy != nil {
		r.Policy = u.policy.clone()
	}
	r.StartTime, r.EndTime = u.effectiveTimes(r)
}
