package discourse

import (
	"apconnect/host/engine"
	"apconnect/host/proto/adp"
)

// Error codes of the Discourse module. Errors from hosts and from the ADP
// rules keep their protocol code (room_head_mismatch, permission_denied,
// payload_schema_violation, …) and data; the engine's codes
// (invalid_input, host_not_allowed, …) are engine.Code….
const (
	// CodeAmbiguousRoom: the room id is known on more than one host and no
	// host was given.
	CodeAmbiguousRoom = "ambiguous_room"
	// CodeRoomNotOpen: the room is not known locally and no host says
	// where it is; open it with agent_protocols_room_open.
	CodeRoomNotOpen = "room_not_open"
	// CodeDraftNotFound: no held draft has that id.
	CodeDraftNotFound = "draft_not_found"
	// CodeMemberNotFound: the room has no such member.
	CodeMemberNotFound = "member_not_found"
	// CodeRoleMismatch: a join completion asked for another role than the
	// one the join request was approved with.
	CodeRoleMismatch = "role_mismatch"
	// CodeVerificationFailed: the room is marked as failing verification;
	// nothing is applied or written until a clean resync (refresh).
	CodeVerificationFailed = "verification_failed"
	// CodePluginFailed: a plugin tool failed (trap, timeout, refused
	// output, its own error); data.plugin names the plugin and
	// data.plugin_code says how.
	CodePluginFailed = "plugin_failed"
	// CodeTypeNotDefined: schema_get or room_watch named an event type the
	// room (or protocol) does not define.
	CodeTypeNotDefined = adp.CodeTypeNotDefined
)

// SessionID identifies the MCP session a call comes from.
type SessionID = engine.SessionID

// ValidRoomID reports whether id is a syntactically valid room id (ADP 6.1).
func ValidRoomID(id string) bool { return adp.ValidRoomID(id) }
