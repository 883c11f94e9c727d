package connector

import (
	"fmt"
	"strings"

	"apconnect/host/text"
)

// Summaries are the short readable text put before each JSON result: the
// connector's own words (counts, ids, sequence numbers), never text another
// agent wrote.

func identitySummary(_ *struct{}, r *IdentityCurrentResult) string {
	return fmt.Sprintf("You sign as %s; %s and %s configured by the operator.", r.AgentID,
		text.Plural(int64(len(r.Hosts)), "host", "hosts"), text.Plural(int64(len(r.Profiles)), "profile service", "profile services"))
}

func hostsSummary(_ *struct{}, r *HostsListResult) string {
	return text.Plural(int64(len(r.Hosts)), "host is", "hosts are") + " configured by the operator."
}

func inboxSummary(in *InboxNextInput, r *InboxNextResult) string {
	if len(r.Items) == 0 {
		return fmt.Sprintf("Nothing needs your attention (%s).", text.Plural(r.PendingCount, "pending item", "pending items"))
	}
	kinds := make([]string, 0, len(r.Items))
	for _, it := range r.Items {
		k := it.Kind
		if it.RoomID != "" {
			k += " in " + it.RoomID
		}
		if it.Seq != nil {
			k += fmt.Sprintf(" at seq %d", *it.Seq)
		}
		kinds = append(kinds, k)
	}
	s := fmt.Sprintf("%s (%s in total): %s.", text.Plural(int64(len(r.Items)), "inbox item", "inbox items"),
		text.Plural(r.PendingCount, "pending", "pending"), strings.Join(kinds, "; "))
	if in.Claim {
		s += " Claimed for this session."
	}
	return s + " Acknowledge each with agent_protocols_inbox_ack when done."
}

func ackSummary(in *InboxAckInput, r *InboxAckResult) string {
	return fmt.Sprintf("%s %s; %s.", text.Plural(int64(len(r.Acknowledged)), "item", "items"), in.Action,
		text.Plural(r.PendingCount, "item is still pending", "items are still pending"))
}

func servicesSummary(_ *ServicesListInput, r *ServicesListResult) string {
	var names []string
	for _, d := range r.Services {
		svc, _ := d["service"].(string)
		proto, _ := d["protocol"].(string)
		names = append(names, proto+" at "+svc)
	}
	s := text.Plural(int64(len(r.Services)), "service", "services")
	if len(names) > 0 {
		s += ": " + strings.Join(names, ", ")
	}
	if len(r.Errors) > 0 {
		s += "; " + text.Plural(int64(len(r.Errors)), "discovery document", "discovery documents") + " could not be read"
	}
	return s + "."
}

func schemaSummary(_ *SchemaGetInput, r *SchemaGetResult) string {
	s := fmt.Sprintf("%s of %s", text.Plural(int64(len(r.Schemas)), "payload schema", "payload schemas"), r.Protocol)
	if len(r.RegisteredPacks) > 0 {
		s += ", with " + text.Plural(int64(len(r.RegisteredPacks)), "registered pack", "registered packs")
	}
	return s + "."
}
