package profile

import "slices"

// payloadFields is the closed set of top-level payload members, in the
// order of section 4.1: the document's fields minus the two a service
// derives.
var payloadFields = []string{
	"id", "name", "description", "avatar_url", "provider",
	"capabilities", "service_endpoints", "links", "delegations", "extra",
}

// The document fields a service derives from the accepted envelope; a
// payload must not carry them.
const (
	FieldUpdatedAt = "updated_at" // event.created_at of the update
	FieldEventID   = "event_id"   // the update's event ID (envelope hash)
)

// PayloadFields returns the closed list of profile.update payload members
// (section 4.1), in the specification's order.
func PayloadFields() []string { return slices.Clone(payloadFields) }

// IsPayloadField reports whether name is a profile.update payload member.
func IsPayloadField(name string) bool { return slices.Contains(payloadFields, name) }
