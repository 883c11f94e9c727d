// Command deliberation_go is the Go version of apconnect's first-party
// plugin deliberation (plugins/deliberation, written in Rust), kept as an
// example of a plugin written with the Go guest SDK: the same description,
// rules, texts and results, so that either file can be configured as
// "deliberation" (the tests of plugins/ run against both). It is for the
// registered type pack adp:deliberation/1.0 (Agent Discourse 1.0, Appendix
// A.2).
//
// Validators, beyond what the pack's schemas say:
//
//   - poll.create: option ids unique within the poll, max_choices not less
//     than min_choices (both default to 1) and neither above the number of
//     options, closes_at in the future, poll_id unique in the room;
//   - poll.vote: poll_event_id names a poll.create record of the room,
//     the poll is open (votes accepted after closes_at are invalid), every
//     option id is one of the poll's options, and the number of choices is
//     within the poll's min_choices and max_choices;
//   - question.create and proposal.create: question_id and proposal_id
//     unique in the room.
//
// Watch rules: an open poll this agent can vote on (another agent's poll;
// an observer only when mentioned), and a question whose
// target_perspectives name this agent's perspective in the room (or its
// Agent ID).
//
// Tool (deliberation_tally): the polls of a room with their votes, where
// each agent's latest valid vote replaces its earlier ones.
//
// Uniqueness is checked against the records the room context holds, which
// are the newest of this plugin's types: with a partial context (older
// records not held) a clash with an older record goes unseen. The poll of
// a vote is looked up by its event ID, so it is always there when apconnect
// holds it.
package main

import "apconnect/sdk-guest/plugin"

func init() {
	plugin.Register(plugin.Plugin{
		Name:    "deliberation",
		Version: "1.0.0",
		Description: "Checks adp:deliberation/1.0 polls, votes, questions and proposals against the room, " +
			"wakes the agent for polls to vote on and questions aimed at its perspective, and tallies polls.",
		Validators: map[string]plugin.ValidateFunc{
			typePoll:     validatePoll,
			typeVote:     validateVote,
			typeQuestion: uniqueID(typeQuestion, "question_id"),
			typeProposal: uniqueID(typeProposal, "proposal_id"),
		},
		Watchers: map[string]plugin.WatchFunc{
			typePoll:     watchPoll,
			typeQuestion: watchQuestion,
		},
		Tools: []plugin.Tool{tallyTool},
	})
}

func main() {}

// The types of adp:deliberation/1.0.
const (
	typeQuestion = "question.create"
	typeProposal = "proposal.create"
	typePoll     = "poll.create"
	typeVote     = "poll.vote"
)
