package plugins_test

import (
	"strings"
	"testing"

	"apconnect/host/plugin"
)

const deliberationDir = "deliberation"

func pollPayload(id string, options ...string) obj {
	var opts []obj
	for _, o := range options {
		opts = append(opts, obj{"id": o, "label": strings.ToUpper(o)})
	}
	return obj{"poll_id": id, "question": "Which cache policy?", "options": opts}
}

func with(o obj, kv ...any) obj {
	out := obj{}
	for k, v := range o {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

func TestDeliberationPollCreate(t *testing.T) {
	t.Parallel()
	forBuilds(t, deliberationDir, func(t *testing.T, p *plugin.Plugin) {
		r := newRoom()
		r.add("poll.create", "alice", pollPayload("p0", "yes", "no"))
		gone := r.add("poll.create", "alice", pollPayload("p-redacted", "yes", "no"))
		r.redact(gone)
		v := func(what string, payload obj, want ...refusal) {
			t.Helper()
			wantErrs(t, what, validate(t, p, r, "poll.create", "me", payload), want...)
		}

		v("a good poll", with(pollPayload("p1", "a", "b", "c"), "min_choices", 1, "max_choices", 2, "closes_at", now+3600_000))
		v("defaults", pollPayload("p1", "a"))
		v("a reused redacted poll_id (unknown)", pollPayload("p-redacted", "a"))
		v("duplicate option ids", pollPayload("p1", "a", "b", "a", "b"),
			refusal{"/payload/options/2/id", `option id "a" is already used by option 0`},
			refusal{"/payload/options/3/id", `option id "b" is already used by option 1`})
		v("max below min", with(pollPayload("p1", "a", "b", "c"), "min_choices", 2, "max_choices", 1),
			refusal{"/payload/max_choices", "max_choices 1 is less than min_choices 2"})
		v("min above the default max", with(pollPayload("p1", "a", "b", "c"), "min_choices", 2),
			refusal{"/payload/min_choices", "min_choices 2 is more than max_choices, which defaults to 1"})
		v("choices beyond the options", with(pollPayload("p1", "a", "b"), "min_choices", 3, "max_choices", 3),
			refusal{"/payload/min_choices", "min_choices 3 is more than the 2 options"},
			refusal{"/payload/max_choices", "max_choices 3 is more than the 2 options"})
		v("max beyond the options", with(pollPayload("p1", "a", "b"), "max_choices", 5),
			refusal{"/payload/max_choices", "max_choices 5 is more than the 2 options"})
		v("closes now", with(pollPayload("p1", "a"), "closes_at", now),
			refusal{"/payload/closes_at", "closes_at 1779753700000 is not in the future (now 1779753700000)"})
		v("reused poll_id", pollPayload("p0", "a"),
			refusal{"/payload/poll_id", `poll_id "p0" is already used by poll.create event`})
		v("everything at once", with(pollPayload("p0", "x", "x"), "max_choices", 3, "closes_at", 1),
			refusal{"/payload/options/1/id", `option id "x" is already used by option 0`},
			refusal{"/payload/max_choices", "max_choices 3 is more than the 2 options"},
			refusal{"/payload/closes_at", "is not in the future"},
			refusal{"/payload/poll_id", `poll_id "p0" is already used`})
	})
}

func TestDeliberationUniqueIDs(t *testing.T) {
	t.Parallel()
	forBuilds(t, deliberationDir, func(t *testing.T, p *plugin.Plugin) {
		r := newRoom()
		q := r.add("question.create", "alice", obj{"question": "What breaks first under load?", "question_id": "q1"})
		r.add("proposal.create", "bob", obj{"proposal_id": "pr1", "title": "Cap the queue", "body": "Cap it at 1000."})

		wantErrs(t, "new question_id", validate(t, p, r, "question.create", "me", obj{"question": "Why?", "question_id": "q2"}))
		wantErrs(t, "no question_id", validate(t, p, r, "question.create", "me", obj{"question": "Why?"}))
		wantErrs(t, "reused question_id", validate(t, p, r, "question.create", "me", obj{"question": "Why?", "question_id": "q1"}),
			refusal{"/payload/question_id", `question_id "q1" is already used by question.create event ` + q + " (seq 5)"})
		wantErrs(t, "new proposal_id", validate(t, p, r, "proposal.create", "me", obj{"proposal_id": "pr2", "title": "T", "body": "B"}))
		wantErrs(t, "reused proposal_id", validate(t, p, r, "proposal.create", "me", obj{"proposal_id": "pr1", "title": "T", "body": "B"}),
			refusal{"/payload/proposal_id", `proposal_id "pr1" is already used`})
	})
}

func TestDeliberationVote(t *testing.T) {
	t.Parallel()
	forBuilds(t, deliberationDir, func(t *testing.T, p *plugin.Plugin) {
		r := newRoom()
		single := r.add("poll.create", "alice", with(pollPayload("single", "yes", "no"), "closes_at", now+3600_000))
		multi := r.add("poll.create", "alice", with(pollPayload("multi", "a", "b", "c", "d"), "min_choices", 2, "max_choices", 3))
		closed := r.add("poll.create", "alice", with(pollPayload("closed", "yes", "no"), "closes_at", now-1))
		edge := r.add("poll.create", "alice", with(pollPayload("edge", "yes", "no"), "closes_at", now))
		msg := r.add("message.create", "bob", obj{"text": "not a poll"})
		gone := r.add("poll.create", "alice", pollPayload("gone", "yes"))
		r.redact(gone)
		vote := func(poll string, options ...string) obj { return obj{"poll_event_id": poll, "option_ids": options} }
		v := func(what string, payload obj, want ...refusal) {
			t.Helper()
			wantErrs(t, what, validate(t, p, r, "poll.vote", "me", payload), want...)
		}

		v("a vote", vote(single, "no"))
		v("a multiple choice vote", vote(multi, "a", "d", "c"))
		v("a vote at closes_at", vote(edge, "yes"))
		v("an unknown option", vote(single, "maybe"),
			refusal{"/payload/option_ids/0", `"maybe" is not an option of poll "single" (options: yes, no)`})
		v("too many choices", vote(single, "yes", "no"),
			refusal{"/payload/option_ids", `2 options chosen; poll "single" says choose 1`})
		v("too few choices", vote(multi, "a"),
			refusal{"/payload/option_ids", `1 option chosen; poll "multi" says choose 2 to 3`})
		v("unknown option and too many", vote(multi, "a", "b", "c", "e"),
			refusal{"/payload/option_ids/3", `"e" is not an option of poll "multi"`},
			refusal{"/payload/option_ids", "4 options chosen"})
		v("a closed poll", vote(closed, "yes"),
			refusal{"/payload/poll_event_id", `poll "closed" closed at 1779753699999 (now 1779753700000); votes after closes_at are invalid`})
		v("not a poll", vote(msg, "yes"),
			refusal{"/payload/poll_event_id", "event " + msg + " is a message.create, not a poll.create"})
		v("a redacted poll", vote(gone, "yes"),
			refusal{"/payload/poll_event_id", "was redacted; its options are unknown"})
		missing := id43("event", "no poll")
		v("no such poll", vote(missing, "yes"),
			refusal{"/payload/poll_event_id", "this room has no event " + missing})

		// The poll is looked up by its event ID: it is there even when the
		// host holds only part of the room and much has happened since.
		for i := range 40 {
			r.add("poll.vote", "bob", vote(multi, "a", "b"))
			r.add("question.create", "bob", obj{"question": "q" + itoa(int64(i))})
		}
		r.whole = false
		v("a vote in a partial room", vote(single, "yes"))
		v("no such poll in a partial room", vote(missing, "yes"),
			refusal{"/payload/poll_event_id", "is not among the records of this room that apconnect holds, so the vote cannot be checked"})
	})
}

func TestDeliberationWatch(t *testing.T) {
	t.Parallel()
	forBuilds(t, deliberationDir, func(t *testing.T, p *plugin.Plugin) {
		r := newRoom()
		r.add("poll.create", "alice", with(pollPayload("p1", "yes", "no"), "closes_at", now+2*3600_000))
		r.add("poll.create", "bob", with(pollPayload("p2", "a", "b", "c"), "max_choices", 2), "me", "olga")
		r.add("poll.create", "me", pollPayload("mine", "yes", "no"))
		r.add("poll.create", "alice", with(pollPayload("past", "yes", "no"), "closes_at", now-1))
		r.add("question.create", "alice", obj{"question": "How does this feel to use?", "target_perspectives": []string{" developer EXPERIENCE "}})
		r.add("question.create", "alice", obj{"question": "Is it safe?", "target_perspectives": []string{"Security"}})
		r.add("question.create", "bob", obj{"question": "Can you benchmark it?", "target_perspectives": []string{agent("me")}, "priority": 90})
		r.add("question.create", "bob", obj{"question": "Anyone?"})
		r.add("question.create", "me", obj{"question": "Mine?", "target_perspectives": []string{"Developer experience"}})
		r.add("question.create", "bob", obj{"question": "Open <iframe src=javascript:alert(1)> or UI://app?", "target_perspectives": []string{"developer experience"}})

		items := watch(t, p, r, 4)
		// Hostile text is defused, so the host does not refuse the whole batch.
		if len(items) != 5 || items[4].Summary != "Question for your perspective: Open ‹iframe src=javascript∶alert(1)› or UI∶//app?" {
			t.Fatalf("items: %+v", items)
		}
		items = items[:4]
		if len(items) != 4 {
			t.Fatalf("items: %+v", items)
		}
		want := []struct {
			seq              int64
			priority, reason string
			summary          string
			tools            []string
		}{
			{5, "normal", "open poll you can vote on", "Poll to vote on: Which cache policy? (choose 1 of yes, no; closes in 2h)",
				[]string{"deliberation_tally", "agent_protocols_room_submit_event"}},
			{6, "high", "open poll that mentions you", "Poll to vote on: Which cache policy? (choose 1 to 2 of a, b, c)",
				[]string{"deliberation_tally", "agent_protocols_room_submit_event"}},
			{9, "normal", "question targets your perspective", "Question for your perspective: How does this feel to use?",
				[]string{"agent_protocols_room_send_message"}},
			{11, "high", "question targets you", "Question for your perspective: Can you benchmark it?",
				[]string{"agent_protocols_room_send_message"}},
		}
		for i, w := range want {
			it := items[i]
			if it.Seq != w.seq || it.Priority != w.priority || it.Reason != w.reason || it.Summary != w.summary ||
				!it.RequiresResponse || strings.Join(it.SuggestedTools, ",") != strings.Join(w.tools, ",") ||
				it.Kind != "room.event.custom" || it.RoomID != roomID || it.Plugin != "deliberation" {
				t.Errorf("item %d: %+v, want %+v", i, it, w)
			}
		}

		// An observer is woken only for polls that mention it.
		r.self = "olga"
		items = watch(t, p, r, 4)
		if len(items) != 1 || items[0].Seq != 6 {
			t.Errorf("observer items %+v", items)
		}
	})
}

type tallyOut struct {
	RoomID   string `json:"room_id"`
	Complete bool   `json:"complete"`
	Polls    []struct {
		PollEventID string `json:"poll_event_id"`
		PollID      string `json:"poll_id"`
		Open        bool   `json:"open"`
		ClosesAt    *int64 `json:"closes_at"`
		Options     []struct {
			ID    string `json:"id"`
			Label string `json:"label"`
			Votes int    `json:"votes"`
		} `json:"options"`
		Voters   int `json:"voters"`
		Replaced int `json:"replaced"`
		Invalid  []struct {
			EventID string `json:"event_id"`
			Actor   string `json:"actor"`
			Reason  string `json:"reason"`
		} `json:"invalid"`
		Leading []string `json:"leading"`
		MyVote  []string `json:"my_vote"`
		Votes   []struct {
			Actor     string   `json:"actor"`
			OptionIDs []string `json:"option_ids"`
		} `json:"votes"`
	} `json:"polls"`
	MorePolls int `json:"more_polls"`
}

func TestDeliberationTally(t *testing.T) {
	t.Parallel()
	forBuilds(t, deliberationDir, func(t *testing.T, p *plugin.Plugin) {
		r := newRoom()
		p1 := r.add("poll.create", "alice", with(pollPayload("p1", "a", "b", "c"), "max_choices", 2, "closes_at", now+3600_000))
		vote := func(actor, poll string, options ...string) string {
			return r.add("poll.vote", actor, obj{"poll_event_id": poll, "option_ids": options})
		}
		vote("alice", p1, "a")
		vote("bob", p1, "b")
		vote("alice", p1, "a", "c") // replaces alice's first vote
		badOption := vote("bob", p1, "d")
		vote("me", p1, "b")
		tooMany := vote("bob", p1, "a", "b", "c")
		// p2 closed between two votes: the late one is invalid.
		p2 := r.add("poll.create", "bob", with(pollPayload("p2", "yes", "no"), "closes_at", acceptedAt(r.lastSeq()+3)+30_000))
		vote("alice", p2, "yes")
		vote("me", p2, "no")
		late := vote("bob", p2, "no")
		gone := vote("olga", p2, "yes")
		r.redact(gone)

		var out tallyOut
		text := call(t, p, r, "tally", nil, &out)
		if out.RoomID != roomID || !out.Complete || len(out.Polls) != 2 || out.MorePolls != 0 {
			t.Fatalf("tally %+v", out)
		}
		t2, t1 := out.Polls[0], out.Polls[1] // newest first
		if t1.PollEventID != p1 || t1.PollID != "p1" || !t1.Open || t1.Voters != 3 || t1.Replaced != 1 ||
			len(t1.Options) != 3 || t1.Options[0].Votes != 1 || t1.Options[1].Votes != 2 || t1.Options[2].Votes != 1 ||
			t1.Options[1].Label != "B" || strings.Join(t1.Leading, ",") != "b" || strings.Join(t1.MyVote, ",") != "b" || t1.Votes != nil {
			t.Errorf("p1 %+v", t1)
		}
		if len(t1.Invalid) != 2 || t1.Invalid[0].EventID != badOption || t1.Invalid[0].Reason != `"d" is not an option` ||
			t1.Invalid[1].EventID != tooMany || t1.Invalid[1].Actor != agent("bob") || t1.Invalid[1].Reason != "3 options chosen; the poll says choose 1 to 2" {
			t.Errorf("p1 invalid %+v", t1.Invalid)
		}
		if t2.PollEventID != p2 || t2.Open || t2.Voters != 2 || t2.Options[0].Votes != 1 || t2.Options[1].Votes != 1 ||
			strings.Join(t2.Leading, ",") != "yes,no" || len(t2.Invalid) != 1 || t2.Invalid[0].EventID != late ||
			t2.Invalid[0].Reason != "accepted after the poll closed" {
			t.Errorf("p2 %+v", t2)
		}
		for _, want := range []string{
			"Polls in room " + roomID + ", newest first:",
			`- "Which cache policy?" (poll_id p2, event ` + p2 + ", closed; choose 1): yes 1, no 1 — 2 voters; leading: yes, no; you voted no; 1 invalid vote ignored",
			`- "Which cache policy?" (poll_id p1, event ` + p1 + ", open, closes in 60m; choose 1 to 2): a 1, b 2, c 1 — 3 voters; leading: b; you voted b; 2 invalid votes ignored",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("text lacks %q:\n%s", want, text)
			}
		}

		// Filters, the ballots, a limit.
		call(t, p, r, "tally", obj{"open_only": true, "include_votes": true}, &out)
		if len(out.Polls) != 1 || out.Polls[0].PollID != "p1" || len(out.Polls[0].Votes) != 3 ||
			out.Polls[0].Votes[0].Actor != agent("bob") || out.Polls[0].Votes[1].Actor != agent("alice") ||
			strings.Join(out.Polls[0].Votes[1].OptionIDs, ",") != "a,c" {
			t.Errorf("open polls with votes %+v", out.Polls)
		}
		call(t, p, r, "tally", obj{"poll_event_id": p2}, &out)
		if len(out.Polls) != 1 || out.Polls[0].PollID != "p2" {
			t.Errorf("one poll %+v", out.Polls)
		}
		text = call(t, p, r, "tally", obj{"limit": 1}, &out)
		if len(out.Polls) != 1 || out.MorePolls != 1 || !strings.Contains(text, "(1 more poll; raise limit to see them)") {
			t.Errorf("limit %+v\n%s", out, text)
		}
		missing := id43("event", "no poll")
		if got := callError(t, p, "tally", obj{"room_id": roomID, "poll_event_id": missing}, toolContext(t, p, "tally", r)); !strings.Contains(got, "no poll "+missing) {
			t.Errorf("unknown poll: %q", got)
		}
	})
}
