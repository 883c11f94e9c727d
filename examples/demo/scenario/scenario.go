// Package scenario is the two-agent story of `make demo`, run through real
// MCP client sessions (to `apconnect mcp` processes in the demo and in the
// end-to-end tests), across all five protocols: a room created with an
// invitation; a delegation the room's creator grants the other agent for a
// principal she controls (Agent Delegation); a join by request, approved
// after that delegation is checked; a mention that wakes the other agent
// through agent_protocols_inbox_next, a transient status, a reply sent
// while the other agent also spoke (messages never conflict), an agenda
// change that lands while an agent drafts and holds its next write as a
// draft, the draft's revision, and the room's close (Agent Discourse); a
// private letter and its threaded reply (Agent Mail); and the room's
// conclusion published, found and checked (Agent Knowledge). It checks every
// result it relies on and prints a readable transcript.
//
// scenario.go holds the driver and the Discourse steps; delegation.go,
// mail.go and knowledge.go the steps of the other protocols.
package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Agent is one agent's MCP client session.
type Agent struct {
	// Name labels the agent in the transcript.
	Name string
	// Session is the MCP client session to its connector.
	Session *mcp.ClientSession
	// ID is its Agent ID, filled in by Run.
	ID string
}

// Scenario is what Run needs.
type Scenario struct {
	// Host is the origin of the ADP host both agents are configured with:
	// the local hub, which is also their delegation, mail and knowledge
	// service.
	Host string
	// Principal is the URL of a principal Host hosts whose controller is
	// Alice (`apconnect hub principal put --name alice-org --controller
	// ALICE`); she delegates to Bob for it.
	Principal string
	// Alice creates and moderates the room; Bob joins it.
	Alice, Bob *Agent
	// Out receives the transcript (io.Discard when nil).
	Out io.Writer
	// RestartBob, when set, restarts bob's connector in the middle of the
	// discussion: it stops bob's process, runs while (alice's mention,
	// sent while bob is down), starts bob again and returns the new
	// session. bob must catch up from the host's history.
	RestartBob func(ctx context.Context, while func() error) (*mcp.ClientSession, error)
	// Wait bounds each wait for the other agent (30 s when zero).
	Wait time.Duration
}

// Result is what the discussion produced.
type Result struct {
	// RoomID is the room's id on Host.
	RoomID string
	// ArchiveURL is the room's archive manifest.
	ArchiveURL string
	// Records is the number of records the room ended with.
	Records int64
	// Calls counts the tool calls made.
	Calls int
	// KnowledgeID is the event ID of Bob's published conclusion, and
	// KnowledgeSeq its seq at Host.
	KnowledgeID  string
	KnowledgeSeq int64
}

type run struct {
	*Scenario
	ctx   context.Context
	res   Result
	topic string
	// mentionItem is bob's room.mention inbox item; replyID the event id
	// of his revised reply.
	mentionItem map[string]any
	replyID     string
	// boxes are the agents' mailboxes; letter is alice's letter, reply
	// bob's reply to it.
	boxes         map[*Agent]mailbox
	letter, reply letter
	start         time.Time
}

// ToolError is a tool call that returned an error result.
type ToolError struct {
	Tool    string
	Code    string
	Message string
}

func (e *ToolError) Error() string { return e.Tool + ": " + e.Code + ": " + e.Message }

// Run plays the discussion and returns its result, or the first thing that
// did not go as it should.
func Run(ctx context.Context, s *Scenario) (*Result, error) {
	if s.Out == nil {
		s.Out = io.Discard
	}
	if s.Wait <= 0 {
		s.Wait = 30 * time.Second
	}
	if s.Principal == "" {
		return nil, errors.New("scenario: no Principal (a principal on Host controlled by Alice)")
	}
	r := &run{Scenario: s, ctx: ctx, topic: "Should the signature section require strict Ed25519?", start: time.Now()}
	for _, step := range []func() error{r.identities, r.create, r.delegate, r.joinByRequest, r.mention, r.heldDraft, r.closeRoom, r.mail, r.knowledge} {
		if err := step(); err != nil {
			return &r.res, err
		}
	}
	return &r.res, nil
}

// call calls a tool and returns its structured result.
func (r *run) call(a *Agent, tool string, args map[string]any) (map[string]any, error) {
	r.res.Calls++
	if args == nil {
		args = map[string]any{}
	}
	res, err := a.Session.CallTool(r.ctx, &mcp.CallToolParams{Name: "agent_protocols_" + tool, Arguments: args})
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", a.Name, tool, err)
	}
	if res.IsError {
		var body struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				_ = json.Unmarshal([]byte(t.Text), &body)
			}
		}
		return nil, &ToolError{Tool: tool, Code: body.Error.Code, Message: body.Error.Message}
	}
	data, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %s: structured content: %w", a.Name, tool, err)
	}
	return m, nil
}

// waitInbox long-polls an agent's inbox for one item of kind.
func (r *run) waitInbox(a *Agent, kind string) (map[string]any, error) {
	deadline := time.Now().Add(r.Wait)
	for time.Now().Before(deadline) {
		wait := min(time.Until(deadline), 10*time.Second)
		res, err := r.call(a, "inbox_next", map[string]any{"kinds": []any{kind}, "wait_ms": wait.Milliseconds(), "claim": true})
		if err != nil {
			return nil, err
		}
		if items, _ := res["items"].([]any); len(items) > 0 {
			it, _ := items[0].(map[string]any)
			return it, nil
		}
	}
	return nil, fmt.Errorf("%s: no %s inbox item within %s", a.Name, kind, r.Wait)
}

func (r *run) section(title string) { fmt.Fprintf(r.Out, "\n== %s\n", title) }

func (r *run) say(a *Agent, format string, args ...any) {
	fmt.Fprintf(r.Out, "  %5.1fs [%-5s] %s\n", time.Since(r.start).Seconds(), a.Name, fmt.Sprintf(format, args...))
}

func (r *run) who(id any) string {
	switch id {
	case r.Alice.ID:
		return "alice"
	case r.Bob.ID:
		return "bob"
	}
	return fmt.Sprint(id)
}

func str(v any, path ...string) string {
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	switch t := v.(type) {
	case string:
		return t
	case float64:
		return fmt.Sprint(int64(t))
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

func num(v any, path ...string) int64 {
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	f, _ := v.(float64)
	return int64(f)
}

func expect(ok bool, format string, args ...any) error {
	if ok {
		return nil
	}
	return fmt.Errorf("unexpected: "+format, args...)
}

func short(id string) string {
	if len(id) > 22 {
		return id[:18] + "…"
	}
	return id
}

func (r *run) identities() error {
	r.section("Two agents, each behind its own apconnect mcp process")
	for _, a := range []*Agent{r.Alice, r.Bob} {
		res, err := r.call(a, "identity_current", nil)
		if err != nil {
			return err
		}
		a.ID = str(res, "agent_id")
		hosts, _ := res["hosts"].([]any)
		if err := expect(strings.HasPrefix(a.ID, "did:agent:") && len(hosts) > 0, "%s's identity %v", a.Name, res); err != nil {
			return err
		}
		r.say(a, "identity_current → signs as %s on %s", a.ID, str(hosts[0], "host"))
	}
	return nil
}

func (r *run) create() error {
	r.section("alice creates a public room and invites bob as an observer")
	now := time.Now().UnixMilli()
	res, err := r.call(r.Alice, "room_create", map[string]any{
		"host": r.Host, "topic": r.topic, "visibility": "public",
		"start_time": now - 1000, "end_time": now + 2*3600_000,
		"agenda":   "Agree whether verifiers must reject non-canonical signatures.",
		"guidance": "Cite the spec section you rely on. Keep replies short.",
		"tags":     []any{"signatures", "review"}, "language": "en",
		// Anyone may read; nobody joins openly; bob is invited to listen.
		"policy": map[string]any{"open_roles": []any{}, "invites": map[string]any{r.Bob.ID: "observer"}},
		"types":  []any{map[string]any{"use": "adp:reactions/1.0"}},
	})
	if err != nil {
		return err
	}
	r.res.RoomID = str(res, "room", "room_id")
	r.res.ArchiveURL = r.Host + "/v1/rooms/" + r.res.RoomID + "/archive"
	if err := expect(r.res.RoomID != "" && num(res, "sync", "head_seq") == 1, "room_create %v", res); err != nil {
		return err
	}
	r.say(r.Alice, "room_create → room %s (public, open roles: none, bob invited as observer), head seq 1", r.res.RoomID)
	return nil
}

func (r *run) joinByRequest() error {
	r.section("bob asks to join as a speaker; alice reviews the request")
	// (Not subscribe: true. Live streams are for members; the room becomes
	// live for bob when he joins.)
	open, err := r.call(r.Bob, "room_open", map[string]any{"host": r.Host, "room_id": r.res.RoomID})
	if err != nil {
		return err
	}
	if err := expect(str(open, "room", "topic") == r.topic, "room_open %v", open); err != nil {
		return err
	}
	r.say(r.Bob, "room_open → topic %q, %d member, %d verified record", str(open, "room", "topic"), num(open, "room", "members_count"), num(open, "sync", "synced_seq"))
	join, err := r.call(r.Bob, "room_join", map[string]any{"room_id": r.res.RoomID, "role": "speaker",
		"perspective": "signature reviewer", "reason": "I review for your organization and maintain a strict Ed25519 verifier."})
	if err != nil {
		return err
	}
	reqID := str(join, "join_request", "id")
	if err := expect(str(join, "status") == "approval_required" && reqID != "", "room_join %v", join); err != nil {
		return err
	}
	r.say(r.Bob, "room_join role=speaker → approval_required: invited only as an observer, so join request %s is pending", short(reqID))

	item, err := r.waitInbox(r.Alice, "room.join.requested")
	if err != nil {
		return err
	}
	r.say(r.Alice, "inbox_next → %s from %s (request %s)", str(item, "kind"), r.who(item["actor"]), short(str(item, "event_id")))
	list, err := r.call(r.Alice, "join_requests_list", map[string]any{"room_id": r.res.RoomID, "status": "pending"})
	if err != nil {
		return err
	}
	reqs, _ := list["join_requests"].([]any)
	if err := expect(len(reqs) == 1 && str(reqs[0], "id") == reqID, "join_requests_list %v", list); err != nil {
		return err
	}
	r.say(r.Alice, "join_requests_list → 1 pending request: role %s, perspective %q", str(reqs[0], "request", "event", "payload", "role"),
		str(reqs[0], "request", "event", "payload", "perspective"))
	if err := r.checkDelegation(); err != nil {
		return err
	}
	rev, err := r.call(r.Alice, "join_request_review", map[string]any{"room_id": r.res.RoomID, "request_id": reqID,
		"decision": "approve", "role": "speaker", "reason": "Welcome; the verifier edge cases are exactly what we need."})
	if err != nil {
		return err
	}
	r.say(r.Alice, "join_request_review approve as speaker → signed room.join.review, room at seq %d", num(rev, "sync", "synced_seq"))
	if _, err := r.call(r.Alice, "inbox_ack", map[string]any{"ids": []any{item["id"]}, "action": "handled"}); err != nil {
		return err
	}

	// ADP streams live records to active members only, so a pending
	// applicant learns of the review by asking: calling room_join again
	// re-reads the stored request and completes the membership.
	done, err := r.call(r.Bob, "room_join", map[string]any{"room_id": r.res.RoomID, "role": "speaker"})
	if err != nil {
		return err
	}
	if err := expect(str(done, "status") == "joined" && str(done, "member", "role") == "speaker", "room_join completion %v", done); err != nil {
		return err
	}
	r.say(r.Bob, "room_join role=speaker (again) → the request was approved: joined as %s", str(done, "member", "role"))
	ap, err := r.call(r.Bob, "inbox_next", map[string]any{"kinds": []any{"room.join.approved"}})
	if err != nil {
		return err
	}
	items, _ := ap["items"].([]any)
	if err := expect(len(items) == 1, "bob's room.join.approved item %v", ap); err != nil {
		return err
	}
	r.say(r.Bob, "inbox_next → %s (%s), acknowledged", str(items[0], "kind"), str(items[0], "message", "summary"))
	_, err = r.call(r.Bob, "inbox_ack", map[string]any{"ids": []any{str(items[0], "id")}, "action": "handled"})
	return err
}

func (r *run) mention() error {
	r.section("A mention wakes bob through inbox_next")
	if _, err := r.call(r.Alice, "room_timeline", map[string]any{"room_id": r.res.RoomID, "unread_only": true, "mark_read": true, "refresh": true}); err != nil {
		return err
	}
	send := func() error {
		res, err := r.call(r.Alice, "room_send_message", map[string]any{"room_id": r.res.RoomID,
			"content":  "Bob, does our verifier reject non-canonical S values, as Agent Identity 3.1 requires?",
			"mentions": []any{r.Bob.ID}})
		if err != nil {
			return err
		}
		if err := expect(str(res, "status") == "sent", "alice's mention %v", res); err != nil {
			return err
		}
		r.say(r.Alice, "room_send_message mentioning bob → sent as seq %d: %q", num(res, "item", "seq"), str(res, "item", "content"))
		return nil
	}
	if r.RestartBob != nil {
		r.say(r.Bob, "(bob's connector process is stopped; alice speaks while it is down)")
		cs, err := r.RestartBob(r.ctx, send)
		if err != nil {
			return err
		}
		r.Bob.Session = cs
		r.say(r.Bob, "(bob's connector process started again: it catches up from the host's history)")
	} else if err := send(); err != nil {
		return err
	}
	item, err := r.waitInbox(r.Bob, "room.mention")
	if err != nil {
		return err
	}
	r.say(r.Bob, "inbox_next (long poll) → %s from %s at seq %d, priority %s", str(item, "kind"), r.who(item["actor"]), num(item, "seq"), str(item, "priority"))
	r.mentionItem = item
	return nil
}

func (r *run) heldDraft() error {
	r.section("Read, announce, reply: messages never conflict")
	tl, err := r.call(r.Bob, "room_timeline", map[string]any{"room_id": r.res.RoomID, "unread_only": true, "mark_read": true})
	if err != nil {
		return err
	}
	items, _ := tl["items"].([]any)
	r.say(r.Bob, "room_timeline unread_only, mark_read → %d new records; presented head seq %d (messages do not move the head)", len(items), num(tl, "sync", "presented_seq"))
	st, err := r.call(r.Bob, "agent_status_set", map[string]any{"room_id": r.res.RoomID, "state": "drafting",
		"summary": "Checking the verifier against the 3.1 vectors", "activity": "reviewing"})
	if err != nil {
		return err
	}
	r.say(r.Bob, "agent_status_set drafting → seen seq %d (no event signed)", num(st, "status", "seen_seq"))
	sl, err := r.call(r.Alice, "agent_status_list", map[string]any{"room_id": r.res.RoomID, "refresh": true})
	if err != nil {
		return err
	}
	statuses, _ := sl["statuses"].([]any)
	if err := expect(len(statuses) == 1 && str(statuses[0], "state") == "drafting", "alice's status list %v", sl); err != nil {
		return err
	}
	r.say(r.Alice, "agent_status_list → bob is %s: %q", str(statuses[0], "state"), str(statuses[0], "summary"))
	more, err := r.call(r.Alice, "room_send_message", map[string]any{"room_id": r.res.RoomID,
		"content": "Also: which vectors do you run it against?"})
	if err != nil {
		return err
	}
	r.say(r.Alice, "room_send_message → sent as seq %d while bob was drafting", num(more, "item", "seq"))
	reply, err := r.call(r.Bob, "room_send_message", map[string]any{"room_id": r.res.RoomID,
		"content": "Yes: it rejects S >= L and small-order keys.", "references": []any{r.mentionItem["event_id"]}})
	if err != nil {
		return err
	}
	if err := expect(str(reply, "status") == "sent", "bob's reply should be sent (a message does not move the head), got %v", reply); err != nil {
		return err
	}
	r.say(r.Bob, "room_send_message → sent as seq %d on base seq %d: alice's message arrived meanwhile, but messages never conflict",
		num(reply, "item", "seq"), num(reply, "sync", "presented_seq"))
	r.replyID = str(reply, "item", "event_id")

	r.section("The agenda moves while bob drafts: his next write is held")
	upd, err := r.call(r.Alice, "room_submit_event", map[string]any{"room_id": r.res.RoomID, "type": "room.update",
		"payload": map[string]any{"agenda": "Agree whether verifiers must reject non-canonical signatures, and check the new nonce bound."}})
	if err != nil {
		return err
	}
	if err := expect(str(upd, "status") == "sent" && num(upd, "sync", "head_seq") == num(upd, "item", "seq"), "alice's room.update %v", upd); err != nil {
		return err
	}
	r.say(r.Alice, "room_submit_event room.update (agenda) → sent as seq %d: a contract change, the room head is now seq %d", num(upd, "item", "seq"), num(upd, "sync", "head_seq"))
	held, err := r.call(r.Bob, "room_send_message", map[string]any{"room_id": r.res.RoomID,
		"content": "I will post our vector results for the S edge cases next."})
	if err != nil {
		return err
	}
	draftID := str(held, "draft", "id")
	if err := expect(str(held, "status") == "held" && draftID != "", "bob's follow-up should be held, got %v", held); err != nil {
		return err
	}
	changes, _ := held["changes"].([]any)
	r.say(r.Bob, "room_send_message → HELD (%s): based on seq %d, and a head-advancing record was accepted since (%d record(s) in changes); draft %s",
		str(held, "reason"), num(held, "draft", "base_seq"), len(changes), draftID)
	got, err := r.call(r.Bob, "draft_get", map[string]any{"draft_id": draftID})
	if err != nil {
		return err
	}
	ch, _ := got["changes"].([]any)
	if err := expect(len(ch) > 0, "draft_get changes %v", got); err != nil {
		return err
	}
	last := ch[len(ch)-1]
	if err := expect(str(last, "type") == "room.update", "the last change should be the room.update, got %v", last); err != nil {
		return err
	}
	r.say(r.Bob, "draft_get → the change he missed: %s changed the agenda to %q", r.who(str(last, "actor")), str(last, "payload", "agenda"))
	sent, err := r.call(r.Bob, "draft_commit", map[string]any{"draft_id": draftID, "action": "revise",
		"content": "I will post our vector results for the S edge cases and for the new nonce bound next."})
	if err != nil {
		return err
	}
	if err := expect(str(sent, "status") == "sent", "draft_commit revise %v", sent); err != nil {
		return err
	}
	r.say(r.Bob, "draft_commit revise → sent as seq %d: %q", num(sent, "item", "seq"), str(sent, "item", "content"))
	if _, err := r.call(r.Bob, "inbox_ack", map[string]any{"ids": []any{r.mentionItem["id"]}, "action": "handled"}); err != nil {
		return err
	}
	if _, err := r.call(r.Bob, "agent_status_set", map[string]any{"room_id": r.res.RoomID, "state": "idle", "expires_at": time.Now().UnixMilli()}); err != nil {
		return err
	}
	r.say(r.Bob, "inbox_ack handled; agent_status_set expires_at=now → status cleared")
	return nil
}

func (r *run) closeRoom() error {
	r.section("alice reacts, then closes the room")
	item, err := r.waitInbox(r.Alice, "room.message.new")
	if err != nil {
		return err
	}
	r.say(r.Alice, "inbox_next → %s from %s at seq %d", str(item, "kind"), r.who(item["actor"]), num(item, "seq"))
	react, err := r.call(r.Alice, "room_submit_event", map[string]any{"room_id": r.res.RoomID, "type": "reaction.create",
		"payload": map[string]any{"event_id": r.replyID, "reaction": "+1"}})
	if err != nil {
		return err
	}
	r.say(r.Alice, "room_submit_event reaction.create +1 → sent as seq %d (a signal: no freshness check)", num(react, "item", "seq"))
	if _, err := r.call(r.Alice, "room_timeline", map[string]any{"room_id": r.res.RoomID, "unread_only": true, "mark_read": true}); err != nil {
		return err
	}
	closed, err := r.call(r.Alice, "room_submit_event", map[string]any{"room_id": r.res.RoomID, "type": "room.close",
		"payload": map[string]any{"reason": "Settled: strict verification stays."}})
	if err != nil {
		return err
	}
	if err := expect(str(closed, "status") == "sent", "room.close %v", closed); err != nil {
		return err
	}
	r.say(r.Alice, "room_submit_event room.close → sent as seq %d", num(closed, "item", "seq"))
	if _, err := r.call(r.Alice, "inbox_ack", map[string]any{"ids": []any{item["id"]}, "action": "handled"}); err != nil {
		return err
	}
	deadline := time.Now().Add(r.Wait)
	for {
		st, err := r.call(r.Bob, "room_state", map[string]any{"room_id": r.res.RoomID, "refresh": true})
		if err != nil {
			return err
		}
		if str(st, "room", "status") == "ended" {
			r.res.Records = num(st, "sync", "synced_seq")
			r.say(r.Bob, "room_state → the room has ended; %d verified records, head seq %d", r.res.Records, num(st, "sync", "head_seq"))
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("bob never saw the room end")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
