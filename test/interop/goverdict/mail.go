package main

// Agent Mail verdicts: host/proto/mail (and identity.ParseAgentURL)
// answering the cases of test/interop/test_mail_*.py, which put the same
// inputs through the reference SDK's agent_protocols.mail and mail_state.
//
// A verdict is an error code, or on success a small object the Python side
// builds the same way from the SDK's answer.

import (
	"crypto/ecdh"
	"crypto/ed25519"
	"crypto/hpke"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"apconnect/host/identity"
	"apconnect/host/proto/mail"
)

var mailKinds = map[string]func(json.RawMessage) (any, error){
	"mail_agent_url": mailAgentURL,
	"mail_address":   mailAddress,
	"mail_card":      mailCard,
	"mail_packet":    mailPacket,
	"mail_message":   mailMessage,
	"mail_encode":    mailEncode,
	"mail_decode":    mailDecode,
	"mail_aad":       mailAAD,
	"mail_open":      mailOpen,
	"mail_seal":      mailSeal,
	"mail_hpke_kat":  mailHPKEKat,
	"mail_owner_jwt": mailOwnerJWT,
	"mail_pins":      mailPins,
	"mail_inbox":     mailInbox,
	"mail_relay":     mailRelay,
	"mail_response":  mailResponse,
}

// mailCode is "ok" for nil, else the error's stable code.
func mailCode(err error) string {
	if err == nil {
		return "ok"
	}
	if c := identity.ErrorCode(err); c != "" {
		return c
	}
	return "uncoded: " + err.Error()
}

func mailAgentURL(raw json.RawMessage) (any, error) {
	var in struct {
		Value string `json:"value"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	u, err := identity.ParseAgentURL(in.Value)
	if err != nil {
		return mailCode(err), nil
	}
	out := map[string]any{"agent_id": u.AgentID, "protocol": nil, "resource": nil, "routes": u.Routes}
	if u.Protocol != "" {
		out["protocol"], out["resource"] = u.Protocol, u.Resource
	}
	formatted, err := u.Format()
	if err != nil {
		return nil, fmt.Errorf("a parsed URL does not format: %w", err)
	}
	out["formatted"] = formatted
	return out, nil
}

func mailAddress(raw json.RawMessage) (any, error) {
	var in struct {
		Value string `json:"value"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	a, err := mail.ParseAddress(in.Value)
	if err != nil {
		return mailCode(err), nil
	}
	stable, err := mail.Address{Owner: a.Owner, MailboxID: a.MailboxID}.Format()
	if err != nil {
		return nil, err
	}
	return map[string]any{"owner": a.Owner, "mailbox_id": a.MailboxID, "routes": a.Routes, "stable": stable}, nil
}

// cardOf reads a card value; a refusal is returned as a verdict.
func cardOf(raw json.RawMessage) (*mail.Card, any, error) {
	v, err := strict(raw)
	if err != nil {
		return nil, nil, err
	}
	c, err := mail.CardFromValue(v, "")
	if err != nil {
		return nil, mailCode(err), nil
	}
	return c, nil, nil
}

func packetOf(raw json.RawMessage) (*mail.Packet, any, error) {
	v, err := strict(raw)
	if err != nil {
		return nil, nil, err
	}
	p, err := mail.PacketFromValue(v, "")
	if err != nil {
		return nil, mailCode(err), nil
	}
	return p, nil, nil
}

func mailCard(raw json.RawMessage) (any, error) {
	var in struct {
		Card json.RawMessage `json:"card"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	c, verdict, err := cardOf(in.Card)
	if c == nil {
		return verdict, err
	}
	return map[string]any{"hash": c.Hash()}, nil
}

func mailPacket(raw json.RawMessage) (any, error) {
	var in struct {
		Packet json.RawMessage `json:"packet"`
		Text   string          `json:"text"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	var p *mail.Packet
	if in.Text != "" {
		var err error
		if p, err = mail.ParsePacket([]byte(in.Text)); err != nil {
			return mailCode(err), nil
		}
	} else {
		var verdict any
		var err error
		if p, verdict, err = packetOf(in.Packet); p == nil {
			return verdict, err
		}
	}
	return map[string]any{"packet_id": p.ID(), "size": p.Size()}, nil
}

func mailMessage(raw json.RawMessage) (any, error) {
	var in struct {
		Message json.RawMessage `json:"message"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	v, err := strict(in.Message)
	if err != nil {
		return nil, err
	}
	_, err = mail.MessageFromValue(v, "")
	return mailCode(err), nil
}

func mailEncode(raw json.RawMessage) (any, error) {
	var in struct {
		Message json.RawMessage `json:"message"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	v, err := strict(in.Message)
	if err != nil {
		return nil, err
	}
	m, err := mail.MessageFromValue(v, "")
	if err != nil {
		return mailCode(err), nil
	}
	frame, err := mail.EncodePlaintext(m)
	if err != nil {
		return mailCode(err), nil
	}
	return map[string]any{"frame": identity.EncodeBase64URL(frame)}, nil
}

func mailDecode(raw json.RawMessage) (any, error) {
	var in struct {
		Frame string `json:"frame"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	frame, err := identity.DecodeBase64URL(in.Frame)
	if err != nil {
		return nil, fmt.Errorf("bad input: %w", err)
	}
	m, err := mail.DecodePlaintext(frame)
	if err != nil {
		return mailCode(err), nil
	}
	canon, err := m.Canonical()
	if err != nil {
		return nil, err
	}
	return map[string]any{"message": string(canon)}, nil
}

func mailAAD(raw json.RawMessage) (any, error) {
	var in struct {
		Packet json.RawMessage `json:"packet"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	p, verdict, err := packetOf(in.Packet)
	if p == nil {
		return verdict, err
	}
	aad, err := mail.PacketAAD(p)
	if err != nil {
		return nil, err
	}
	return map[string]any{"aad": string(aad)}, nil
}

// mailOpen opens a packet as a recipient: Open, then the JCS of the letter.
func mailOpen(raw json.RawMessage) (any, error) {
	var in struct {
		Packet json.RawMessage `json:"packet"`
		Card   json.RawMessage `json:"card"`
		Secret string          `json:"secret"`
		Owner  string          `json:"owner"`
		Now    int64           `json:"now"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	p, verdict, err := packetOf(in.Packet)
	if p == nil {
		return verdict, err
	}
	c, verdict, err := cardOf(in.Card)
	if c == nil {
		return verdict, err
	}
	key, err := keyOf(in.Secret)
	if err != nil {
		return nil, err
	}
	m, err := mail.Open(p, c, key, in.Owner, in.Now)
	if err != nil {
		return mailCode(err), nil
	}
	canon, err := m.Canonical()
	if err != nil {
		return nil, err
	}
	return map[string]any{"message": string(canon)}, nil
}

func keyOf(secret string) (*mail.Key, error) {
	b, err := identity.DecodeBase64URLLen(secret, mail.KeySize)
	if err != nil {
		return nil, fmt.Errorf("bad input: secret: %w", err)
	}
	return mail.KeyFromSecret(b)
}

func signerOf(seedHex string) (*identity.KeySigner, error) {
	seed, err := hex.DecodeString(seedHex)
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("bad input: seed must be 32 bytes of hex")
	}
	return identity.NewKeySigner(ed25519.NewKeyFromSeed(seed)), nil
}

// mailSeal seals a letter to a card with the sender's seed: the verdict is
// {"code": "ok", "packet": …} (the packet is random) or the refusal's code.
func mailSeal(raw json.RawMessage) (any, error) {
	var in struct {
		Message json.RawMessage `json:"message"`
		Card    json.RawMessage `json:"card"`
		Seed    string          `json:"seed"`
		Nonce   int64           `json:"nonce"`
		Now     int64           `json:"now"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	s, err := signerOf(in.Seed)
	if err != nil {
		return nil, err
	}
	v, err := strict(in.Message)
	if err != nil {
		return nil, err
	}
	m, err := mail.MessageFromValue(v, "")
	if err != nil {
		return map[string]any{"code": mailCode(err)}, nil
	}
	c, verdict, err := cardOf(in.Card)
	if c == nil {
		return map[string]any{"code": verdict}, err
	}
	p, err := mail.Seal(s, m, c, in.Nonce, in.Now)
	if err != nil {
		return map[string]any{"code": mailCode(err)}, nil
	}
	return map[string]any{"code": "ok", "packet": p.Value(), "packet_id": p.ID()}, nil
}

// mailHPKEKat is the RFC 9180 known answer through the standard library's
// crypto/hpke with Agent Mail's suite (base mode, 0x0020/0x0001/0x0003):
// the public keys of the secrets, and the opened ciphertext.
func mailHPKEKat(raw json.RawMessage) (any, error) {
	var in struct {
		SkRm, SkEm, Enc, Info, AAD, CT string
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	h := func(s string) []byte { b, _ := hex.DecodeString(s); return b }
	kem, _ := hpke.NewKEM(0x0020)
	kdf, _ := hpke.NewKDF(0x0001)
	aead, _ := hpke.NewAEAD(0x0003)
	skR, err := kem.NewPrivateKey(h(in.SkRm))
	if err != nil {
		return nil, err
	}
	skE, err := ecdh.X25519().NewPrivateKey(h(in.SkEm))
	if err != nil {
		return nil, err
	}
	r, err := hpke.NewRecipient(h(in.Enc), skR, kdf, aead, h(in.Info))
	if err != nil {
		return "open failed", nil
	}
	pt, err := r.Open(h(in.AAD), h(in.CT))
	if err != nil {
		return "open failed", nil
	}
	return map[string]any{
		"pkRm": hex.EncodeToString(skR.PublicKey().Bytes()),
		"pkEm": hex.EncodeToString(skE.PublicKey().Bytes()),
		"pt":   hex.EncodeToString(pt),
	}, nil
}

func mailOwnerJWT(raw json.RawMessage) (any, error) {
	var in struct {
		Token  string `json:"token"`
		Origin string `json:"origin"`
		Owner  string `json:"owner"`
		Now    int64  `json:"now"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	_, err := mail.VerifyOwnerToken(in.Token, in.Origin, in.Owner, in.Now, 0)
	return mailCode(err), nil
}

// mailPins observes cards in turn in one CardCache, as a sender reading
// cards does: each step's verdict is the pinned hash or a code.
func mailPins(raw json.RawMessage) (any, error) {
	var in struct {
		Steps []struct {
			Card          json.RawMessage `json:"card"`
			Owner         string          `json:"owner"`
			Now           int64           `json:"now"`
			RequireUsable bool            `json:"require_usable"`
			Prune         bool            `json:"prune"`
		} `json:"steps"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	cache := mail.NewCardCache()
	out := []any{}
	for _, st := range in.Steps {
		if st.Prune {
			cache.Prune(st.Now)
			out = append(out, map[string]any{"pins": cache.Len()})
			continue
		}
		c, verdict, err := cardOf(st.Card)
		if err != nil {
			return nil, err
		}
		if c == nil {
			out = append(out, verdict)
			continue
		}
		if _, err := cache.Observe(c, st.Owner, st.Now, st.RequireUsable); err != nil {
			out = append(out, mailCode(err))
			continue
		}
		out = append(out, map[string]any{"pinned": cache.Get(st.Owner, c.MailboxID()).Hash()})
	}
	return out, nil
}

// mailInbox accepts packets in turn as a recipient's inbox does: sender
// policy, Open with the card the header names, then CheckReceived against
// the digests held so far.
func mailInbox(raw json.RawMessage) (any, error) {
	var in struct {
		Owner   string            `json:"owner"`
		Cards   []json.RawMessage `json:"cards"`
		Secrets []string          `json:"secrets"`
		Blocked []string          `json:"blocked"`
		Steps   []struct {
			Packet json.RawMessage `json:"packet"`
			Now    int64           `json:"now"`
		} `json:"steps"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	type entry struct {
		card *mail.Card
		key  *mail.Key
	}
	ring := map[string]entry{}
	for i, rc := range in.Cards {
		c, verdict, err := cardOf(rc)
		if c == nil {
			return nil, fmt.Errorf("bad input: card %d: %v %v", i, verdict, err)
		}
		k, err := keyOf(in.Secrets[i])
		if err != nil {
			return nil, err
		}
		ring[c.Hash()] = entry{c, k}
	}
	held := map[string]string{}
	out := []any{}
	for _, st := range in.Steps {
		out = append(out, inboxStep(st.Packet, st.Now, in.Owner, in.Blocked, func(h string) (*mail.Card, *mail.Key) {
			e, ok := ring[h]
			if !ok {
				return nil, nil
			}
			return e.card, e.key
		}, held))
	}
	return out, nil
}

func inboxStep(raw json.RawMessage, now int64, owner string, blocked []string,
	lookup func(string) (*mail.Card, *mail.Key), held map[string]string) any {
	p, verdict, err := packetOf(raw)
	if err != nil {
		return "bad input: " + err.Error()
	}
	if p == nil {
		return verdict
	}
	if err := mail.CheckSender(slices.Contains(blocked, p.Sender())); err != nil {
		return mailCode(err)
	}
	c, k := lookup(p.Header().CardHash)
	if c == nil {
		return mail.CodeInvalidEvent // the SDK: unknown retained mailbox card
	}
	m, err := mail.Open(p, c, k, owner, now)
	if err != nil {
		return mailCode(err)
	}
	key := m.From + "/" + m.MessageID
	a, err := mail.CheckReceived(m, held[key], now)
	if err != nil {
		return mailCode(err)
	}
	if a == mail.Accepted {
		held[key], _ = m.Digest()
	}
	return map[string]any{"kind": a.String(), "message_id": m.MessageID}
}

// relayBox is one mailbox of the relay model.
type relayBox struct {
	current    *mail.Card
	acceptedAt int64
	lastSeq    int64
	packets    map[string]relayRecord
	tombstones map[string]relayTombstone
	blocked    map[string]bool
}

type relayRecord struct {
	packet *mail.Packet
	seq    int64
	at     int64
}

type relayTombstone struct {
	res     mail.DeliveryResult
	expires int64
}

// relayModel is an in-memory relay built on the package's pure rules, the
// way the hub relay will call them: the caller's part is the lookups, the
// shared nonce (a per-actor maximum kept 600 s, as the SDK's
// MemoryNonceStore) and storage.
type relayModel struct {
	origin string
	quota  mail.Quota
	boxes  map[string]*relayBox
	nonces map[string][2]int64
}

type relayStep struct {
	Op        string          `json:"op"`
	Now       int64           `json:"now"`
	Card      json.RawMessage `json:"card"`
	MailboxID string          `json:"mailbox_id"`
	Packet    json.RawMessage `json:"packet"`
	PacketID  string          `json:"packet_id"`
	Sender    string          `json:"sender"`
	Token     string          `json:"token"`
	Limit     int             `json:"limit"`
	Cursor    *string         `json:"cursor"`
}

// mailRelay runs steps against one relay model; each step's verdict is a
// code or a small object.
func mailRelay(raw json.RawMessage) (any, error) {
	var in struct {
		Origin     string      `json:"origin"`
		MaxPackets int         `json:"max_packets"`
		MaxBytes   int64       `json:"max_bytes"`
		Steps      []relayStep `json:"steps"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	r := &relayModel{origin: in.Origin, quota: mail.DefaultQuota(), boxes: map[string]*relayBox{}, nonces: map[string][2]int64{}}
	if in.MaxPackets > 0 {
		r.quota = mail.Quota{MaxPackets: in.MaxPackets, MaxBytes: in.MaxBytes}
	}
	out := []any{}
	for _, st := range in.Steps {
		v, err := r.step(st)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func (r *relayModel) step(st relayStep) (any, error) {
	switch st.Op {
	case "publish":
		return r.publish(st)
	case "deliver":
		return r.deliver(st)
	case "card":
		if err := mail.CheckPathID(st.MailboxID, mail.IDBytes); err != nil {
			return mailCode(err), nil
		}
		b, ok := r.boxes[st.MailboxID]
		if !ok {
			return mail.CodeMailboxUnavailable, nil
		}
		return map[string]any{"hash": b.current.Hash(), "accepted_at": b.acceptedAt}, nil
	case "block":
		b, ok := r.boxes[st.MailboxID]
		if !ok {
			return mail.CodeMailboxUnavailable, nil
		}
		b.blocked[st.Sender] = true
		return "ok", nil
	case "list":
		return r.list(st), nil
	case "delete":
		return r.delete(st), nil
	case "prune":
		r.prune(st.Now)
		return map[string]any{"mailboxes": len(r.boxes)}, nil
	}
	return nil, fmt.Errorf("bad input: unknown relay op %q", st.Op)
}

func (r *relayModel) publish(st relayStep) (any, error) {
	c, verdict, err := cardOf(st.Card)
	if c == nil {
		return verdict, err
	}
	b := r.boxes[c.MailboxID()]
	var current *mail.Card
	if b != nil {
		current = b.current
	}
	action, err := mail.CheckPublish(c, current, r.origin, st.Now)
	if err != nil {
		return mailCode(err), nil
	}
	if action == mail.CardResubmit {
		return map[string]any{"hash": b.current.Hash(), "accepted_at": b.acceptedAt}, nil
	}
	if n, ok := r.nonces[c.Owner()]; ok && n[1] >= st.Now && c.Nonce() <= n[0] {
		return mail.CodeNonceNotGreater, nil
	}
	r.nonces[c.Owner()] = [2]int64{c.Nonce(), st.Now + 2*mail.FutureSkew}
	if action == mail.CardCreate {
		r.boxes[c.MailboxID()] = &relayBox{current: c, acceptedAt: st.Now,
			packets: map[string]relayRecord{}, tombstones: map[string]relayTombstone{}, blocked: map[string]bool{}}
	} else {
		b.current, b.acceptedAt = c, st.Now
	}
	return map[string]any{"hash": c.Hash(), "accepted_at": st.Now}, nil
}

func (r *relayModel) deliver(st relayStep) (any, error) {
	if err := mail.CheckPathID(st.MailboxID, mail.IDBytes); err != nil {
		return mailCode(err), nil
	}
	p, verdict, err := packetOf(st.Packet)
	if p == nil {
		return verdict, err
	}
	d := mail.Delivery{Origin: r.origin, MailboxID: st.MailboxID, Packet: p, Quota: r.quota, Now: st.Now}
	b := r.boxes[st.MailboxID]
	if b != nil {
		d.Current = b.current
		if t, ok := b.tombstones[p.ID()]; ok {
			d.Tombstone = &t.res
		}
		d.SenderBlocked = b.blocked[p.Sender()]
		// The SDK drops expired packets before its quota check.
		if d.Tombstone == nil && p.Header().MailboxID == st.MailboxID {
			for id, rec := range b.packets {
				if !mail.PacketLive(rec.packet.Header(), st.Now) {
					delete(b.packets, id)
				}
			}
		}
		d.Usage = b.usage()
	}
	res, fresh, err := mail.CheckDelivery(d)
	if err != nil {
		return mailCode(err), nil
	}
	if fresh {
		b.lastSeq++
		b.packets[p.ID()] = relayRecord{packet: p, seq: b.lastSeq, at: st.Now}
		b.tombstones[p.ID()] = relayTombstone{res: res, expires: p.Header().ExpiresAt}
	}
	return map[string]any{"packet_id": res.PacketID, "accepted_at": res.AcceptedAt}, nil
}

func (b *relayBox) usage() mail.Usage {
	u := mail.Usage{LastSeq: b.lastSeq, Packets: len(b.packets)}
	for _, rec := range b.packets {
		u.Bytes += int64(rec.packet.Size())
	}
	return u
}

func (r *relayModel) owner(st relayStep) (*relayBox, string) {
	var current *mail.Card
	b := r.boxes[st.MailboxID]
	if b != nil {
		current = b.current
	}
	if _, err := mail.CheckOwnerCall(st.MailboxID, st.Token, r.origin, current, st.Now, 0); err != nil {
		return nil, mailCode(err)
	}
	return b, ""
}

func (r *relayModel) list(st relayStep) any {
	b, code := r.owner(st)
	if b == nil {
		return code
	}
	if err := mail.CheckListLimit(st.Limit); err != nil {
		return mailCode(err)
	}
	var after int64
	if st.Cursor != nil {
		n, err := mail.ParsePacketCursor(*st.Cursor)
		if err != nil {
			return mailCode(err)
		}
		after = n
	}
	var rows []relayRecord
	for _, rec := range b.packets {
		if rec.seq > after && mail.PacketLive(rec.packet.Header(), st.Now) {
			rows = append(rows, rec)
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].seq < rows[j].seq })
	out := map[string]any{}
	if len(rows) > st.Limit {
		rows = rows[:st.Limit]
		out["next_cursor"] = fmt.Sprint(rows[len(rows)-1].seq)
	}
	seqs := []any{}
	for _, rec := range rows {
		seqs = append(seqs, []any{rec.seq, rec.packet.ID()})
	}
	out["result"] = seqs
	return out
}

func (r *relayModel) delete(st relayStep) any {
	b, code := r.owner(st)
	if b == nil {
		return code
	}
	if err := mail.CheckPathID(st.PacketID, 32); err != nil {
		return mailCode(err)
	}
	delete(b.packets, st.PacketID)
	return "ok"
}

func (r *relayModel) prune(now int64) {
	for id, b := range r.boxes {
		for pid, rec := range b.packets {
			if !mail.PacketLive(rec.packet.Header(), now) {
				delete(b.packets, pid)
			}
		}
		for pid, t := range b.tombstones {
			if now >= t.expires {
				delete(b.tombstones, pid)
			}
		}
		if !mail.MailboxRetained(b.current, len(b.packets), len(b.tombstones), now) {
			delete(r.boxes, id)
		}
	}
}

// mailResponse checks a relay response as a client does.
func mailResponse(raw json.RawMessage) (any, error) {
	var in struct {
		What      string          `json:"what"`
		Value     json.RawMessage `json:"value"`
		Origin    string          `json:"origin"`
		Owner     string          `json:"owner"`
		MailboxID string          `json:"mailbox_id"`
		CardHash  string          `json:"card_hash"`
		Limit     int             `json:"limit"`
		Packet    json.RawMessage `json:"packet"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	v, err := strict(in.Value)
	if err != nil {
		return nil, err
	}
	switch in.What {
	case "discovery":
		err = mail.ValidateDiscovery(v, in.Origin)
	case "card_record":
		_, err = mail.CardRecordFromValue(v, in.Owner, in.MailboxID, in.CardHash)
	case "mailbox_list":
		_, err = mail.MailboxListFromValue(v, in.Owner, in.Limit)
	case "packet_record":
		_, err = mail.PacketRecordFromValue(v, in.MailboxID)
	case "packet_list":
		_, err = mail.PacketListFromValue(v, in.MailboxID, in.Limit)
	case "delivery":
		var p *mail.Packet
		if len(in.Packet) > 0 {
			var verdict any
			if p, verdict, err = packetOf(in.Packet); p == nil {
				return verdict, err
			}
		}
		_, err = mail.DeliveryResultFromValue(v, p)
	default:
		return nil, fmt.Errorf("bad input: unknown response %q", in.What)
	}
	return mailCode(err), nil
}
