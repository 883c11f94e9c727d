package opview

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"apconnect/host/connector/mail"
	protomail "apconnect/host/proto/mail"
	"apconnect/host/store"
	"apconnect/host/text"
)

// The protocol modules' pages, read for a running connector: the wake log
// and leases (the store's wake group), the mailboxes and letters (the Mail
// module's local views, as the MCP resources read them; a letter's text
// from the store), the knowledge submitted and the delegation credentials
// seen (the records the Knowledge and Delegation modules keep).

// mailViews are the Mail module's local views, as method values: they read
// local state only and never fetch, sign or mark a letter read.
type mailViews struct {
	readable  func() error
	mailboxes func(ctx context.Context) ([]mail.MailboxView, error)
	letters   func(ctx context.Context, limit int) ([]mail.LetterMeta, bool, error)
}

// List sizes of the protocol pages.
const (
	wakesListed       = 100
	submissionsListed = 200
	credentialsListed = 300
)

// Wake reads the wake log and the leases.
func (s *connSource) Wake(ctx context.Context) (*WakeLog, error) {
	now := s.now()
	out := &WakeLog{Now: now}
	leases, err := s.q.Leases(ctx)
	if err != nil {
		return nil, err
	}
	for _, l := range leases {
		out.Leases = append(out.Leases, Lease{Job: l.Job, Holder: l.Holder, Since: l.Since, Until: l.Until, Lapsed: l.Until <= now})
	}
	wakes, err := s.q.RecentWakes(ctx, store.WakeFilter{Limit: wakesListed + 1})
	if err != nil {
		return nil, err
	}
	if len(wakes) > wakesListed {
		out.More, wakes = true, wakes[:wakesListed]
	}
	rooms := map[[2]string]int64{}
	for _, w := range wakes {
		v := Wake{ID: w.ID, InboxID: w.InboxID, Kind: w.Kind, Host: w.Host, RoomID: w.RoomID, Seq: w.Seq, Via: w.Via, Target: w.Target,
			Label: w.Label, Holder: w.Holder, State: w.State, CreatedAt: w.CreatedAt, StartedAt: w.StartedAt, EndedAt: w.EndedAt,
			Error: text.Truncate(w.Error, MaxItemRunes), Output: text.Truncate(validUTF8(w.Output), MaxItemRunes),
			OutputBytes: w.OutputBytes, ClaimedAt: w.ClaimedAt, AckedAt: w.AckedAt, AckState: w.AckState}
		v.OutputCut = v.OutputBytes > int64(len(w.Output)) || v.Output != validUTF8(w.Output)
		if w.ExitCode != nil {
			v.Exited, v.ExitCode = true, *w.ExitCode
		}
		if w.RoomID != "" {
			k := [2]string{w.Host, w.RoomID}
			if _, ok := rooms[k]; !ok {
				if r, err := s.q.RoomAt(ctx, w.Host, w.RoomID); err == nil {
					rooms[k] = r.Key
				} else {
					rooms[k] = 0
				}
			}
			v.RoomKey = rooms[k]
		}
		out.Wakes = append(out.Wakes, v)
	}
	return out, nil
}

// validUTF8 is b as text, invalid sequences replaced.
func validUTF8(b []byte) string {
	return strings.ToValidUTF8(string(b), string(utf8.RuneError))
}

// Mail reads the mailboxes and the letters' metadata the agent may read.
func (s *connSource) Mail(ctx context.Context) (*Mail, error) {
	out := &Mail{Now: s.now()}
	if err := s.mail.readable(); err != nil {
		out.Refusal = err.Error()
		return out, nil
	}
	boxes, err := s.mail.mailboxes(ctx)
	if err != nil {
		return nil, err
	}
	for _, b := range boxes {
		out.Mailboxes = append(out.Mailboxes, Mailbox{MailboxID: b.MailboxID, Address: b.Address, Routes: b.Routes, Status: b.Status,
			CreatedAt: b.CreatedAt, ExpiresAt: b.ExpiresAt, ReceiveUntil: b.ReceiveUntil, Unread: b.UnreadCount, KeyHeld: b.KeyAvailable,
			PendingRoutes: b.PendingRoutes})
	}
	metas, _, err := s.mail.letters(ctx, 0)
	if err != nil {
		return nil, err
	}
	refs, err := s.q.LetterRefs(ctx)
	if err != nil {
		return nil, err
	}
	ids := make(map[[3]string]int64, len(refs))
	for _, r := range refs {
		ids[[3]string{r.Direction, r.Sender, r.MessageID}] = r.ID
	}
	out.Total = len(metas)
	for i := len(metas) - 1; i >= 0; i-- {
		l := letter(&metas[i], ids[[3]string{metas[i].Direction, metas[i].From, metas[i].MessageID}])
		if l.Unread {
			out.Unread++
		}
		if len(out.Letters) < MaxLettersListed {
			out.Letters = append(out.Letters, l)
		}
	}
	return out, nil
}

// letter converts a letter's metadata.
func letter(m *mail.LetterMeta, id int64) Letter {
	l := Letter{ID: id, Direction: m.Direction, MessageID: m.MessageID, ThreadID: m.ThreadID, From: m.From, To: m.To, MailboxID: m.MailboxID,
		InReplyTo: m.InReplyTo, CreatedAt: m.CreatedAt, ExpiresAt: m.ExpiresAt, ReceivedAt: m.ReceivedAt, Unread: m.Read != nil && !*m.Read,
		Size: int64(m.Size), Parts: m.Parts}
	if d := m.Delivery; d != nil {
		l.Delivery, l.Route, l.AcceptedAt = d.Status, d.Route, d.AcceptedAt
		if d.LastError != nil {
			l.DeliveryError = text.Truncate(d.LastError.Route+": "+d.LastError.Code+": "+d.LastError.Message, MaxItemRunes)
		}
	}
	return l
}

// Letter reads one letter the agent may read, with its text.
func (s *connSource) Letter(ctx context.Context, id int64) (*LetterDetail, error) {
	if s.mail.readable() != nil {
		return nil, ErrNotFound
	}
	stored, err := s.q.LetterByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	metas, _, err := s.mail.letters(ctx, 0)
	if err != nil {
		return nil, err
	}
	var meta *mail.LetterMeta
	for i := range metas {
		if metas[i].Direction == stored.Direction && metas[i].From == stored.Sender && metas[i].MessageID == stored.MessageID {
			meta = &metas[i]
		}
	}
	if meta == nil {
		return nil, ErrNotFound
	}
	d := &LetterDetail{Letter: letter(meta, id), Now: s.now()}
	msg, err := protomail.ParseMessage(stored.Message)
	if err != nil {
		d.Invalid = text.Truncate(err.Error(), MaxItemRunes)
		return d, nil
	}
	if msg.Subject != nil {
		d.Subject, d.HasSubject = *msg.Subject, true
	}
	for _, p := range msg.Parts {
		b, _ := p.Bytes()
		v := LetterPart{MediaType: p.MediaType, Name: p.Name, Size: int64(len(b)), IsText: p.IsText()}
		if v.IsText {
			full := validUTF8(b)
			v.Runes = utf8.RuneCountInString(full)
			v.Text = text.Truncate(full, MaxLetterRunes)
			v.Cut = v.Text != full
		}
		d.Parts = append(d.Parts, v)
	}
	return d, nil
}

// Knowledge reads the record of what the agent submitted.
func (s *connSource) Knowledge(ctx context.Context) (*Knowledge, error) {
	subs, err := s.q.KnowledgeSubmissions(ctx, submissionsListed)
	if err != nil {
		return nil, err
	}
	out := &Knowledge{Now: s.now()}
	for _, k := range subs {
		v := Submission{ID: k.ID, Type: k.Type, Kind: k.Kind, Title: k.Title, Target: k.Target, Verdict: k.Verdict, CreatedAt: k.CreatedAt,
			SubmittedAt: k.SubmittedAt, UpdatedAt: k.UpdatedAt}
		for _, r := range k.Results {
			v.Results = append(v.Results, SubmissionResult{Service: r.Service, Accepted: r.Accepted(), Seq: r.Seq, AcceptedAt: r.AcceptedAt,
				Code: r.Code, Message: r.Message})
		}
		out.Submissions = append(out.Submissions, v)
	}
	return out, nil
}

// Delegations reads the record of the credentials the agent has seen.
func (s *connSource) Delegations(ctx context.Context) (*Delegations, error) {
	list, err := s.q.DelegationCredentials(ctx, credentialsListed)
	if err != nil {
		return nil, err
	}
	now := s.now()
	out := &Delegations{Now: now, Self: s.static.agentID}
	for _, c := range list {
		v := Credential{Service: c.Service, ID: c.ID, Principal: c.Principal, Subject: c.Subject, Controller: c.Controller, EventID: c.EventID,
			Status: c.Status, Scopes: c.Scopes, Audiences: c.Audiences, ExpiresAt: c.ExpiresAt, AcceptedAt: c.AcceptedAt, Signed: c.Signed,
			Source: c.Source, SeenAt: c.SeenAt}
		if (v.Status == "active" || v.Status == "suspended") && v.ExpiresAt > 0 && now >= v.ExpiresAt {
			v.Status = "expired"
		}
		if ck := c.Check; ck != nil {
			v.Checked, v.Audience, v.Verified, v.Usable, v.Reasons, v.CheckedAt = true, ck.Audience, ck.Verified, ck.Usable, ck.Reasons, ck.At
		}
		if c.Signed {
			out.Granted = append(out.Granted, v)
		}
		if c.Subject == s.static.agentID {
			out.Held = append(out.Held, v)
		}
	}
	return out, nil
}
