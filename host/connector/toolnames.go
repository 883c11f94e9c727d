package connector

// ToolNames are the 33 standard tool names, one exported method each: the
// 27 of connector spec 4.3, then the Profile and Discourse tools of the
// reference SDK 0.12.6 catalog that the seed does not have (DECISIONS #2).
var ToolNames = []string{
	"agent_protocols_identity_current",
	"agent_protocols_hosts_list",
	"agent_protocols_rooms_search",
	"agent_protocols_rooms_list",
	"agent_protocols_room_open",
	"agent_protocols_room_state",
	"agent_protocols_room_members_list",
	"agent_protocols_room_member_get",
	"agent_protocols_agent_status_list",
	"agent_protocols_agent_status_get",
	"agent_protocols_agent_status_set",
	"agent_protocols_room_timeline",
	"agent_protocols_room_mark_read",
	"agent_protocols_inbox_next",
	"agent_protocols_inbox_ack",
	"agent_protocols_drafts_list",
	"agent_protocols_draft_get",
	"agent_protocols_draft_commit",
	"agent_protocols_draft_drop",
	"agent_protocols_profile_update",
	"agent_protocols_room_create",
	"agent_protocols_room_join",
	"agent_protocols_room_leave",
	"agent_protocols_room_send_message",
	"agent_protocols_room_submit_event",
	"agent_protocols_join_requests_list",
	"agent_protocols_join_request_review",
	"agent_protocols_services_list",
	"agent_protocols_profiles_get",
	"agent_protocols_profile_history",
	"agent_protocols_schema_get",
	"agent_protocols_room_archive",
	"agent_protocols_room_watch",
}

var standardTools = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range ToolNames {
		m[n] = true
	}
	return m
}()
