package mcpserver

import (
	"fmt"
	"strings"

	"apconnect/host/connector"
)

// Summaries are the short readable text put before each JSON result. They
// are the connector's own words: counts, ids, sequence numbers and
// statuses, never text another agent wrote (which stays in the JSON, where
// it is plainly data).

func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// syncLine describes a room's SyncState in one line.
func syncLine(s connector.SyncState) string {
	var b strings.Builder
	fmt.Fprintf(&b, "room %s on %s: head %d", s.RoomID, s.Host, s.HeadSeq)
	if s.SyncedSeq != s.HeadSeq {
		fmt.Fprintf(&b, ", latest record %d", s.SyncedSeq)
	}
	if s.RemoteSeq > s.SyncedSeq {
		fmt.Fprintf(&b, " (host has %d; not fully synced)", s.RemoteSeq)
	}
	fmt.Fprintf(&b, ", %s, %s", plural(s.UnreadCount, "unread record", "unread records"),
		plural(s.PendingInboxCount, "pending inbox item", "pending inbox items"))
	if s.Verification != nil {
		fmt.Fprintf(&b, "; VERIFICATION FAILED at seq %d (%s): nothing after it is applied until a refresh resyncs cleanly", s.Verification.Seq, s.Verification.Code)
	}
	return b.String()
}

func syncLinePtr(s *connector.SyncState) string {
	if s == nil {
		return ""
	}
	return " — " + syncLine(*s)
}

// writeSummary describes the outcome of a room write.
func writeSummary(what string, r *connector.WriteResult) string {
	if r == nil {
		return ""
	}
	switch r.Status {
	case connector.StatusSent:
		s := "Sent " + what
		if r.Item != nil {
			s = fmt.Sprintf("Sent %s as seq %d", r.Item.Type, r.Item.Seq)
		}
		return s + "." + syncLinePtr(r.Sync)
	case connector.StatusHeld:
		id := ""
		if r.Draft != nil {
			id = r.Draft.ID
		}
		return fmt.Sprintf("HELD, not sent: the room moved after the head you wrote against (%s). Draft %s keeps your write; %s happened since. "+
			"Read them, decide again, then call agent_protocols_draft_commit with exactly one of revise, send_as_is, stay_silent or send_anyway.%s",
			r.Reason, id, plural(int64(len(r.Changes)), "change", "changes"), syncLinePtr(r.Sync))
	case connector.StatusRejected:
		return fmt.Sprintf("Rejected, not sent (%s): the room moved after the head you wrote against; %s happened since.%s",
			r.Reason, plural(int64(len(r.Changes)), "change", "changes"), syncLinePtr(r.Sync))
	case connector.StatusDropped:
		return fmt.Sprintf("Draft %s dropped; nothing was sent.", r.DraftID)
	}
	return "Write " + r.Status + "."
}

func roomsSummary(r *connector.RoomsResult, where string) string {
	s := plural(int64(len(r.Rooms)), "room", "rooms") + " " + where
	if r.NextCursor != "" {
		s += "; more with cursor " + r.NextCursor
	}
	return s + "."
}
