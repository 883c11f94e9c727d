package room_test

import (
	"encoding/json"
	"strings"
	"testing"

	"apconnect/host/identity"
	"apconnect/host/proto/adp"
	"apconnect/host/room"
	"apconnect/host/room/roomtest"
	"apconnect/host/text"
)

const host = "https://hub.test"

var (
	alice = roomtest.NewAgent("alice") // creator
	bob   = roomtest.NewAgent("bob")   // the connector's agent
	carol = roomtest.NewAgent("carol")
)

func proc(self string) *room.Processor {
	return &room.Processor{Rules: &adp.Rules{Limits: adp.VerifierLimits(), HostOrigin: host}, Host: host, Self: self}
}

func mustProcess(t *testing.T, p *room.Processor, st *room.State, recs []*adp.Record) *room.Result {
	t.Helper()
	res := p.Process(st, recs, room.Options{})
	if res.Failure != nil {
		t.Fatalf("unexpected failure: %v", res.Failure)
	}
	return res
}

func kinds(items []room.InboxItem) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.Kind)
	}
	return out
}

func TestProcessTimelineInboxAndHead(t *testing.T) {
	c := roomtest.NewChain(t, host, "room1", alice, nil)
	c.Join(t, bob, "speaker")
	c.Join(t, carol, "speaker")
	m1 := c.Message(t, carol, "Bob, can you review this?", bob.ID)
	c.Message(t, carol, "plain message")
	c.Message(t, bob, "my own message")

	p := proc(bob.ID)
	res := mustProcess(t, p, nil, c.Records)
	if len(res.Applied) != 6 {
		t.Fatalf("applied %d", len(res.Applied))
	}
	// Joins are signal records: the head stays on room.create until the
	// first message.
	if h := res.Applied[2].Head; h.Seq != 1 {
		t.Fatalf("head after joins %d", h.Seq)
	}
	// Messages do not move it either (they never conflict with each other).
	if h := res.Applied[3].Head; h.Seq != 1 || h.Hash == m1.Hash {
		t.Fatalf("head after message %+v", h)
	}
	if res.State.Room.Head.Seq != 1 || res.State.Room.Last.Seq != 6 {
		t.Fatalf("state head %d last %d", res.State.Room.Head.Seq, res.State.Room.Last.Seq)
	}
	want := []string{"genesis", "signal", "signal", "message", "message", "message"}
	for i, a := range res.Applied {
		if a.Item.Kind != want[i] {
			t.Errorf("item %d kind %s, want %s", i, a.Item.Kind, want[i])
		}
	}
	it := res.Applied[3].Item
	if it.Content != "Bob, can you review this?" || it.ContentType != "text/plain" || len(it.Mentions) != 1 || it.EventID != m1.EnvelopeHash() {
		t.Fatalf("message item %+v", it)
	}
	if got := kinds(res.Applied[3].Inbox); len(got) != 1 || got[0] != room.KindMention {
		t.Fatalf("mention inbox %v", got)
	}
	mention := res.Applied[3].Inbox[0]
	if mention.Priority != room.PriorityHigh || !mention.RequiresResponse || mention.CreatedAt != m1.AcceptedAt ||
		*mention.Seq != 4 || *mention.Actor != carol.ID || mention.SuggestedTools[0] != room.ToolSendMessage {
		t.Fatalf("mention %+v", mention)
	}
	if got := kinds(res.Applied[4].Inbox); len(got) != 1 || got[0] != room.KindMessageNew {
		t.Fatalf("new message inbox %v", got)
	}
	if len(res.Applied[5].Inbox) != 0 {
		t.Fatal("own message created an inbox item")
	}
	// Ids are stable and distinct.
	if mention.ID != room.InboxID(host, "room1", room.KindMention, 4, m1.EnvelopeHash()) || mention.ID == res.Applied[4].Inbox[0].ID {
		t.Fatal("inbox ids not derived from the dedup key")
	}
	// The agent is an active speaker.
	if st, role, creator := room.SelfState(res.State.Room, bob.ID); st != "active" || role != "speaker" || creator {
		t.Fatalf("self %s %s %v", st, role, creator)
	}
}

func TestProcessIncrementalAndDuplicates(t *testing.T) {
	c := roomtest.NewChain(t, host, "room1", alice, nil)
	c.Join(t, bob, "speaker")
	p := proc(bob.ID)
	res := mustProcess(t, p, nil, c.Records)
	st := res.State
	c.Message(t, alice, "one")
	c.Message(t, alice, "two")
	// A page overlapping what is verified: the old records are skipped.
	res2 := mustProcess(t, p, st, c.Records)
	if res2.Skipped != 2 || len(res2.Applied) != 2 {
		t.Fatalf("skipped %d applied %d", res2.Skipped, len(res2.Applied))
	}
	// The input state was not mutated.
	if st.Room.Last.Seq != 2 {
		t.Fatal("input state mutated")
	}
}

func tamper(t *testing.T, name string, edit func(c *roomtest.Chain, recs []*adp.Record) []*adp.Record, wantCode string) {
	t.Run(name, func(t *testing.T) {
		c := roomtest.NewChain(t, host, "room1", alice, nil)
		c.Join(t, bob, "speaker")
		c.Message(t, alice, "one")
		c.Message(t, alice, "two")
		c.Message(t, alice, "three")
		p := proc(bob.ID)
		base := mustProcess(t, p, nil, c.Records[:2])
		recs := edit(c, append([]*adp.Record{}, c.Records[2:]...))
		res := p.Process(base.State, recs, room.Options{})
		if res.Failure == nil {
			t.Fatal("tampering not detected")
		}
		if res.Failure.Code != wantCode {
			t.Fatalf("code %s (%s), want %s", res.Failure.Code, res.Failure.Message, wantCode)
		}
		if res.Failure.Seq != 4 || len(res.Applied) != 1 {
			t.Fatalf("failure at %d with %d applied; want 4 and 1", res.Failure.Seq, len(res.Applied))
		}
	})
}

func TestProcessDetectsTampering(t *testing.T) {
	tamper(t, "signature byte flipped", func(c *roomtest.Chain, recs []*adp.Record) []*adp.Record {
		r := *recs[1]
		env := *r.Envelope
		sig := []byte(env.Signature)
		if sig[5] == 'A' {
			sig[5] = 'B'
		} else {
			sig[5] = 'A'
		}
		env.Signature = string(sig)
		r.Envelope = &env
		recs[1] = &r
		return recs
	}, identity.CodeInvalidSignature)
	tamper(t, "record hash changed", func(c *roomtest.Chain, recs []*adp.Record) []*adp.Record {
		r := *recs[1]
		r.Hash = recs[0].Hash
		recs[1] = &r
		return recs
	}, adp.CodeInvalidRecord)
	tamper(t, "pre_hash broken", func(c *roomtest.Chain, recs []*adp.Record) []*adp.Record {
		recs[1] = roomtest.Rehash(t, recs[1], func(r *adp.Record) { r.PreHash = c.Records[0].Hash })
		return recs
	}, adp.CodeChainBroken)
}

func TestProcessDetectsForks(t *testing.T) {
	c := roomtest.NewChain(t, host, "room1", alice, nil)
	c.Join(t, bob, "speaker")
	c.Message(t, alice, "one")
	p := proc(bob.ID)
	res := mustProcess(t, p, nil, c.Records)
	// A host serving another record at an already verified seq.
	alt := c.Event(t, alice, adp.TypeMessageCreate, map[string]any{"content_type": "text/plain", "content": "rewritten"}, c.Records[1].Link())
	forged := roomtest.Rehash(t, c.Records[2], func(r *adp.Record) { r.Envelope = alt })
	got := p.Process(res.State, []*adp.Record{forged}, room.Options{})
	if got.Failure == nil || got.Failure.Code != room.CodeForked {
		t.Fatalf("fork not detected: %+v", got.Failure)
	}
	// A forked continuation: a record that does not link to the verified
	// head.
	c2 := roomtest.NewChain(t, host, "room1", alice, nil)
	c2.Join(t, bob, "speaker")
	c2.Message(t, alice, "other one")
	c2.Message(t, alice, "other two")
	got = p.Process(res.State, c2.Records[3:], room.Options{})
	if got.Failure == nil || got.Failure.Code != adp.CodeChainBroken || len(got.Applied) != 0 {
		t.Fatalf("forked continuation: %+v", got.Failure)
	}
}

func TestMembersRemovalBanAndInbox(t *testing.T) {
	c := roomtest.NewChain(t, host, "room1", alice, nil)
	c.Join(t, bob, "speaker")
	c.Join(t, carol, "speaker")
	c.Add(t, alice, adp.TypeRoleUpdate, map[string]any{"member": bob.ID, "role": "observer"})
	c.Add(t, alice, adp.TypeMemberRemove, map[string]any{"member": carol.ID})
	c.Add(t, alice, adp.TypeMemberRemove, map[string]any{"member": bob.ID, "ban": true})
	dave := roomtest.NewAgent("dave")
	c.Add(t, alice, adp.TypeMemberRemove, map[string]any{"member": dave.ID, "ban": true})
	p := proc(bob.ID)
	res := mustProcess(t, p, nil, c.Records)
	if got := kinds(res.Applied[3].Inbox); len(got) != 1 || got[0] != room.KindRoleChanged {
		t.Fatalf("role change inbox %v", got)
	}
	ban := res.Applied[5].Inbox
	if len(ban) != 1 || ban[0].Kind != room.KindMemberRemoved || ban[0].Reason != "member_banned" || ban[0].Priority != room.PriorityHigh {
		t.Fatalf("ban inbox %+v", ban)
	}
	// Bans and removals do not move the head.
	if res.State.Room.Head.Seq != 1 {
		t.Fatalf("head %d", res.State.Room.Head.Seq)
	}
	views := room.Members(res.State.Room)
	status := map[string]string{}
	for _, v := range views {
		status[v.AgentID] = v.Status
	}
	if status[alice.ID] != "active" || status[bob.ID] != "banned" || status[carol.ID] != "removed" || status[dave.ID] != "banned" {
		t.Fatalf("statuses %v", status)
	}
	bv, _ := room.Member(res.State.Room, bob.ID)
	if bv.LeftSeq == nil || *bv.LeftSeq != 6 || bv.Role != "observer" {
		t.Fatalf("bob view %+v", bv)
	}
	if st, _, _ := room.SelfState(res.State.Room, bob.ID); st != "banned" {
		t.Fatalf("self state %s", st)
	}
}

func TestJoinReviewApprovalInbox(t *testing.T) {
	c := roomtest.NewChain(t, host, "room1", alice, map[string]any{"visibility": "private"})
	req := c.Sign(t, bob, identity.Event{Type: adp.TypeJoinRequest,
		Payload: roomtest.Value(t, map[string]any{"role": "speaker", "perspective": "reviewer"}), Fields: adp.Fields{RoomID: c.RoomID}.Map()})
	c.Add(t, alice, adp.TypeJoinReview, map[string]any{"request": req.Value(), "decision": "approve", "role": "speaker"})
	res := mustProcess(t, proc(bob.ID), nil, c.Records)
	in := res.Applied[1].Inbox
	if len(in) != 1 || in[0].Kind != room.KindJoinApproved {
		t.Fatalf("approval inbox %+v", in)
	}
	v, _ := room.Member(res.State.Room, bob.ID)
	if v.Status != "active" || v.Role != "speaker" || *v.Perspective != "reviewer" || *v.JoinedSeq != 2 {
		t.Fatalf("member %+v", v)
	}
}

func TestTurnsSteerAndStateChanges(t *testing.T) {
	c := roomtest.NewChain(t, host, "room1", alice, map[string]any{"types": []any{map[string]any{"use": "adp:moderation/1.0"}}})
	c.Join(t, bob, "speaker")
	turn := c.Add(t, alice, "turn.update", map[string]any{"turn_id": 1, "speaker": bob.ID, "intent": "answer", "expires_at": roomtest.Start + 60_000})
	c.Add(t, alice, "steer.create", map[string]any{"instruction": "Focus on the retry loop"})
	c.Add(t, alice, adp.TypeRoomUpdate, map[string]any{"guidance": "Be brief"})
	res := mustProcess(t, proc(bob.ID), nil, c.Records)
	if res.State.ActiveTurn == nil || res.State.ActiveTurn.Speaker != bob.ID || res.State.ActiveTurn.AssignedSeq != turn.Seq ||
		res.State.ActiveTurn.SourceEventID != turn.EnvelopeHash() || res.State.ActiveTurn.Intent != "answer" {
		t.Fatalf("active turn %+v", res.State.ActiveTurn)
	}
	ti := res.Applied[2].Inbox
	if len(ti) != 1 || ti[0].Kind != room.KindTurnAssigned || ti[0].Deadline == nil || *ti[0].Deadline != roomtest.Start+60_000 {
		t.Fatalf("turn inbox %+v", ti)
	}
	if got := kinds(res.Applied[3].Inbox); len(got) != 1 || got[0] != room.KindSteer {
		t.Fatalf("steer inbox %v", got)
	}
	sc := res.Applied[4].Inbox
	if len(sc) != 1 || sc[0].Kind != room.KindStateChanged || sc[0].Reason != "room_updated" {
		t.Fatalf("state change inbox %+v", sc)
	}
	// The control-kind turn.update advanced the head; room.update too.
	// The steer had no mentions: it addresses every member.
	if res.State.Room.Head.Seq != 5 {
		t.Fatalf("head %d", res.State.Room.Head.Seq)
	}
	if res.Applied[2].Item.Kind != "control" || res.Applied[3].Item.Kind != "signal" || res.Applied[4].Item.Kind != "contract" {
		t.Fatalf("kinds %s %s %s", res.Applied[2].Item.Kind, res.Applied[3].Item.Kind, res.Applied[4].Item.Kind)
	}
}

func TestRedactedRecords(t *testing.T) {
	c := roomtest.NewChain(t, host, "room1", alice, nil)
	c.Join(t, bob, "speaker")
	m := c.Message(t, alice, "secret", bob.ID)
	red, err := m.Redact()
	if err != nil {
		t.Fatal(err)
	}
	recs := append(append([]*adp.Record{}, c.Records[:2]...), red)
	res := mustProcess(t, proc(bob.ID), nil, recs)
	it := res.Applied[2].Item
	if !it.Redacted || it.Summary != "[redacted]" || it.Actor != "" || it.Payload != nil || it.Kind != "message" {
		t.Fatalf("redacted item %+v", it)
	}
	if len(res.Applied[2].Inbox) != 0 {
		t.Fatal("redacted record created inbox items")
	}
	if res.State.Room.Head.Seq != 1 || res.State.Room.Last.Seq != 3 {
		t.Fatal("a redacted message moved the head (its class is message)")
	}
	b, _ := json.Marshal(it)
	if !strings.Contains(string(b), `"redacted":true`) || strings.Contains(string(b), `"actor"`) {
		t.Fatalf("json %s", b)
	}
}

func TestSummaries(t *testing.T) {
	if got := text.Truncate(strings.Repeat("界", 200), 160); len([]rune(got)) != 160 || !strings.HasSuffix(got, "…") {
		t.Fatalf("cjk truncation %q", got)
	}
	if text.Truncate("short", 160) != "short" {
		t.Fatal("short text changed")
	}
	c := roomtest.NewChain(t, host, "room1", alice, map[string]any{"types": []any{map[string]any{"use": "adp:deliberation/1.0"}}})
	q := c.Add(t, alice, "question.create", map[string]any{"question": "  ", "question_id": "q1"})
	if s := room.Summarize(q); s != "question.create" {
		t.Fatalf("blank question summary %q", s)
	}
	pc := c.Add(t, alice, "proposal.create", map[string]any{"proposal_id": "p1", "title": "Use B", "body": "because"})
	if s := room.Summarize(pc); s != "Use B" {
		t.Fatalf("title summary %q", s)
	}
	js := c.Add(t, alice, adp.TypeMessageCreate, map[string]any{"content_type": "application/json", "content": map[string]any{"a": 1}})
	if s := room.Summarize(js); s != adp.TypeMessageCreate {
		t.Fatalf("json message summary %q", s)
	}
}

// Parallel and sequential verification agree, also on where a batch fails:
// Process, a Prepare done before ProcessPrepared, and a PrepareAsync whose
// checks run while ProcessPrepared goes through the records (under -race
// this also proves that no record's checks are read before they ran), with
// the bad record at chunk edges and inside chunks.
func TestParallelVerificationAgrees(t *testing.T) {
	c := roomtest.NewChain(t, host, "room1", alice, nil)
	c.Join(t, bob, "speaker")
	for i := 0; i < 60; i++ {
		c.Message(t, alice, "m")
	}
	modes := map[string]func(p *room.Processor, recs []*adp.Record) *room.Result{
		"process": func(p *room.Processor, recs []*adp.Record) *room.Result { return p.Process(nil, recs, room.Options{}) },
		"prepare": func(p *room.Processor, recs []*adp.Record) *room.Result {
			return p.ProcessPrepared(nil, p.Prepare(recs), room.Options{})
		},
		"async": func(p *room.Processor, recs []*adp.Record) *room.Result {
			pr := p.PrepareAsync(recs)
			res := p.ProcessPrepared(nil, pr, room.Options{})
			pr.Wait()
			return res
		},
	}
	// bad is the index of the record whose signature is another record's
	// (-1: none); 15 and 16 straddle the first chunk edge.
	for _, bad := range []int{-1, 1, 15, 16, 40, 61} {
		recs := append([]*adp.Record{}, c.Records...)
		want := len(recs)
		if bad >= 0 {
			r := *recs[bad]
			env := *r.Envelope
			env.Signature = recs[(bad+1)%len(recs)].Envelope.Signature
			r.Envelope = &env
			recs[bad] = &r
			want = bad
		}
		for name, run := range modes {
			for _, w := range []int{1, 4} {
				p := proc(bob.ID)
				p.Workers = w
				res := run(p, recs)
				if len(res.Applied) != want {
					t.Fatalf("bad %d, %s, workers %d: applied %d, want %d", bad, name, w, len(res.Applied), want)
				}
				switch {
				case bad < 0 && res.Failure != nil:
					t.Fatalf("%s, workers %d: %v", name, w, res.Failure)
				case bad >= 0 && (res.Failure == nil || res.Failure.Seq != int64(bad+1) || res.Failure.Code != identity.CodeInvalidSignature):
					t.Fatalf("bad %d, %s, workers %d: failure %+v", bad, name, w, res.Failure)
				}
				for i, a := range res.Applied {
					if a.Record != recs[i] || len(a.RecordJSON) == 0 {
						t.Fatalf("bad %d, %s, workers %d: applied[%d] is seq %d with %d bytes of JSON", bad, name, w, i, a.Record.Seq, len(a.RecordJSON))
					}
				}
			}
		}
	}
}

// A PrepareAsync of nothing is ready at once.
func TestPrepareAsyncEmpty(t *testing.T) {
	pr := proc(bob.ID).PrepareAsync(nil)
	pr.Wait()
	if len(pr.Records()) != 0 || len(pr.EnvelopeIDs()) != 0 {
		t.Fatal("empty batch has records")
	}
}

// TestSteerTargets is D-29 of design/PROTOCOL-0.12.md: a steer addresses
// the mentioned agents, or every member when it mentions nobody; a steer
// written under the 0f87fee pack may name a target instead.
func TestSteerTargets(t *testing.T) {
	c := roomtest.NewChain(t, host, "room1", alice, map[string]any{"types": []any{map[string]any{"use": "adp:moderation/1.0"}}})
	c.Join(t, bob, "speaker")
	c.Join(t, carol, "speaker")
	steer := map[string]any{"instruction": "Wrap up"}
	c.Add(t, alice, "steer.create", steer, carol.ID)         // 4: carol only
	c.Add(t, alice, "steer.create", steer, bob.ID, carol.ID) // 5: both
	c.Add(t, alice, "steer.create", steer)                   // 6: every member
	res := mustProcess(t, proc(bob.ID), nil, c.Records)
	for i, want := range map[int]int{3: 0, 4: 1, 5: 1} {
		if got := kinds(res.Applied[i].Inbox); len(got) != want || (want == 1 && got[0] != room.KindSteer) {
			t.Errorf("record %d: inbox %v, want %d steer item(s)", i+1, got, want)
		}
	}
	// A non-member is not addressed by a steer to everyone.
	res = mustProcess(t, proc(roomtest.NewAgent("dave").ID), nil, c.Records)
	if got := kinds(res.Applied[5].Inbox); len(got) != 0 {
		t.Errorf("a non-member got %v", got)
	}
}

// TestProcessReadsOlderHistories checks that the connector's reader follows
// a room written by a host of the 0f87fee drafts: a steer with a target
// (the older pack) and a policy with observer_allowed, which a current host
// refuses.
func TestProcessReadsOlderHistories(t *testing.T) {
	c := roomtest.NewChain(t, host, "room1", alice, map[string]any{"types": []any{map[string]any{"use": "adp:moderation/1.0"}}})
	c.Join(t, bob, "speaker")
	steer := c.Event(t, alice, "steer.create", map[string]any{"instruction": "Wrap up", "target": bob.ID}, c.Room.Head)
	if err := c.Room.Check(c.Rules, steer, adp.CheckOptions{Now: c.Now, Records: c}); adp.ErrorCode(err) != adp.CodePayloadSchemaViolation {
		t.Fatalf("a current host takes the older steer: %v", err)
	}
	c.Accept(t, steer)
	upd := c.Event(t, alice, adp.TypeRoomUpdate, map[string]any{"policy": map[string]any{"observer_allowed": true}}, c.Room.Head)
	c.Accept(t, upd)
	res := mustProcess(t, proc(bob.ID), nil, c.Records)
	if len(res.Applied) != 4 {
		t.Fatalf("applied %d of 4", len(res.Applied))
	}
	// The older steer named bob as its target.
	if got := kinds(res.Applied[2].Inbox); len(got) != 1 || got[0] != room.KindSteer {
		t.Fatalf("steer inbox %v", got)
	}
	if p := res.State.Room.Policy; p.ObserverAllowed == nil || !*p.ObserverAllowed {
		t.Fatalf("policy %+v", p)
	}
}
