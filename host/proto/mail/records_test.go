package mail

import "testing"

func TestResponseRecords(t *testing.T) {
	card := cardOf(t, 100)
	card2 := cardOf(t, 101, func(p *CardPayload) { p.MailboxID = mb2 })
	p := sealed(t, letter(), card, 300)
	q := sealed(t, letter(func(m *Message) { m.MessageID = mb2 }), card, 301)
	rec := CardRecord{Card: card, AcceptedAt: t0}
	rec2 := CardRecord{Card: card2, AcceptedAt: t0}
	prec := PacketRecord{PacketID: p.ID(), Packet: p, AcceptedAt: t0, Seq: 1}
	qrec := PacketRecord{PacketID: q.ID(), Packet: q, AcceptedAt: t0, Seq: 2}

	got, err := CardRecordFromValue(clone(t, rec.Value()), bob.AgentID(), mb, card.Hash())
	if err != nil || got.Card.Hash() != card.Hash() || got.AcceptedAt != t0 {
		t.Fatalf("card record: %v", err)
	}
	_, err = CardRecordFromValue(clone(t, rec.Value()), bob.AgentID(), mb2, "")
	wantCode(t, err, CodeInvalidResponse)
	_, err = CardRecordFromValue(clone(t, rec.Value()), carol.AgentID(), "", "")
	wantCode(t, err, CodeInvalidActor)

	list := MailboxPage{Result: []CardRecord{rec, rec2}, NextCursor: mb2}
	page, err := MailboxListFromValue(clone(t, list.Value()), bob.AgentID(), 2)
	if err != nil || len(page.Result) != 2 || page.NextCursor != mb2 {
		t.Fatalf("mailbox list: %v", err)
	}
	for name, tc := range map[string]struct {
		page  MailboxPage
		limit int
	}{
		"over the limit":      {list, 1},
		"out of order":        {MailboxPage{Result: []CardRecord{rec2, rec}}, 2},
		"repeated":            {MailboxPage{Result: []CardRecord{rec, rec}}, 2},
		"empty with a cursor": {MailboxPage{NextCursor: mb}, 2},
	} {
		if _, err := MailboxListFromValue(clone(t, tc.page.Value()), bob.AgentID(), tc.limit); ErrorCode(err) != CodeInvalidResponse {
			t.Errorf("%s: %v", name, err)
		}
	}

	packets := PacketPage{Result: []PacketRecord{prec, qrec}, NextCursor: "2"}
	pp, err := PacketListFromValue(clone(t, packets.Value()), mb, 2)
	if err != nil || len(pp.Result) != 2 || pp.Result[1].Packet.ID() != q.ID() {
		t.Fatalf("packet list: %v", err)
	}
	for name, tc := range map[string]struct {
		page PacketPage
		code string
	}{
		"out of order":        {PacketPage{Result: []PacketRecord{qrec, prec}}, CodeInvalidResponse},
		"another packet's ID": {PacketPage{Result: []PacketRecord{{PacketID: q.ID(), Packet: p, AcceptedAt: t0, Seq: 1}}}, CodeInvalidEvent},
		"accepted at expiry":  {PacketPage{Result: []PacketRecord{{PacketID: p.ID(), Packet: p, AcceptedAt: t0 + day, Seq: 1}}}, CodeInvalidResponse},
	} {
		if _, err := PacketListFromValue(clone(t, tc.page.Value()), mb, 10); ErrorCode(err) != tc.code {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := PacketListFromValue(clone(t, packets.Value()), mb2, 10); ErrorCode(err) != CodeInvalidResponse {
		t.Errorf("another mailbox: %v", err)
	}
	if _, err := PacketRecordFromValue(clone(t, prec.Value()), ""); err != nil {
		t.Errorf("record without a mailbox: %v", err)
	}

	res := DeliveryResult{PacketID: p.ID(), AcceptedAt: t0}
	if _, err := DeliveryResultFromValue(clone(t, res.Value()), p); err != nil {
		t.Fatal(err)
	}
	if _, err := DeliveryResultFromValue(clone(t, res.Value()), q); ErrorCode(err) != CodeInvalidResponse {
		t.Errorf("another packet: %v", err)
	}
	late := DeliveryResult{PacketID: p.ID(), AcceptedAt: t0 + day}
	if _, err := DeliveryResultFromValue(clone(t, late.Value()), p); ErrorCode(err) != CodeInvalidResponse {
		t.Errorf("accepted at expiry: %v", err)
	}
	wantCode(t, ValidateDiscovery(clone(t, Discovery(mirror)), relay), CodeInvalidResponse)
	wantCode(t, ValidateDiscovery(clone(t, Discovery(relay)), "relay.example"), CodeInvalidURL)
}
