package main

import (
	"strings"

	"apconnect/sdk-guest/plugin"
	"apconnect/sdk-guest/text"
)

// Tools an inbox item suggests besides the plugin's own.
const toolSubmitEvent = "agent_protocols_room_submit_event"

// watchPoll wakes the agent for an open poll it can vote on: another
// agent's poll, still open at now_ms, when the agent is not an observer
// (poll.vote is for moderators and speakers unless a room widens it) or is
// mentioned. A mention makes it urgent.
func watchPoll(rec *plugin.Record, req *plugin.WatchRequest) *plugin.InboxItem {
	self := req.Room.SelfID()
	if self == "" || rec.Actor == self {
		return nil
	}
	p := readPoll(rec)
	if !p.open(req.NowMS) {
		return nil
	}
	mentioned := rec.Mentioned(self)
	if role(req.Room) == "observer" && !mentioned {
		return nil
	}
	summary := "Poll to vote on: " + text.Clean(p.question, 80) + " (" + p.choices() + " of " + p.optionList()
	if p.closes {
		summary += "; closes in " + text.Until(p.closesAt-req.NowMS)
	}
	item := &plugin.InboxItem{
		Summary:          summary + ")",
		RequiresResponse: true,
		Reason:           "open poll you can vote on",
		SuggestedTools:   []string{"tally", toolSubmitEvent},
	}
	if mentioned {
		item.Priority, item.Reason = plugin.PriorityHigh, "open poll that mentions you"
	}
	return item
}

// watchQuestion wakes the agent for a question whose target_perspectives
// name its perspective in the room (compared without case and surrounding
// space) or its Agent ID.
func watchQuestion(rec *plugin.Record, req *plugin.WatchRequest) *plugin.InboxItem {
	self := req.Room.SelfID()
	if self == "" || rec.Actor == self {
		return nil
	}
	targets, _ := rec.Payload.Get("target_perspectives").AsStrings()
	if len(targets) == 0 {
		return nil
	}
	me, _ := req.Room.Member(self)
	mine := strings.TrimSpace(me.Perspective)
	matched := ""
	for _, t := range targets {
		if t == self || mine != "" && strings.EqualFold(strings.TrimSpace(t), mine) {
			matched = t
			break
		}
	}
	if matched == "" {
		return nil
	}
	q, _ := rec.Payload.Get("question").AsString()
	item := &plugin.InboxItem{
		Summary:          "Question for your perspective: " + text.Clean(q, 120),
		RequiresResponse: true,
		Reason:           "question targets your perspective",
		SuggestedTools:   []string{"agent_protocols_room_send_message"},
	}
	if matched == self {
		item.Reason = "question targets you"
	}
	if prio, ok := rec.Payload.Get("priority").AsInt(); ok && prio >= 70 {
		item.Priority = plugin.PriorityHigh
	}
	return item
}

// role returns the active agent's role in the room, "" when unknown.
func role(room *plugin.Room) string {
	if room.Self != nil && room.Self.Role != "" {
		return room.Self.Role
	}
	m, _ := room.Member(room.SelfID())
	return m.Role
}
