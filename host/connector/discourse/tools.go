package discourse

import (
	"context"
	"fmt"
	"strings"
	"time"

	"apconnect/host/engine"
	"apconnect/host/text"
)

// The Discourse tools, declared once each: catalog name (the schemas,
// description and needed capability are data in schemas/tools), how the
// MCP layer runs it, the call and the summary line put before its JSON
// result. Summaries are the connector's own words: counts, ids, sequence
// numbers and statuses, never text another agent wrote.

// Tools are the Discourse tools.
func (c *Module) Tools() []engine.Tool {
	var out []engine.Tool
	for _, group := range [][]engine.Tool{c.roomTools(), c.memberTools(), c.statusTools(), c.timelineTools(), c.draftTools(),
		c.writeTools(), c.joinTools(), c.watchTools()} {
		out = append(out, group...)
	}
	return out
}

// roomOf is the progress key of tools whose input names a room.
func roomOf(host, roomID string) (string, string, bool) {
	return host, roomID, roomID != ""
}

// syncProgress reports a room sync's progress while a call runs: done is
// the room's latest verified seq, total the latest seq its host advertised
// (the sync applies history a page at a time, each page in one
// transaction, so the figures come from the local state it writes).
func syncProgress[In any](c *Module, room func(in *In) (host, roomID string, ok bool)) func(in *In) engine.ProgressFunc {
	return func(in *In) engine.ProgressFunc {
		host, roomID, ok := room(in)
		if !ok {
			return nil
		}
		return func(ctx context.Context, final bool) (int64, int64, string, bool) {
			synced, remote, ok, err := c.SyncPosition(ctx, host, roomID)
			if err != nil || !ok {
				return 0, 0, "", false
			}
			total := max(remote, synced)
			if final {
				return synced, total, fmt.Sprintf("room %s synced: %d records verified", roomID, synced), true
			}
			return synced, total, fmt.Sprintf("verified %d of %d records of room %s", synced, total, roomID), true
		}
	}
}

func (c *Module) roomTools() []engine.Tool {
	return []engine.Tool{
		engine.ToolSpec[RoomsSearchInput, *RoomsResult]{
			Name: "agent_protocols_rooms_search",
			Call: func(ctx context.Context, sess SessionID, in *RoomsSearchInput) (*RoomsResult, error) {
				return c.RoomsSearch(ctx, sess, *in)
			},
			Summary: func(in *RoomsSearchInput, r *RoomsResult) string {
				return roomsSummary(r, "found on "+in.Host)
			},
		}.Tool(),
		engine.ToolSpec[RoomsListInput, *RoomsResult]{
			Name: "agent_protocols_rooms_list",
			Call: func(ctx context.Context, sess SessionID, in *RoomsListInput) (*RoomsResult, error) {
				return c.RoomsList(ctx, sess, *in)
			},
			Summary: func(_ *RoomsListInput, r *RoomsResult) string {
				return roomsSummary(r, "known locally")
			},
		}.Tool(),
		engine.ToolSpec[RoomOpenInput, *RoomOpenResult]{
			Name:      "agent_protocols_room_open",
			Serialize: true,
			Call: func(ctx context.Context, sess SessionID, in *RoomOpenInput) (*RoomOpenResult, error) {
				return c.RoomOpen(ctx, sess, *in)
			},
			Summary: func(_ *RoomOpenInput, r *RoomOpenResult) string {
				return roomStateSummary("Opened", &r.Room, r.Sync)
			},
			Progress: syncProgress(c, func(in *RoomOpenInput) (string, string, bool) { return roomOf(in.Host, in.RoomID) }),
		}.Tool(),
		engine.ToolSpec[RoomStateInput, *RoomStateResult]{
			Name:      "agent_protocols_room_state",
			Serialize: true,
			Call: func(ctx context.Context, sess SessionID, in *RoomStateInput) (*RoomStateResult, error) {
				return c.RoomState(ctx, sess, *in)
			},
			Summary: func(_ *RoomStateInput, r *RoomStateResult) string {
				return roomStateSummary("State of", &r.Room, r.Sync)
			},
			Progress: syncProgress(c, func(in *RoomStateInput) (string, string, bool) {
				return in.Host, in.RoomID, in.Refresh
			}),
		}.Tool(),
	}
}

func (c *Module) memberTools() []engine.Tool {
	return []engine.Tool{
		engine.ToolSpec[RoomMembersListInput, *RoomMembersListResult]{
			Name: "agent_protocols_room_members_list",
			Call: func(ctx context.Context, sess SessionID, in *RoomMembersListInput) (*RoomMembersListResult, error) {
				return c.RoomMembersList(ctx, sess, *in)
			},
			Summary: func(_ *RoomMembersListInput, r *RoomMembersListResult) string {
				s := text.Plural(int64(len(r.Members)), "member", "members") + " listed"
				if r.NextCursor != "" {
					s += "; more with cursor " + r.NextCursor
				}
				return s + ". " + syncLine(r.Sync)
			},
		}.Tool(),
		engine.ToolSpec[RoomMemberGetInput, *RoomMemberGetResult]{
			Name: "agent_protocols_room_member_get",
			Call: func(ctx context.Context, sess SessionID, in *RoomMemberGetInput) (*RoomMemberGetResult, error) {
				return c.RoomMemberGet(ctx, sess, *in)
			},
			Summary: func(_ *RoomMemberGetInput, r *RoomMemberGetResult) string {
				return fmt.Sprintf("%s is %s (%s), last activity at seq %s. %s", r.Member.AgentID, r.Member.Role, r.Member.Status,
					seqText(r.Member.LastEventSeq), syncLine(r.Sync))
			},
		}.Tool(),
	}
}

func (c *Module) statusTools() []engine.Tool {
	return []engine.Tool{
		engine.ToolSpec[AgentStatusListInput, *AgentStatusListResult]{
			Name: "agent_protocols_agent_status_list",
			Call: func(ctx context.Context, sess SessionID, in *AgentStatusListInput) (*AgentStatusListResult, error) {
				return c.AgentStatusList(ctx, sess, *in)
			},
			Summary: func(in *AgentStatusListInput, r *AgentStatusListResult) string {
				s := fmt.Sprintf("%s in room %s.", text.Plural(int64(len(r.Statuses)), "current agent status", "current agent statuses"), in.RoomID)
				for _, st := range r.Statuses {
					s += fmt.Sprintf(" %s: %s", st.AgentID, st.State)
					if st.ClaimID != "" {
						s += " (claim " + st.ClaimID + ")"
					}
					s += ";"
				}
				return s + " Statuses are hints, not locks."
			},
		}.Tool(),
		engine.ToolSpec[AgentStatusGetInput, *AgentStatusGetResult]{
			Name: "agent_protocols_agent_status_get",
			Call: func(ctx context.Context, sess SessionID, in *AgentStatusGetInput) (*AgentStatusGetResult, error) {
				return c.AgentStatusGet(ctx, sess, *in)
			},
			Summary: func(in *AgentStatusGetInput, r *AgentStatusGetResult) string {
				if r.Status == nil {
					return fmt.Sprintf("%s has no current status in room %s.", in.AgentID, in.RoomID)
				}
				return fmt.Sprintf("%s is %s in room %s until %s.", r.Status.AgentID, r.Status.State, in.RoomID, msTime(r.Status.ExpiresAt))
			},
		}.Tool(),
		engine.ToolSpec[AgentStatusSetInput, *AgentStatusSetResult]{
			Name: "agent_protocols_agent_status_set",
			// The seen_seq default is the head presented to the session.
			Serialize: true,
			Call: func(ctx context.Context, sess SessionID, in *AgentStatusSetInput) (*AgentStatusSetResult, error) {
				return c.AgentStatusSet(ctx, sess, *in)
			},
			Summary: func(in *AgentStatusSetInput, r *AgentStatusSetResult) string {
				if r.Status.ExpiresAt <= time.Now().UnixMilli() {
					return fmt.Sprintf("Your status in room %s is cleared. Nothing was signed; the room head did not move.", in.RoomID)
				}
				return fmt.Sprintf("Your status in room %s is %s (seen seq %d) until %s. Nothing was signed; the room head did not move.",
					in.RoomID, r.Status.State, r.Status.SeenSeq, msTime(r.Status.ExpiresAt))
			},
		}.Tool(),
	}
}

func (c *Module) timelineTools() []engine.Tool {
	return []engine.Tool{
		engine.ToolSpec[RoomTimelineInput, *RoomTimelineResult]{
			Name:      "agent_protocols_room_timeline",
			Serialize: true,
			Call: func(ctx context.Context, sess SessionID, in *RoomTimelineInput) (*RoomTimelineResult, error) {
				return c.RoomTimeline(ctx, sess, *in)
			},
			Summary: func(in *RoomTimelineInput, r *RoomTimelineResult) string {
				s := text.Plural(int64(len(r.Items)), "timeline item", "timeline items")
				if n := len(r.Items); n > 0 {
					s += fmt.Sprintf(" (seq %d to %d)", r.Items[0].Seq, r.Items[n-1].Seq)
				}
				if r.NextAfterSeq != nil {
					s += fmt.Sprintf("; more after seq %d", *r.NextAfterSeq)
				}
				if in.MarkRead && len(r.Items) > 0 {
					s += "; marked read"
				}
				return s + ". " + syncLine(r.Sync)
			},
			Progress: syncProgress(c, func(in *RoomTimelineInput) (string, string, bool) {
				return in.Host, in.RoomID, in.Refresh
			}),
		}.Tool(),
		engine.ToolSpec[RoomMarkReadInput, *RoomMarkReadResult]{
			Name: "agent_protocols_room_mark_read",
			Call: func(ctx context.Context, sess SessionID, in *RoomMarkReadInput) (*RoomMarkReadResult, error) {
				return c.RoomMarkRead(ctx, sess, *in)
			},
			Summary: func(_ *RoomMarkReadInput, r *RoomMarkReadResult) string {
				return fmt.Sprintf("Room %s is read through seq %d; %s.", r.RoomID, r.ReadSeq, text.Plural(r.UnreadCount, "unread record remains", "unread records remain"))
			},
		}.Tool(),
	}
}

func (c *Module) draftTools() []engine.Tool {
	return []engine.Tool{
		engine.ToolSpec[DraftsListInput, *DraftsListResult]{
			Name: "agent_protocols_drafts_list",
			Call: func(ctx context.Context, sess SessionID, in *DraftsListInput) (*DraftsListResult, error) {
				return c.DraftsList(ctx, sess, *in)
			},
			Summary: func(_ *DraftsListInput, r *DraftsListResult) string {
				s := text.Plural(int64(len(r.Drafts)), "held draft", "held drafts")
				if r.NextCursor != "" {
					s += "; more with cursor " + r.NextCursor
				}
				return s + "."
			},
		}.Tool(),
		engine.ToolSpec[DraftGetInput, *DraftGetResult]{
			Name:      "agent_protocols_draft_get",
			Serialize: true,
			Call: func(ctx context.Context, sess SessionID, in *DraftGetInput) (*DraftGetResult, error) {
				return c.DraftGet(ctx, sess, *in)
			},
			Summary: func(_ *DraftGetInput, r *DraftGetResult) string {
				return fmt.Sprintf("Draft %s (%s) was based on seq %d; %s since. Decide with agent_protocols_draft_commit. %s",
					r.Draft.ID, r.Draft.Kind, r.Draft.BaseSeq, text.Plural(int64(len(r.Changes)), "change", "changes"), syncLine(r.Sync))
			},
		}.Tool(),
		engine.ToolSpec[DraftCommitInput, *WriteResult]{
			Name:      "agent_protocols_draft_commit",
			Serialize: true,
			Call: func(ctx context.Context, sess SessionID, in *DraftCommitInput) (*WriteResult, error) {
				return c.DraftCommit(ctx, sess, *in)
			},
			Summary: func(in *DraftCommitInput, r *WriteResult) string {
				return writeSummary("draft "+in.DraftID, r)
			},
		}.Tool(),
		engine.ToolSpec[DraftDropInput, *DraftDropResult]{
			Name: "agent_protocols_draft_drop",
			Call: func(ctx context.Context, sess SessionID, in *DraftDropInput) (*DraftDropResult, error) {
				return c.DraftDrop(ctx, sess, *in)
			},
			Summary: func(_ *DraftDropInput, r *DraftDropResult) string {
				return fmt.Sprintf("Draft %s dropped; nothing was sent. %s.", r.DraftID, text.Plural(r.PendingCount, "held draft remains", "held drafts remain"))
			},
		}.Tool(),
	}
}

func (c *Module) writeTools() []engine.Tool {
	return []engine.Tool{
		engine.ToolSpec[RoomSendMessageInput, *WriteResult]{
			Name:      "agent_protocols_room_send_message",
			Serialize: true,
			Call: func(ctx context.Context, sess SessionID, in *RoomSendMessageInput) (*WriteResult, error) {
				return c.RoomSendMessage(ctx, sess, *in)
			},
			Summary: func(_ *RoomSendMessageInput, r *WriteResult) string {
				return writeSummary("message.create", r)
			},
		}.Tool(),
		engine.ToolSpec[RoomSubmitEventInput, *WriteResult]{
			Name:      "agent_protocols_room_submit_event",
			Serialize: true,
			Call: func(ctx context.Context, sess SessionID, in *RoomSubmitEventInput) (*WriteResult, error) {
				return c.RoomSubmitEvent(ctx, sess, *in)
			},
			Summary: func(in *RoomSubmitEventInput, r *WriteResult) string {
				return writeSummary(in.Type, r)
			},
		}.Tool(),
		engine.ToolSpec[RoomCreateInput, *RoomCreateResult]{
			Name:      "agent_protocols_room_create",
			Serialize: true,
			Call: func(ctx context.Context, sess SessionID, in *RoomCreateInput) (*RoomCreateResult, error) {
				return c.RoomCreate(ctx, sess, *in)
			},
			Summary: func(_ *RoomCreateInput, r *RoomCreateResult) string {
				return fmt.Sprintf("Created room %s on %s (%s); you are its creator and a moderator. %s", r.Room.RoomID, r.Room.Host,
					r.Room.Visibility, syncLine(r.Sync))
			},
		}.Tool(),
		engine.ToolSpec[RoomLeaveInput, *RecordResult]{
			Name:      "agent_protocols_room_leave",
			Serialize: true,
			Call: func(ctx context.Context, sess SessionID, in *RoomLeaveInput) (*RecordResult, error) {
				return c.RoomLeave(ctx, sess, *in)
			},
			Summary: func(_ *RoomLeaveInput, r *RecordResult) string {
				return "You left the room. " + syncLine(r.Sync)
			},
		}.Tool(),
	}
}

func (c *Module) joinTools() []engine.Tool {
	return []engine.Tool{
		engine.ToolSpec[RoomJoinInput, *RoomJoinResult]{
			Name:      "agent_protocols_room_join",
			Serialize: true,
			Call: func(ctx context.Context, sess SessionID, in *RoomJoinInput) (*RoomJoinResult, error) {
				return c.RoomJoin(ctx, sess, *in)
			},
			Summary: func(in *RoomJoinInput, r *RoomJoinResult) string {
				switch r.Status {
				case JoinJoined:
					role := in.Role
					if r.Member != nil {
						role = r.Member.Role
					}
					return fmt.Sprintf("Joined room %s as %s.%s", in.RoomID, role, syncLinePtr(r.Sync))
				case JoinApprovalRequired:
					id, _ := r.JoinRequest["id"].(string)
					st, _ := r.JoinRequest["status"].(string)
					return fmt.Sprintf("Room %s needs approval: join request %s is %s. Call agent_protocols_room_join again later (a room.join.approved inbox item also tells you) to complete it with the approved role.", in.RoomID, id, st)
				case JoinRejected:
					return fmt.Sprintf("Your join request for room %s was rejected.", in.RoomID)
				}
				return "Join " + r.Status + "."
			},
		}.Tool(),
		engine.ToolSpec[JoinRequestsListInput, *JoinRequestsListResult]{
			Name: "agent_protocols_join_requests_list",
			Call: func(ctx context.Context, sess SessionID, in *JoinRequestsListInput) (*JoinRequestsListResult, error) {
				return c.JoinRequestsList(ctx, sess, *in)
			},
			Summary: func(in *JoinRequestsListInput, r *JoinRequestsListResult) string {
				s := fmt.Sprintf("%s for room %s", text.Plural(int64(len(r.JoinRequests)), "join request", "join requests"), in.RoomID)
				if r.NextCursor != "" {
					s += "; more with cursor " + r.NextCursor
				}
				return s + "."
			},
		}.Tool(),
		engine.ToolSpec[JoinRequestReviewInput, *RecordResult]{
			Name:      "agent_protocols_join_request_review",
			Serialize: true,
			Call: func(ctx context.Context, sess SessionID, in *JoinRequestReviewInput) (*RecordResult, error) {
				return c.JoinRequestReview(ctx, sess, *in)
			},
			Summary: func(in *JoinRequestReviewInput, r *RecordResult) string {
				return fmt.Sprintf("Join request %s: %s recorded. %s", in.RequestID, in.Decision, syncLine(r.Sync))
			},
		}.Tool(),
	}
}

func (c *Module) watchTools() []engine.Tool {
	return []engine.Tool{
		engine.ToolSpec[RoomWatchInput, *RoomWatchResult]{
			Name: "agent_protocols_room_watch",
			Call: func(ctx context.Context, sess SessionID, in *RoomWatchInput) (*RoomWatchResult, error) {
				return c.RoomWatch(ctx, sess, *in)
			},
			Summary: func(_ *RoomWatchInput, r *RoomWatchResult) string {
				if len(r.Types) == 0 {
					return "No event types are watched in room " + r.Sync.RoomID + ". " + syncLine(r.Sync)
				}
				return fmt.Sprintf("Watching %s in room %s; new records of them become room.event.custom inbox items. %s",
					strings.Join(r.Types, ", "), r.Sync.RoomID, syncLine(r.Sync))
			},
			Progress: syncProgress(c, func(in *RoomWatchInput) (string, string, bool) { return roomOf(in.Host, in.RoomID) }),
		}.Tool(),
		engine.ToolSpec[RoomArchiveInput, *RoomArchiveResult]{
			Name: "agent_protocols_room_archive",
			Call: func(ctx context.Context, sess SessionID, in *RoomArchiveInput) (*RoomArchiveResult, error) {
				return c.RoomArchive(ctx, sess, *in)
			},
			Summary: func(in *RoomArchiveInput, r *RoomArchiveResult) string {
				s := fmt.Sprintf("Archive of room %s verified: %s", in.RoomID, text.Plural(int64(r.Archive.RecordsCount), "record", "records"))
				if len(r.Redacted) > 0 {
					s += fmt.Sprintf(", %d redacted", len(r.Redacted))
				}
				if !r.StateVerified {
					s += "; the room's state could not be replayed through every record"
				}
				return s + ". Kept as " + r.Archive.URI + "."
			},
		}.Tool(),
	}
}

func roomStateSummary(verb string, v *RoomStateView, s SyncState) string {
	role := "not a member"
	if v.SelfMember != nil {
		role = fmt.Sprintf("your membership: %s %s", v.SelfMember.Status, v.SelfMember.Role)
	}
	return fmt.Sprintf("%s room %s (%s, %s): %s, %s. %s", verb, v.RoomID, v.Status, v.Visibility,
		text.Plural(int64(v.ActiveMembersCount), "active member", "active members"), role, syncLine(s))
}

// seqText prints an optional sequence number.
func seqText[T ~int64](p *T) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprint(int64(*p))
}

// msTime prints a Unix millisecond time in UTC.
func msTime(ms int64) string {
	return time.UnixMilli(ms).UTC().Format(time.RFC3339)
}

// syncLine describes a room's SyncState in one line.
func syncLine(s SyncState) string {
	var b strings.Builder
	fmt.Fprintf(&b, "room %s on %s: head %d", s.RoomID, s.Host, s.HeadSeq)
	if s.SyncedSeq != s.HeadSeq {
		fmt.Fprintf(&b, ", latest record %d", s.SyncedSeq)
	}
	if s.RemoteSeq > s.SyncedSeq {
		fmt.Fprintf(&b, " (host has %d; not fully synced)", s.RemoteSeq)
	}
	fmt.Fprintf(&b, ", %s, %s", text.Plural(s.UnreadCount, "unread record", "unread records"),
		text.Plural(s.PendingInboxCount, "pending inbox item", "pending inbox items"))
	if s.Verification != nil {
		fmt.Fprintf(&b, "; VERIFICATION FAILED at seq %d (%s): nothing after it is applied until a refresh resyncs cleanly", s.Verification.Seq, s.Verification.Code)
	}
	return b.String()
}

func syncLinePtr(s *SyncState) string {
	if s == nil {
		return ""
	}
	return " — " + syncLine(*s)
}

// writeSummary describes the outcome of a room write.
func writeSummary(what string, r *WriteResult) string {
	if r == nil {
		return ""
	}
	switch r.Status {
	case StatusSent:
		s := "Sent " + what
		if r.Item != nil {
			s = fmt.Sprintf("Sent %s as seq %d", r.Item.Type, r.Item.Seq)
		}
		return s + "." + syncLinePtr(r.Sync)
	case StatusHeld:
		id := ""
		if r.Draft != nil {
			id = r.Draft.ID
		}
		return fmt.Sprintf("HELD, not sent: the room moved after the head you wrote against (%s). Draft %s keeps your write; %s happened since. "+
			"Read them, decide again, then call agent_protocols_draft_commit with exactly one of revise, send_as_is, stay_silent or send_anyway.%s",
			r.Reason, id, text.Plural(int64(len(r.Changes)), "change", "changes"), syncLinePtr(r.Sync))
	case StatusRejected:
		return fmt.Sprintf("Rejected, not sent (%s): the room moved after the head you wrote against; %s happened since.%s",
			r.Reason, text.Plural(int64(len(r.Changes)), "change", "changes"), syncLinePtr(r.Sync))
	case StatusDropped:
		return fmt.Sprintf("Draft %s dropped; nothing was sent.", r.DraftID)
	}
	return "Write " + r.Status + "."
}

func roomsSummary(r *RoomsResult, where string) string {
	s := text.Plural(int64(len(r.Rooms)), "room", "rooms") + " " + where
	if r.NextCursor != "" {
		s += "; more with cursor " + r.NextCursor
	}
	return s + "."
}

// Discover reads the Agent Discourse discovery document of a configured
// host (nil for an origin that is not a [[hosts]] entry).
func (c *Module) Discover(ctx context.Context, origin string) (map[string]any, error) {
	norm, err := c.Configured(origin)
	if err != nil {
		return nil, err
	}
	h, ok := c.hosts[norm]
	if !ok {
		return nil, nil
	}
	d, err := h.client.Discovery(ctx)
	if err != nil || d == nil {
		return nil, err
	}
	return d.Raw, nil
}
