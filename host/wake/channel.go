package wake

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"apconnect/host/inbox"
	"apconnect/host/store"
)

// Claude Code channels (research preview, Claude Code ≥ 2.1.80): a server
// that declares the experimental capability ChannelCapability may send
// ChannelMethod notifications; an idle session wakes on one.
const (
	// ChannelCapability is the key of the server's experimental capability.
	ChannelCapability = "claude/channel"
	// ChannelMethod is the notification's method.
	ChannelMethod = "notifications/claude/channel"
	// BurstLimit is how many notifications a session gets in one second;
	// the items beyond it are folded into one notification at the end of
	// the second.
	BurstLimit = 5
)

// Notification is the params of one ChannelMethod notification: content
// is a pointer written by apconnect, meta string values only (Claude Code
// requires it; its keys become attributes of the <channel> tag).
type Notification struct {
	Content string            `json:"content"`
	Meta    map[string]string `json:"meta"`
}

var sessions atomic.Int64

// Announce sends the channel notifications of one MCP session through send
// until ctx ends or send fails (its error is returned): one per new inbox
// item of the [wake] kinds, never two for one item in a session; the items
// already pending when it starts are announced once; beyond BurstLimit a
// second, the items wait for the second to end and are folded into one
// notification whose meta.inbox_ids lists them. Each item announced is
// logged in the wake log (via claude_channel). It returns nil at once when
// channel mode is off.
func (s *Service) Announce(ctx context.Context, send func(context.Context, Notification) error) error {
	if !s.cfg.ClaudeChannel {
		return nil
	}
	n := sessions.Add(1)
	a := &announcer{s: s, send: send, target: fmt.Sprintf("channel:%s:%d", s.holder, n),
		label: fmt.Sprintf("Claude Code channel of %s (session %d)", s.holder, n), announced: map[string]bool{}}
	poll := time.NewTicker(s.opts.Poll)
	defer poll.Stop()
	for {
		changed := s.e.Changed()
		if err := a.round(ctx); err != nil {
			return err
		}
		var flush <-chan time.Time
		var t *time.Timer
		if len(a.overflow) > 0 {
			t = time.NewTimer(time.Until(a.flushAt))
			flush = t.C
		}
		select {
		case <-ctx.Done():
		case <-changed:
		case <-poll.C:
		case <-flush:
		}
		if t != nil {
			t.Stop()
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

// announcer is the state of one session's announcements.
type announcer struct {
	s      *Service
	send   func(context.Context, Notification) error
	target string // the session, in the wake log
	label  string

	announced map[string]bool
	sent      []time.Time      // notifications of the last second
	overflow  []store.WakeItem // items waiting for the second to end
	flushAt   time.Time        // when the overflow goes out
}

// round announces the items not announced yet, and the overflow once its
// second has passed.
func (a *announcer) round(ctx context.Context) error {
	items, err := a.s.st.Read().WakeCandidates(ctx, store.WakeQuery{Target: a.target, Kinds: a.s.cfg.Kinds, MaxPriority: allPriorities})
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		a.s.log.Warn("wake: reading the inbox for the channel", "err", err)
		return nil
	}
	now := time.Now()
	for len(a.sent) > 0 && now.Sub(a.sent[0]) >= time.Second {
		a.sent = a.sent[1:]
	}
	for _, w := range items {
		if a.announced[w.ID] {
			continue
		}
		a.announced[w.ID] = true
		if len(a.sent) < BurstLimit && len(a.overflow) == 0 {
			if err := a.deliver(ctx, []store.WakeItem{w}); err != nil {
				return err
			}
			a.sent = append(a.sent, time.Now()) // after the send: the second starts no earlier
			continue
		}
		if len(a.overflow) == 0 {
			a.flushAt = a.sent[0].Add(time.Second)
		}
		a.overflow = append(a.overflow, w)
	}
	if len(a.overflow) > 0 && !now.Before(a.flushAt) {
		batch := a.overflow
		a.overflow = nil
		if err := a.deliver(ctx, batch); err != nil {
			return err
		}
		a.sent = append(a.sent, time.Now())
	}
	return nil
}

// deliver logs the items still pending as announced to the session and
// sends one notification for them: the item's own, or a folded one.
func (a *announcer) deliver(ctx context.Context, batch []store.WakeItem) error {
	var items []inbox.Item
	var ids []int64
	err := a.s.st.Write(ctx, func(tx *store.Tx) error {
		items, ids = nil, nil
		for _, w := range batch {
			it, err := item(w)
			if err != nil {
				a.s.log.Warn("wake: an unreadable inbox item", "err", err)
				continue
			}
			id, ok, err := tx.ClaimWake(ctx, store.WakeClaim{Item: logged(w, it), Via: store.WakeViaChannel, Target: a.target, Label: a.label,
				Holder: a.s.holder, State: store.WakeSent, At: a.s.e.NowMS()})
			if err != nil {
				return err
			}
			if ok {
				items, ids = append(items, it), append(ids, id)
			}
		}
		return nil
	})
	if err != nil || len(items) == 0 {
		if err != nil && ctx.Err() == nil {
			a.s.log.Warn("wake: logging channel notifications", "err", err)
		}
		return nil
	}
	n := Notification{Content: Pointer(items[0]), Meta: meta(items[0])}
	if len(items) > 1 {
		n = Notification{Content: foldedPointer(items), Meta: foldedMeta(items)}
	}
	if err := a.send(ctx, n); err != nil {
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = a.s.st.Write(wctx, func(tx *store.Tx) error {
			for _, id := range ids {
				if err := tx.FinishWake(wctx, id, store.WakeEnd{State: store.WakeFailed, Error: "sending the notification: " + err.Error(), At: a.s.e.NowMS()}); err != nil {
					return err
				}
			}
			return nil
		})
		return err
	}
	return nil
}
