package plugins_test

import (
	"slices"
	"strings"
	"testing"

	"apconnect/host/plugin"
)

const reactionsDir = "reactions"

func TestReactionsValidator(t *testing.T) {
	t.Parallel()
	forBuilds(t, reactionsDir, testReactionsValidator)
}

func testReactionsValidator(t *testing.T, p *plugin.Plugin) {
	r := newRoom()
	msg := r.add("message.create", "bob", obj{"text": "The retry loop can starve the writer queue."})
	gone := r.add("message.create", "alice", obj{"text": "later redacted"})
	r.redact(gone)
	for i := range 30 { // other traffic: the reacted event is found by its ID, not by recency
		r.add("message.create", "alice", obj{"text": "note " + itoa(int64(i))})
	}
	react := func(id string) obj { return obj{"event_id": id, "reaction": "agree", "score": 40} }

	wantErrs(t, "reaction to a message", validate(t, p, r, "reaction.create", "me", react(msg)))
	wantErrs(t, "reaction to a redacted event", validate(t, p, r, "reaction.create", "me", react(gone)))
	missing := id43("event", "nowhere")
	wantErrs(t, "reaction to an unknown event", validate(t, p, r, "reaction.create", "me", react(missing)),
		refusal{"/payload/event_id", "this room has no event " + missing})

	// A host that does not hold the whole room cannot prove absence: the
	// refusal says what it knows.
	r.whole = false
	wantErrs(t, "unknown event, partial room", validate(t, p, r, "reaction.create", "me", react(missing)),
		refusal{"/payload/event_id", "is not among the records of this room that apconnect holds"})
	wantErrs(t, "held event, partial room", validate(t, p, r, "reaction.create", "me", react(msg)))
}

type reactionSummary struct {
	RoomID    string `json:"room_id"`
	Complete  bool   `json:"complete"`
	Reactions int    `json:"reactions"`
	Targets   []struct {
		EventID  string `json:"event_id"`
		Type     string `json:"type"`
		Actor    string `json:"actor"`
		Seq      int64  `json:"seq"`
		Total    int    `json:"total"`
		Reactors int    `json:"reactors"`
		Counts   []struct {
			Reaction string `json:"reaction"`
			Count    int    `json:"count"`
		} `json:"counts"`
		ScoreSum *int64 `json:"score_sum"`
		ScoredBy int    `json:"scored_by"`
	} `json:"targets"`
	MoreTargets int `json:"more_targets"`
}

func TestReactionsSummary(t *testing.T) {
	t.Parallel()
	forBuilds(t, reactionsDir, testReactionsSummary)
}

func testReactionsSummary(t *testing.T, p *plugin.Plugin) {
	r := newRoom()
	m1 := r.add("message.create", "bob", obj{"text": "Proposal: cap the queue."})
	m2 := r.add("message.create", "alice", obj{"text": "Benchmarks attached."})
	r.add("reaction.create", "alice", obj{"event_id": m1, "reaction": "agree", "score": 50})
	r.add("reaction.create", "bob", obj{"event_id": m1, "reaction": "agree"})
	r.add("reaction.create", "bob", obj{"event_id": m1, "reaction": "agree"}) // the same agent counts once
	r.add("reaction.create", "me", obj{"event_id": m1, "reaction": "important", "score": 10})
	r.add("reaction.create", "me", obj{"event_id": m1, "reaction": "important", "score": -20}) // the latest score counts
	r.add("reaction.create", "alice", obj{"event_id": m2, "reaction": "confusing"})
	r.add("reaction.create", "olga", obj{"event_id": m2, "reaction": "<script>alert(1)</script>"})
	hidden := r.add("reaction.create", "olga", obj{"event_id": m2, "reaction": "disagree"})
	r.redact(hidden)
	elsewhere := id43("event", "older than the window")
	r.add("reaction.create", "bob", obj{"event_id": elsewhere, "reaction": "neutral"})

	var s reactionSummary
	text := call(t, p, r, "summary", nil, &s)
	if s.RoomID != roomID || !s.Complete || s.Reactions != 8 || len(s.Targets) != 3 || s.MoreTargets != 0 {
		t.Fatalf("summary %+v", s)
	}
	first := s.Targets[0]
	// The tool's context holds the records of the plugin's types only.
	if first.EventID != m1 || first.Type != "" ||
		first.Total != 5 || first.Reactors != 3 || first.ScoreSum == nil || *first.ScoreSum != 30 || first.ScoredBy != 2 {
		t.Errorf("first target %+v", first)
	}
	if len(first.Counts) != 2 || first.Counts[0].Reaction != "agree" || first.Counts[0].Count != 2 ||
		first.Counts[1].Reaction != "important" || first.Counts[1].Count != 1 {
		t.Errorf("first counts %+v", first.Counts)
	}
	second := s.Targets[1]
	if second.EventID != m2 || second.Total != 2 || second.Reactors != 2 || second.ScoreSum != nil || len(second.Counts) != 2 {
		t.Errorf("second target %+v", second)
	}
	// Hostile reaction text is defused, not allowed to void the result.
	if !slices.ContainsFunc(second.Counts, func(c struct {
		Reaction string `json:"reaction"`
		Count    int    `json:"count"`
	}) bool {
		return c.Reaction == "‹script›alert(1)‹/script›"
	}) {
		t.Errorf("second counts %+v", second.Counts)
	}
	if third := s.Targets[2]; third.EventID != elsewhere || third.Type != "" || third.Total != 1 {
		t.Errorf("third target %+v", third)
	}
	for _, want := range []string{
		"Reactions in room " + roomID + ": 8 on 3 events.",
		"\n- " + m1 + ": agree 2, important 1 — 3 agents; score +30 from 2\n",
		"\n- " + m2 + ": confusing 1, ‹script›alert(1)‹/script› 1 — 2 agents\n",
		"\n- " + elsewhere + ": neutral 1 — 1 agent",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}

	// One target, a limit, a partial room.
	call(t, p, r, "summary", obj{"event_id": m2, "host": "https://127.0.0.1:8443"}, &s)
	if len(s.Targets) != 1 || s.Targets[0].EventID != m2 || s.Reactions != 2 {
		t.Errorf("filtered %+v", s)
	}
	r.whole = false
	text = call(t, p, r, "summary", obj{"limit": 1}, &s)
	if s.Complete || len(s.Targets) != 1 || s.MoreTargets != 2 || !strings.Contains(text, "(2 more events; raise limit to see them)") ||
		!strings.Contains(text, "(partial: older records of this room are not held by apconnect)") {
		t.Errorf("limited %+v\n%s", s, text)
	}

	// No room context: a tool error, not a guess.
	if got := callError(t, p, "summary", obj{"room_id": roomID}, nil); !strings.Contains(got, "no context for room "+roomID) {
		t.Errorf("without context: %q", got)
	}
}
