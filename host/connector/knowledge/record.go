package knowledge

import (
	"context"
	"time"

	"apconnect/host/identity"
	rules "apconnect/host/proto/knowledge"
	"apconnect/host/store"
	"apconnect/host/text"
)

// The local record of what the agent submitted (store.KnowledgeSubmission):
// the outbox keeps a submission only until it is resolved and pruned, so
// each submission a service accepted is also recorded, with every
// service's answer, for the operator's view. It changes no tool's result.

// recordTimeout bounds writing the record, which runs even when the call's
// context ended (the submission was accepted; its record must not be lost).
const recordTimeout = 10 * time.Second

// maxRecordedMessage bounds a recorded error message.
const maxRecordedMessage = 500

// record records a submission when at least one service accepted it. A
// failure is logged: the submission stands either way.
func (c *Module) record(ctx context.Context, env *identity.Envelope, results []SubmissionResult) {
	s := &store.KnowledgeSubmission{ID: env.Hash, Type: env.Event.Type, CreatedAt: env.Event.CreatedAt, UpdatedAt: c.NowMS()}
	accepted := false
	for _, r := range results {
		kr := store.KnowledgeResult{Service: r.Service}
		switch {
		case r.Item != nil:
			accepted = true
			kr.Seq, kr.AcceptedAt = r.Item.Seq, r.Item.AcceptedAt
		case r.Error != nil:
			kr.Code, kr.Message = r.Error.Code, text.Truncate(r.Error.Message, maxRecordedMessage)
		default:
			kr.Code = "unknown"
		}
		s.Results = append(s.Results, kr)
	}
	if !accepted {
		return
	}
	describe(s, env.Event.Payload)
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if err := c.Store.Write(dctx, func(tx *store.Tx) error { return tx.RecordKnowledgeSubmission(dctx, s) }); err != nil {
		c.Log.Warn("recording a knowledge submission", "id", env.Hash, "err", err)
	}
}

// describe fills what a submission is about from its payload: a
// publication's kind and title, an assessment's target, verdict and
// summary, a retraction's target and reason.
func describe(s *store.KnowledgeSubmission, payload any) {
	p, _ := payload.(map[string]any)
	str := func(k string) string {
		v, _ := p[k].(string)
		return text.Truncate(v, maxRecordedMessage)
	}
	switch s.Type {
	case rules.TypePublish:
		s.Kind, s.Title = str("kind"), str("title")
	case rules.TypeAssess:
		s.Target, s.Verdict, s.Title = str("target"), str("verdict"), str("summary")
	case rules.TypeRetract:
		s.Target, s.Title = str("target"), str("reason")
	}
}
