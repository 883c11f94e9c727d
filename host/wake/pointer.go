package wake

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"apconnect/host/inbox"
	"apconnect/host/store"
)

// inboxNext is the tool a pointer tells the agent to call.
const inboxNext = "agent_protocols_inbox_next"

// item decodes a candidate's stored JSON as inbox_next returns one pending
// item.
func item(w store.WakeItem) (inbox.Item, error) {
	var it inbox.Item
	if err := json.Unmarshal(w.Item, &it); err != nil {
		return it, fmt.Errorf("inbox item %s: %w", w.ID, err)
	}
	it.State = store.InboxPending
	it.ClaimedUntil = 0
	// The stored item is the source of the columns; the columns win where
	// the JSON lacks them.
	if it.ID == "" {
		it.ID = w.ID
	}
	if it.Kind == "" {
		it.Kind = w.Kind
	}
	if it.RoomID == "" && w.RoomID != "" {
		it.RoomID, it.Host = w.RoomID, w.Host
	}
	if it.Seq == nil && w.Seq > 0 {
		seq := w.Seq
		it.Seq = &seq
	}
	return it, nil
}

// safe passes an identifier (an inbox id, a room id, an origin, a kind)
// into a pointer only when it is made of the characters identifiers use:
// ids come from services, and a pointer must never carry words another
// party chose.
func safe(s string) string {
	if len(s) == 0 || len(s) > 200 {
		return "(unshown)"
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("_-.:/", c) >= 0) {
			return "(unshown)"
		}
	}
	return s
}

// logged is the candidate as the wake log keeps it: with the room, host
// and seq the item names.
func logged(w store.WakeItem, it inbox.Item) store.WakeItem {
	w.RoomID, w.Host = it.RoomID, it.Host
	if it.Seq != nil {
		w.Seq = *it.Seq
	}
	return w
}

// seqString is the item's seq in decimal, "" when it has none.
func seqString(it inbox.Item) string {
	if it.Seq == nil {
		return ""
	}
	return strconv.FormatInt(*it.Seq, 10)
}

// what says what an item is about, from its kind, room and seq only: never
// a word another agent wrote.
func what(it inbox.Item) string {
	room := "room " + safe(it.RoomID)
	if seq := seqString(it); seq != "" {
		room += " (seq " + seq + ")"
	}
	switch it.Kind {
	case "room.mention":
		return "you were mentioned in " + room
	case "room.turn.assigned":
		return "the floor is yours in " + room
	case "room.steer":
		return "you were steered in " + room
	case "room.join.requested":
		return "an agent asks to join " + room + " and you may review it"
	case "room.join.approved":
		return "your request to join " + room + " was approved"
	case "room.message.new":
		return "a new message in " + room
	case "room.role.changed":
		return "your role changed in " + room
	case "room.member.removed":
		return "you were removed from " + room
	case "room.state.changed":
		return "the state of " + room + " changed"
	case "room.event.custom":
		return "a watch rule flagged an event in " + room
	case "mail.received":
		return "a letter arrived in your mailbox"
	}
	if it.RoomID != "" {
		return "a new item of kind " + safe(it.Kind) + " in " + room
	}
	return "a new item of kind " + safe(it.Kind)
}

// Pointer is the text that points the agent at one item: written by
// apconnect from the item's id, kind, room and seq, never from room, letter
// or profile text.
func Pointer(it inbox.Item) string {
	return fmt.Sprintf("Inbox item %s: %s. Call %s.", safe(it.ID), what(it), inboxNext)
}

// foldedPointer points at several items at once.
func foldedPointer(items []inbox.Item) string {
	const shown = 5
	ids := make([]string, 0, shown)
	for _, it := range items[:min(len(items), shown)] {
		ids = append(ids, safe(it.ID))
	}
	more := ""
	if len(items) > shown {
		more = fmt.Sprintf(" and %d more", len(items)-shown)
	}
	return fmt.Sprintf("%d new inbox items (%s%s) need you. Call %s until it returns none.", len(items), strings.Join(ids, ", "), more, inboxNext)
}

// meta is the channel notification's meta of one item: string values only,
// the empty ones left out.
func meta(it inbox.Item) map[string]string {
	m := map[string]string{"inbox_id": safe(it.ID), "kind": safe(it.Kind)}
	for k, v := range map[string]string{"room_id": it.RoomID, "seq": seqString(it), "host": it.Host} {
		if v != "" {
			m[k] = safe(v)
		}
	}
	return m
}

// foldedMeta is the meta of a folded notification: the ids and the kinds,
// comma-separated, and the count.
func foldedMeta(items []inbox.Item) map[string]string {
	ids := make([]string, len(items))
	var kinds []string
	for i, it := range items {
		ids[i] = safe(it.ID)
		if k := safe(it.Kind); !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	return map[string]string{"inbox_ids": strings.Join(ids, ","), "kinds": strings.Join(kinds, ","), "count": strconv.Itoa(len(items))}
}

// envPrefix marks the connector's environment variables: every one is
// removed from a command's environment (APCONNECT_PASSPHRASE above all),
// then the item's are added.
const envPrefix = "APCONNECT_"

// commandEnv is a command's environment: base without any APCONNECT_
// variable, plus the item's.
func commandEnv(base []string, it inbox.Item) []string {
	env := make([]string, 0, len(base)+5)
	for _, kv := range base {
		if !strings.HasPrefix(strings.ToUpper(kv), envPrefix) {
			env = append(env, kv)
		}
	}
	return append(env,
		envPrefix+"INBOX_ID="+it.ID,
		envPrefix+"KIND="+it.Kind,
		envPrefix+"ROOM_ID="+it.RoomID,
		envPrefix+"HOST="+it.Host,
		envPrefix+"SEQ="+seqString(it))
}
