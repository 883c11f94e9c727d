// Command moderation_go is the Go version of apconnect's first-party plugin
// moderation (plugins/moderation, written in Rust), kept as an example of a
// plugin written with the Go guest SDK: the same description, rules, texts
// and results, so that either file can be configured as "moderation" (the
// tests of plugins/ run against both). It is for the registered type pack
// adp:moderation/1.0 (Agent Discourse 1.0, Appendix A.4).
//
// Validators, beyond what the pack's schemas say:
//
//   - turn.update: turn_id strictly greater than every turn_id of the
//     room's turn.update records; expires_at after the event's creation
//     (now_ms); the speaker an active member who may write messages (not an
//     observer, unless it is the room's creator);
//   - claim.update: the claim's state machine (below), handoff_to only
//     with state "handoff", never the owner itself and an active member;
//     the owner of a "claimed" update an active member; expires_at after
//     the event's creation; the scope of a claim never changes; a speaker
//     (allowed by a roles override to self-claim) updates only claims it
//     owns.
//
// The claim state machine, over the latest claim.update of a claim_id:
//
//	(none)     → claimed
//	claimed    → claimed (the owner renews; anyone once the lease lapsed),
//	             handoff, released, completed, cancelled (by the owner)
//	handoff    → claimed (by handoff_to, or the owner taking it back;
//	             anyone once the lease lapsed), handoff, released,
//	             completed, cancelled (by the owner)
//	released   → claimed (by anyone)
//	completed, cancelled: final (a new claim_id starts over)
//
// Watch rule: a claim handed to this agent (state "handoff" with
// handoff_to = this agent), or assigned to it by another agent (state
// "claimed" with owner = this agent). Turns are the connector's own inbox
// kind (turn_assigned), so they are not watched here.
//
// Tool (moderation_active_claims): the claims whose latest state is
// "claimed" or "handoff", with their owners and leases.
//
// The latest update of a claim is the latest the room context holds; with
// a partial context (older records not held) a claim the context does not
// show may exist, so its first update is not required to be "claimed".
package main

import "apconnect/sdk-guest/plugin"

func init() {
	plugin.Register(plugin.Plugin{
		Name:    "moderation",
		Version: "1.0.0",
		Description: "Checks adp:moderation/1.0 turns (strictly increasing turn_id) and claims (state transitions, " +
			"handoffs, leases), wakes the agent for claims handed to it, and lists active claims.",
		Validators: map[string]plugin.ValidateFunc{
			typeTurn:  validateTurn,
			typeClaim: validateClaim,
		},
		Watchers: map[string]plugin.WatchFunc{typeClaim: watchClaim},
		Tools:    []plugin.Tool{activeClaimsTool},
	})
}

func main() {}

// The types of adp:moderation/1.0 the plugin reads.
const (
	typeTurn  = "turn.update"
	typeClaim = "claim.update"
)
