package mail

import (
	"apconnect/host/identity"
)

// The relay's response objects, and the checks a client makes on them
// (python agent_protocols.mail validate_mail_*). Every check runs the schema
// first (invalid_response); a card or packet inside a record is then
// checked as a signed object, with its own codes.

// CardRecord is an accepted card: {envelope, accepted_at}, the answer to
// POST /v1/mailboxes and GET /v1/mailboxes/{id}/card.
type CardRecord struct {
	Card       *Card
	AcceptedAt int64
}

// Value returns the record as a JSON object value.
func (r CardRecord) Value() map[string]any {
	return map[string]any{"envelope": r.Card.Value(), "accepted_at": r.AcceptedAt}
}

// PacketRecord is a stored packet as the owner lists it: {packet_id,
// packet, accepted_at, seq}, seq ascending per mailbox.
type PacketRecord struct {
	PacketID   string
	Packet     *Packet
	AcceptedAt int64
	Seq        int64
}

// Value returns the record as a JSON object value.
func (r PacketRecord) Value() map[string]any {
	return map[string]any{"packet_id": r.PacketID, "packet": r.Packet.Value(), "accepted_at": r.AcceptedAt, "seq": r.Seq}
}

// MailboxPage is a page of GET /v1/me/mailboxes.
type MailboxPage struct {
	Result     []CardRecord
	NextCursor string
}

// Value returns the page as a JSON object value.
func (p MailboxPage) Value() map[string]any {
	rows := make([]any, len(p.Result))
	for i, r := range p.Result {
		rows[i] = r.Value()
	}
	return page(rows, p.NextCursor)
}

// PacketPage is a page of GET /v1/mailboxes/{id}/packets.
type PacketPage struct {
	Result     []PacketRecord
	NextCursor string
}

// Value returns the page as a JSON object value.
func (p PacketPage) Value() map[string]any {
	rows := make([]any, len(p.Result))
	for i, r := range p.Result {
		rows[i] = r.Value()
	}
	return page(rows, p.NextCursor)
}

func page(rows []any, next string) map[string]any {
	m := map[string]any{"result": rows}
	if next != "" {
		m["next_cursor"] = next
	}
	return m
}

// ValidateDiscovery checks a relay's discovery document read from origin:
// origin a serialized HTTPS origin (invalid_url), the schema
// (invalid_response), and service = origin (invalid_response). The
// document is informational; it never supplies delivery paths.
func ValidateDiscovery(v any, origin string) error {
	if !identity.ValidOrigin(origin) {
		return fail(CodeInvalidURL, "", "%q is not a serialized HTTPS origin", origin)
	}
	if err := ValidateSchema(v, DefDiscovery, CodeInvalidResponse, ""); err != nil {
		return err
	}
	if v.(map[string]any)["service"] != origin {
		return fail(CodeInvalidResponse, "/service", "the discovery document names another service than %s", origin)
	}
	return nil
}

// CardRecordFromValue checks a card record as validate_mail_card_record
// does: the schema (invalid_response), the card (CardFromValue) and its
// owner (invalid_actor), and, when not empty, the mailbox ID and card hash
// asked for (invalid_response).
func CardRecordFromValue(v any, owner, mailboxID, cardHash string) (*CardRecord, error) {
	return cardRecord(v, "", owner, mailboxID, cardHash)
}

func cardRecord(v any, pointer, owner, mailboxID, cardHash string) (*CardRecord, error) {
	if err := ValidateSchema(v, DefCardRecord, CodeInvalidResponse, pointer); err != nil {
		return nil, err
	}
	m := v.(map[string]any)
	c, err := CardFromValue(m["envelope"], pointer+"/envelope")
	if err != nil {
		return nil, err
	}
	if c.Owner() != owner {
		return nil, fail(CodeInvalidActor, pointer+"/envelope/event/actor", "the card's owner is not %s", owner)
	}
	if (mailboxID != "" && c.MailboxID() != mailboxID) || (cardHash != "" && c.Hash() != cardHash) {
		return nil, fail(CodeInvalidResponse, pointer+"/envelope", "the card record is not the one asked for")
	}
	r := &CardRecord{Card: c}
	if r.AcceptedAt, err = intMember(m, "accepted_at", pointer, CodeInvalidResponse); err != nil {
		return nil, err
	}
	return r, nil
}

// MailboxListFromValue checks a page of GET /v1/me/mailboxes as
// validate_mail_mailbox_list does: the schema, at most limit records and a
// next_cursor only after records (invalid_response), every record a card
// record of owner, and mailbox IDs strictly ascending (invalid_response).
func MailboxListFromValue(v any, owner string, limit int) (*MailboxPage, error) {
	if err := ValidateSchema(v, DefMailboxList, CodeInvalidResponse, ""); err != nil {
		return nil, err
	}
	rows, next, err := pageRows(v, limit)
	if err != nil {
		return nil, err
	}
	out := &MailboxPage{NextCursor: next}
	prev := ""
	for i, row := range rows {
		r, err := cardRecord(row, "/result/"+itoa(int64(i)), owner, "", "")
		if err != nil {
			return nil, err
		}
		if r.Card.MailboxID() <= prev {
			return nil, fail(CodeInvalidResponse, "/result/"+itoa(int64(i)), "mailboxes are not in ascending order")
		}
		prev = r.Card.MailboxID()
		out.Result = append(out.Result, *r)
	}
	return out, nil
}

// pageRows reads a schema-checked page: its rows, checked against limit,
// and its cursor.
func pageRows(v any, limit int) ([]any, string, error) {
	m := v.(map[string]any)
	rows := m["result"].([]any)
	next, hasNext := m["next_cursor"].(string)
	if len(rows) > limit || (hasNext && len(rows) == 0) {
		return nil, "", fail(CodeInvalidResponse, "/result", "invalid page size")
	}
	return rows, next, nil
}

// DeliveryResultFromValue checks a relay's answer to a delivery as
// validate_mail_delivery_result does: the schema (invalid_response), and,
// when p is not nil, packet_id = p's ID and accepted_at before the packet
// expires (invalid_response).
func DeliveryResultFromValue(v any, p *Packet) (*DeliveryResult, error) {
	if err := ValidateSchema(v, DefDelivery, CodeInvalidResponse, ""); err != nil {
		return nil, err
	}
	m := v.(map[string]any)
	r := &DeliveryResult{PacketID: m["packet_id"].(string)}
	var err error
	if r.AcceptedAt, err = intMember(m, "accepted_at", "", CodeInvalidResponse); err != nil {
		return nil, err
	}
	if p != nil && (r.PacketID != p.ID() || r.AcceptedAt >= p.header.ExpiresAt) {
		return nil, fail(CodeInvalidResponse, "", "the delivery result does not match the packet")
	}
	return r, nil
}

// PacketListFromValue checks a page of GET /v1/mailboxes/{id}/packets as
// validate_mail_packet_list does: the schema, at most limit records and a
// next_cursor only after records (invalid_response); each record's packet
// valid (PacketFromValue) with packet_id its ID (invalid_event), accepted
// before it expires and for mailboxID (invalid_response); seq strictly
// ascending (invalid_response).
func PacketListFromValue(v any, mailboxID string, limit int) (*PacketPage, error) {
	if err := ValidateSchema(v, DefPacketList, CodeInvalidResponse, ""); err != nil {
		return nil, err
	}
	rows, next, err := pageRows(v, limit)
	if err != nil {
		return nil, err
	}
	out := &PacketPage{NextCursor: next}
	var seq int64
	for i, row := range rows {
		at := "/result/" + itoa(int64(i))
		r, err := packetRecord(row, at, mailboxID)
		if err != nil {
			return nil, err
		}
		if r.Seq <= seq {
			return nil, fail(CodeInvalidResponse, at+"/seq", "packets are not in ascending seq order")
		}
		seq = r.Seq
		out.Result = append(out.Result, *r)
	}
	return out, nil
}

// PacketRecordFromValue checks one packet record as
// validate_mail_packet_record does (see PacketListFromValue); mailboxID
// "" skips the mailbox check.
func PacketRecordFromValue(v any, mailboxID string) (*PacketRecord, error) {
	return packetRecord(v, "", mailboxID)
}

func packetRecord(v any, pointer, mailboxID string) (*PacketRecord, error) {
	if err := ValidateSchema(v, DefPacketRecord, CodeInvalidResponse, pointer); err != nil {
		return nil, err
	}
	m := v.(map[string]any)
	p, err := PacketFromValue(m["packet"], pointer+"/packet")
	if err != nil {
		return nil, err
	}
	r := &PacketRecord{PacketID: m["packet_id"].(string), Packet: p}
	if err := CheckPacketID(p, r.PacketID); err != nil {
		return nil, repoint(err, pointer)
	}
	if r.AcceptedAt, err = intMember(m, "accepted_at", pointer, CodeInvalidResponse); err != nil {
		return nil, err
	}
	if r.Seq, err = intMember(m, "seq", pointer, CodeInvalidResponse); err != nil {
		return nil, err
	}
	if r.AcceptedAt >= p.header.ExpiresAt || (mailboxID != "" && p.header.MailboxID != mailboxID) {
		return nil, fail(CodeInvalidResponse, pointer, "the packet record does not match its mailbox or expiry")
	}
	return r, nil
}
