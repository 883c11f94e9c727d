package main

import (
	"strconv"
	"strings"
	"time"

	"apconnect/sdk-guest/plugin"
)

// day is the UTC date of a Unix millisecond time, as reports write it.
func day(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02") }

// validateReport runs before apconnect signs a standup.report. The pack's
// schema has already checked the shape; these are the rules a schema
// cannot express.
func validateReport(req *plugin.ValidateRequest) []plugin.FieldError {
	var errs []plugin.FieldError
	date, _ := req.Payload.Get("date").AsString()

	// A real date, not in the future (a day of slack for time zones ahead
	// of UTC) and at most a week old. Time comes from NowMS: the sandbox
	// has no clock.
	if d, err := time.Parse("2006-01-02", date); err != nil {
		errs = append(errs, plugin.Errorf("/payload/date", "%q is not a calendar date", date))
	} else if d.After(time.UnixMilli(req.NowMS).Add(24 * time.Hour)) {
		errs = append(errs, plugin.Errorf("/payload/date", "%s is in the future", date))
	} else if d.Before(time.UnixMilli(req.NowMS).Add(-8 * 24 * time.Hour)) {
		errs = append(errs, plugin.Errorf("/payload/date", "%s is more than a week ago", date))
	}

	if req.Payload.Get("done").Len() == 0 && req.Payload.Get("planned").Len() == 0 && req.Payload.Get("blockers").Len() == 0 {
		errs = append(errs, plugin.Errorf("/payload", "a report needs done, planned or blockers"))
	}

	// One report per agent per day. The room context holds the room's
	// newest standup.report records (the types a plugin validates or
	// watches).
	for _, rec := range req.Room.Records {
		if rec.Type != typeReport || rec.Redacted || rec.Actor != req.Actor {
			continue
		}
		if d, _ := rec.Payload.Get("date").AsString(); d == date {
			errs = append(errs, plugin.Errorf("/payload/date", "you already reported for %s (event %s); add to it with a message", date, rec.EventID))
		}
	}

	// Blockers wait on members of the room, never on the reporter.
	req.Payload.Get("blockers").Each(func(i int, b plugin.Raw) bool {
		who, ok := b.Get("waiting_on").AsString()
		path := "/payload/blockers/" + strconv.Itoa(i) + "/waiting_on"
		switch {
		case !ok:
		case who == req.Actor:
			errs = append(errs, plugin.Errorf(path, "you cannot be blocked on yourself"))
		default:
			if _, member := req.Room.Member(who); !member && len(req.Room.Members) > 0 {
				errs = append(errs, plugin.Errorf(path, "%s is not a member of this room", who))
			}
		}
		return true
	})
	return errs
}

// watchReport runs on every verified standup.report: a blocker waiting on
// the active agent becomes an urgent inbox item. Watch rules run on every
// sync page, so they read the payload with the SDK's cheap accessors and
// build strings without fmt.
func watchReport(rec *plugin.Record, req *plugin.WatchRequest) *plugin.InboxItem {
	self := req.Room.SelfID()
	var waiting []string
	rec.Payload.Get("blockers").Each(func(_ int, b plugin.Raw) bool {
		if who, _ := b.Get("waiting_on").AsString(); who == self && self != "" {
			summary, _ := b.Get("summary").AsString()
			waiting = append(waiting, summary)
		}
		return true
	})
	if len(waiting) == 0 || rec.Actor == self {
		return nil
	}
	return &plugin.InboxItem{
		Summary:          "Blocked on you: " + safe(strings.Join(waiting, "; ")),
		Priority:         plugin.PriorityHigh,
		RequiresResponse: true,
		Reason:           "a stand-up blocker waits on you",
		SuggestedTools:   []string{"summary", "agent_protocols_room_send_message"},
	}
}

// safe defuses text from the room before it is quoted in output: the host
// refuses plugin output with HTML tags or script URLs, and one hostile
// report must not void a whole result.
func safe(s string) string {
	return strings.NewReplacer("<", "‹", ">", "›", "javascript:", "javascript∶", "ui://", "ui∶//").Replace(s)
}
