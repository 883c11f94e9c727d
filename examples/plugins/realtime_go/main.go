// Command realtime_go is the Go version of apconnect's first-party plugin
// realtime (plugins/realtime, written in Rust), kept as an example of a
// plugin written with the Go guest SDK: the same description, rules, texts
// and results, so that either file can be configured as "realtime" (the
// tests of plugins/ run against both). It is for the registered type pack
// adp:realtime/1.0 (Agent Discourse 1.0, Appendix A.5): WebRTC signaling
// over signed room events.
//
// Validators, beyond what the pack's schemas say:
//
//   - session.offer: session_id unique in the room; every "to" target an
//     active member other than the sender; expires_at in the future;
//     transfer ids unique, and "file" among the media when transfers are
//     announced; the SDP is a session description ("v=0") that carries its
//     ICE candidates (trickled candidates would each become a record);
//   - session.answer: offer_event_id names a session.offer record of the
//     room with the same session_id, that is neither the answerer's own,
//     addressed to others, expired nor closed by its sender; accepted_media
//     and transfers are among the offer's; the SDP as for offers;
//   - session.close: the session exists, and the sender takes part in it
//     (offered it, answered it or is one of its targets; anyone may leave
//     an offer made to the whole room).
//
// Watch rule: an offer addressed to this agent (urgent), or an open offer
// to the whole room from another agent, while it has not expired.
//
// Tool (realtime_sessions): the sessions of a room with their state,
// participants, media and announced transfers. SDP bodies are never shown:
// they reveal network addresses.
package main

import "apconnect/sdk-guest/plugin"

func init() {
	plugin.Register(plugin.Plugin{
		Name:    "realtime",
		Version: "1.0.0",
		Description: "Checks adp:realtime/1.0 session offers, answers and closes against the room's sessions, wakes the " +
			"agent for sessions offered to it, and lists sessions (without their SDP).",
		Validators: map[string]plugin.ValidateFunc{
			typeOffer:  validateOffer,
			typeAnswer: validateAnswer,
			typeClose:  validateClose,
		},
		Watchers: map[string]plugin.WatchFunc{typeOffer: watchOffer},
		Tools:    []plugin.Tool{sessionsTool},
	})
}

func main() {}

// The types of adp:realtime/1.0.
const (
	typeOffer  = "session.offer"
	typeAnswer = "session.answer"
	typeClose  = "session.close"
)
