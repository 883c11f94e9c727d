package wake

import (
	"context"
	"fmt"
	"strings"

	"apconnect/host/inbox"
	"apconnect/host/store"
	"apconnect/host/text"
)

// Codex's Stop hook fires at the end of each turn; answering
// {"decision": "block", "reason": …} makes Codex run another turn in the
// same session with reason as its prompt.

// CodexInput is what `apconnect hook codex-stop` reads of Codex's Stop hook
// payload: the session it fires in.
type CodexInput struct {
	SessionID      string `json:"session_id"`
	StopHookActive bool   `json:"stop_hook_active"`
}

// CodexDecision is the hook's answer when it blocks the stop.
type CodexDecision struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
}

// codexShown bounds the items a reason points at one by one.
const codexShown = 5

// CodexStop decides the Stop hook's answer for the identity whose state st
// is: a block whose reason points at the pending high-priority items of
// kinds that were not announced to this Codex session before, or nil. The
// items announced are logged in the wake log (via codex_stop, one target
// per Codex session) in the same transaction that picks them, so the next
// stop of the session is not blocked again for them: an agent that chooses
// not to act is not looped. holder names the process in the log.
func CodexStop(ctx context.Context, st *store.Store, kinds []string, in CodexInput, holder string, now int64) (*CodexDecision, error) {
	target, label := "codex", "Codex (no session id)"
	if in.SessionID != "" {
		target, label = "codex:"+text.Truncate(in.SessionID, 200), "Codex session "+safe(in.SessionID)
	}
	var items []inbox.Item
	err := st.Write(ctx, func(tx *store.Tx) error {
		cands, err := tx.WakeCandidates(ctx, store.WakeQuery{Target: target, Kinds: kinds, MaxPriority: 0})
		if err != nil {
			return err
		}
		for _, w := range cands {
			it, err := item(w)
			if err != nil {
				continue
			}
			_, ok, err := tx.ClaimWake(ctx, store.WakeClaim{Item: logged(w, it), Via: store.WakeViaCodex, Target: target,
				Label: label, Holder: holder, State: store.WakeSent, At: now})
			if err != nil {
				return err
			}
			if ok {
				items = append(items, it)
			}
		}
		return nil
	})
	if err != nil || len(items) == 0 {
		return nil, err
	}
	return &CodexDecision{Decision: "block", Reason: codexReason(items)}, nil
}

// codexReason points at the items, as a channel notification does.
func codexReason(items []inbox.Item) string {
	var b strings.Builder
	if len(items) == 1 {
		b.WriteString("apconnect: an inbox item needs you. ")
	} else {
		fmt.Fprintf(&b, "apconnect: %d inbox items need you. ", len(items))
	}
	for _, it := range items[:min(len(items), codexShown)] {
		fmt.Fprintf(&b, "Inbox item %s: %s. ", safe(it.ID), what(it))
	}
	if len(items) > codexShown {
		fmt.Fprintf(&b, "And %d more. ", len(items)-codexShown)
	}
	fmt.Fprintf(&b, "Call %s and handle or acknowledge what it returns; this stop hook will not hold a turn for these items again.", inboxNext)
	return b.String()
}
