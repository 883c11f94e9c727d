package plugins_test

import (
	"strings"
	"testing"

	"apconnect/host/plugin"
)

const moderationDir = "moderation"

func TestModerationTurn(t *testing.T) {
	t.Parallel()
	forBuilds(t, moderationDir, func(t *testing.T, p *plugin.Plugin) {
		r := newRoom()
		v := func(what, actor string, payload obj, want ...refusal) {
			t.Helper()
			wantErrs(t, what, validate(t, p, r, "turn.update", actor, payload), want...)
		}
		turn := func(id int, speaker string, extra ...any) obj {
			return with(obj{"turn_id": id, "speaker": agent(speaker), "topic": "eviction"}, extra...)
		}
		v("the first turn", "alice", turn(7, "bob"))
		r.add("turn.update", "alice", turn(3, "bob"))
		five := r.add("turn.update", "alice", turn(5, "me", "expires_at", now+600_000))
		hidden := r.add("turn.update", "alice", turn(4, "bob"))
		r.redact(hidden)

		v("the next turn", "alice", turn(6, "bob", "expires_at", now+600_000, "intent", "answer the benchmark question"))
		v("the creator's turn", "alice", turn(9, "alice"))
		v("a repeated turn_id", "alice", turn(5, "bob"),
			refusal{"/payload/turn_id", "turn_id 5 is not greater than 5, the turn of event " + five + "; turn ids strictly increase in a room"})
		v("a lower turn_id", "alice", turn(4, "bob"), refusal{"/payload/turn_id", "turn_id 4 is not greater than 5"})
		v("an expired turn", "alice", turn(6, "bob", "expires_at", now),
			refusal{"/payload/expires_at", "expires_at 1779753700000 is not after the event's creation (now 1779753700000)"})
		v("an observer", "alice", turn(6, "olga"),
			refusal{"/payload/speaker", agent("olga") + " is an observer and cannot write messages"})
		v("a stranger, late", "alice", turn(2, "mallory", "expires_at", 5),
			refusal{"/payload/turn_id", "turn_id 2 is not greater than 5"},
			refusal{"/payload/expires_at", "expires_at 5 is not after"},
			refusal{"/payload/speaker", agent("mallory") + " is not an active member of the room"})
	})
}

// claimRoom holds claims in every state:
//
//	c1 claimed by bob (lease 1h)       c4 completed by bob
//	c2 bob handing to me               c5 claimed by bob, lease lapsed
//	c3 released by me                  c6 claimed by bob, scope resource
func claimRoom() (*room, map[string]string) {
	r := newRoom()
	ev := map[string]string{}
	c := func(id, owner, state string, extra ...any) string {
		ev[id+"/"+state] = r.add("claim.update", "alice", with(obj{"claim_id": id, "owner": agent(owner), "state": state}, extra...))
		return ev[id+"/"+state]
	}
	c("c1", "bob", "claimed", "expires_at", now+3600_000, "intent", "Write the load test")
	c("c2", "bob", "claimed", "intent", "Write the benchmark")
	c("c2", "bob", "handoff", "handoff_to", agent("me"), "intent", "Write the benchmark", "expires_at", now+3600_000)
	c("c3", "me", "claimed")
	c("c3", "me", "released")
	c("c4", "bob", "claimed")
	c("c4", "bob", "completed")
	c("c5", "bob", "claimed", "expires_at", now-1)
	c("c6", "bob", "claimed", "scope", "resource")
	return r, ev
}

func TestModerationClaimTransitions(t *testing.T) {
	t.Parallel()
	forBuilds(t, moderationDir, func(t *testing.T, p *plugin.Plugin) {
		r, ev := claimRoom()
		v := func(what, actor string, payload obj, want ...refusal) {
			t.Helper()
			wantErrs(t, what, validate(t, p, r, "claim.update", actor, payload), want...)
		}
		claim := func(id, owner, state string, extra ...any) obj {
			return with(obj{"claim_id": id, "owner": agent(owner), "state": state}, extra...)
		}

		v("a new claim", "alice", claim("c9", "me", "claimed", "expires_at", now+60_000))
		v("a new claim that is not claimed", "alice", claim("c9", "me", "released"),
			refusal{"/payload/state", `claim "c9" does not exist yet; its first update must be "claimed"`})
		v("the owner renews", "alice", claim("c1", "bob", "claimed", "expires_at", now+7200_000))
		v("another owner on a held claim", "alice", claim("c1", "me", "claimed"),
			refusal{"/payload/owner", `claim "c1" is held by ` + agent("bob") + " (event " + ev["c1/claimed"] + ") until 1779757300000; it must be released or handed off first"})
		v("a handoff", "alice", claim("c1", "bob", "handoff", "handoff_to", agent("me")))
		v("a handoff by someone else", "alice", claim("c1", "me", "handoff", "handoff_to", agent("bob")),
			refusal{"/payload/owner", `claim "c1" is held by ` + agent("bob") + " (event " + ev["c1/claimed"] + "), not by " + agent("me")})
		v("a handoff to the owner", "alice", claim("c1", "bob", "handoff", "handoff_to", agent("bob")),
			refusal{"/payload/handoff_to", "a claim cannot be handed to its own owner"})
		v("a handoff to a stranger", "alice", claim("c1", "bob", "handoff", "handoff_to", agent("mallory")),
			refusal{"/payload/handoff_to", agent("mallory") + " is not an active member of the room"})
		v("handoff_to without a handoff", "alice", claim("c1", "bob", "released", "handoff_to", agent("me")),
			refusal{"/payload/handoff_to", `handoff_to is only used with state "handoff"`})
		v("completed by the owner", "alice", claim("c1", "bob", "completed"))

		v("the handoff accepted", "alice", claim("c2", "me", "claimed"))
		v("the handoff taken back", "alice", claim("c2", "bob", "claimed"))
		v("the handoff taken by a third agent", "alice", claim("c2", "alice", "claimed"),
			refusal{"/payload/owner", `claim "c2" is being handed to ` + agent("me") + " (event " + ev["c2/handoff"] + "); only they can take it (or " + agent("bob") + " take it back)"})
		v("the handoff retargeted", "alice", claim("c2", "bob", "handoff", "handoff_to", agent("alice")))
		v("the handoff cancelled by the owner", "alice", claim("c2", "bob", "cancelled"))
		v("the handoff released by its target", "alice", claim("c2", "me", "released"),
			refusal{"/payload/owner", `claim "c2" is held by ` + agent("bob")})

		v("a released claim claimed again", "alice", claim("c3", "bob", "claimed"))
		v("a released claim completed", "alice", claim("c3", "me", "completed"),
			refusal{"/payload/state", `claim "c3" was released (event ` + ev["c3/released"] + `); only "claimed" can follow`})
		v("a completed claim", "alice", claim("c4", "bob", "claimed"),
			refusal{"/payload/state", `claim "c4" is completed (event ` + ev["c4/completed"] + "); it cannot change (use a new claim_id)"})
		v("a lapsed claim taken over", "alice", claim("c5", "me", "claimed", "expires_at", now+60_000))
		v("a scope change", "alice", claim("c6", "bob", "released"),
			refusal{"/payload/scope", `claim "c6" is a resource claim; its scope cannot change`})
		v("an owner who is not a member, with an old lease", "alice", claim("c9", "mallory", "claimed", "expires_at", now-60_000),
			refusal{"/payload/owner", agent("mallory") + " is not an active member of the room"},
			refusal{"/payload/expires_at", "is not after the event's creation"})

		// A speaker allowed to self-claim (a roles override) updates only its own claims.
		v("a speaker releases its claim", "bob", claim("c1", "bob", "released"))
		v("a speaker accepts a handoff", "me", claim("c2", "me", "claimed"))
		v("a speaker claims for another", "me", claim("c9", "bob", "claimed"),
			refusal{"/payload/owner", "a speaker can only update its own claims: owner must be " + agent("me")})

		// What the context cannot show is not refused.
		hidden := r.add("claim.update", "alice", claim("c1", "bob", "released"))
		r.redact(hidden)
		v("a claim whose latest update was redacted", "alice", claim("c1", "me", "claimed"))
		r.whole = false
		v("an unknown claim in a partial room", "alice", claim("c10", "me", "completed"))
	})
}

func TestModerationWatch(t *testing.T) {
	t.Parallel()
	forBuilds(t, moderationDir, func(t *testing.T, p *plugin.Plugin) {
		r, _ := claimRoom()
		after := r.lastSeq()
		r.add("claim.update", "bob", obj{"claim_id": "c7", "owner": agent("bob"), "state": "handoff", "handoff_to": agent("me"),
			"intent": "Review <script>the</script> patch", "expires_at": now + 2*3600_000})
		r.add("claim.update", "alice", obj{"claim_id": "c8", "owner": agent("me"), "state": "claimed"})
		r.add("claim.update", "me", obj{"claim_id": "c9", "owner": agent("me"), "state": "claimed"})
		r.add("claim.update", "alice", obj{"claim_id": "c10", "owner": agent("bob"), "state": "handoff", "handoff_to": agent("alice")})
		r.add("claim.update", "alice", obj{"claim_id": "c11", "owner": agent("me"), "state": "claimed", "expires_at": now - 1})

		items := watch(t, p, r, after)
		if len(items) != 2 {
			t.Fatalf("items %+v", items)
		}
		tools := "moderation_active_claims,agent_protocols_room_submit_event"
		if it := items[0]; it.Seq != after+1 || it.Priority != "high" || !it.RequiresResponse || it.Reason != "claim handed to you" ||
			it.Summary != "Claim handed to you: c7: Review ‹script›the‹/script› patch (lease ends in 2h), from "+agent("bob") ||
			strings.Join(it.SuggestedTools, ",") != tools {
			t.Errorf("handoff item %+v", it)
		}
		if it := items[1]; it.Seq != after+2 || it.Priority != "normal" || !it.RequiresResponse || it.Reason != "claim assigned to you" ||
			it.Summary != "Claim assigned to you: c8" {
			t.Errorf("assignment item %+v", it)
		}
	})
}

type claimsOut struct {
	RoomID   string `json:"room_id"`
	Complete bool   `json:"complete"`
	Claims   []struct {
		ClaimID   string `json:"claim_id"`
		State     string `json:"state"`
		Owner     string `json:"owner"`
		Scope     string `json:"scope"`
		HandoffTo string `json:"handoff_to"`
		ExpiresAt *int64 `json:"expires_at"`
		Lapsed    bool   `json:"lapsed"`
		Intent    string `json:"intent"`
		EventID   string `json:"event_id"`
		Updates   int    `json:"updates"`
	} `json:"claims"`
	Lapsed int `json:"lapsed"`
}

func TestModerationActiveClaims(t *testing.T) {
	t.Parallel()
	forBuilds(t, moderationDir, func(t *testing.T, p *plugin.Plugin) {
		r, ev := claimRoom()
		var out claimsOut
		text := call(t, p, r, "active_claims", nil, &out)
		var ids []string
		for _, c := range out.Claims {
			ids = append(ids, c.ClaimID+":"+c.State)
		}
		if got := strings.Join(ids, " "); got != "c6:claimed c2:handoff c1:claimed" || out.Lapsed != 1 || !out.Complete {
			t.Fatalf("claims %s, %+v", got, out)
		}
		c2 := out.Claims[1]
		if c2.Owner != agent("bob") || c2.HandoffTo != agent("me") || c2.Intent != "Write the benchmark" || c2.EventID != ev["c2/handoff"] ||
			c2.Updates != 2 || c2.ExpiresAt == nil || c2.Lapsed || out.Claims[0].Scope != "resource" {
			t.Errorf("c2 %+v", c2)
		}
		for _, want := range []string{
			"Active claims in room " + roomID + ", most recently updated first:",
			`- "c2" (task) held by ` + agent("bob") + ", being handed to you; lease ends in 60m: Write the benchmark (event " + ev["c2/handoff"] + ")",
			`- "c1" (task) claimed by ` + agent("bob") + "; lease ends in 60m: Write the load test",
			"(1 claim with a lapsed lease not shown; include_lapsed lists them)",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("text lacks %q:\n%s", want, text)
			}
		}

		call(t, p, r, "active_claims", obj{"owner": agent("me")}, &out)
		if len(out.Claims) != 1 || out.Claims[0].ClaimID != "c2" {
			t.Errorf("mine %+v", out.Claims)
		}
		text = call(t, p, r, "active_claims", obj{"include_lapsed": true}, &out)
		if len(out.Claims) != 4 || out.Claims[1].ClaimID != "c5" || !out.Claims[1].Lapsed || out.Claims[1].HandoffTo != "" || !strings.Contains(text, "claimed by "+agent("bob")+"; lease lapsed") {
			t.Errorf("with lapsed %+v\n%s", out.Claims, text)
		}
	})
}
