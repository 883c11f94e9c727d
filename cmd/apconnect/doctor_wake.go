package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"apconnect/host/config"
	"apconnect/host/keystore"
	"apconnect/host/store"
)

// doctorWakes is how many of an identity's latest wakes doctor shows.
const doctorWakes = 5

// checkWakes shows how the agent is woken: the [wake] settings, then for
// each identity whose state exists which process runs its wake jobs (the
// leases) and what became of its latest wakes — delivered, the command's
// exit, whether the agent then claimed or acknowledged the item.
func checkWakes(ctx context.Context, cs *checks, cfg *config.Config, now time.Time) {
	w := cfg.Wake
	var cmds []string
	for _, wc := range w.Commands {
		cmds = append(cmds, strings.Join(wc.Argv, " "))
	}
	channel := "off"
	if w.ClaudeChannel {
		channel = "on"
	}
	cs.add("wake", statusOK, "claude_channel %s; kinds %s; commands: %s", channel, strings.Join(w.Kinds, ", "), listOrNone(cmds))
	for _, id := range cfg.Identities {
		info, err := keystore.ReadInfo(cfg.Resolve(id.KeyFile))
		if err != nil {
			continue // the identity's row says why
		}
		name, err := store.FileName(info.AgentID)
		if err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(cfg.StateDir(), "agents", name)); errors.Is(err, os.ErrNotExist) {
			continue
		}
		st, err := store.Open(ctx, store.Options{Dir: cfg.StateDir(), AgentID: info.AgentID})
		if err != nil {
			cs.add("wake "+id.Name, statusWarn, "reading the state: %s", oneLine(err.Error()))
			continue
		}
		wakeRows(ctx, cs, "wake "+id.Name, st, now)
		st.Close()
	}
}

// wakeRows adds an identity's lease row and its latest wakes.
func wakeRows(ctx context.Context, cs *checks, name string, st *store.Store, now time.Time) {
	leases, err := st.Read().Leases(ctx)
	if err != nil {
		cs.add(name, statusWarn, "reading the leases: %s", oneLine(err.Error()))
		return
	}
	var held []string
	for _, l := range leases {
		if l.Until > now.UnixMilli() {
			held = append(held, fmt.Sprintf("%s by %s", l.Job, l.Holder))
		}
	}
	if len(held) > 0 {
		cs.add(name, statusOK, "running: %s", strings.Join(held, "; "))
	}
	wakes, err := st.Read().RecentWakes(ctx, store.WakeFilter{Limit: doctorWakes})
	if err != nil {
		cs.add(name, statusWarn, "reading the wake log: %s", oneLine(err.Error()))
		return
	}
	for _, wk := range wakes {
		st := statusOK
		if wk.State == store.WakeFailed || wk.State == store.WakeTimeout || wk.State == store.WakeInterrupted ||
			(wk.ExitCode != nil && *wk.ExitCode != 0) {
			st = statusWarn
		}
		cs.add(fmt.Sprintf("%s #%d", name, wk.ID), st, "%s", describeWake(wk))
	}
}

// describeWake says what became of one wake, in one line.
func describeWake(w store.WakeRecord) string {
	at := func(ms int64) time.Time { return time.UnixMilli(ms) }
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s", at(w.CreatedAt).UTC().Format(time.RFC3339), w.Kind, w.InboxID)
	if w.RoomID != "" {
		fmt.Fprintf(&b, " (room %s", w.RoomID)
		if w.Seq > 0 {
			fmt.Fprintf(&b, " seq %d", w.Seq)
		}
		b.WriteString(")")
	}
	fmt.Fprintf(&b, " → %s %q by %s: %s", strings.ReplaceAll(w.Via, "_", " "), w.Label, w.Holder, w.State)
	if w.ExitCode != nil {
		fmt.Fprintf(&b, " %d", *w.ExitCode)
	}
	if w.StartedAt > 0 && w.EndedAt >= w.StartedAt {
		fmt.Fprintf(&b, " after %s", at(w.EndedAt).Sub(at(w.StartedAt)).Round(time.Millisecond))
	}
	if w.Error != "" {
		fmt.Fprintf(&b, " (%s)", w.Error)
	}
	if w.OutputBytes > 0 {
		fmt.Fprintf(&b, "; output %d bytes, first line %q", w.OutputBytes, firstLine(string(w.Output), 120))
	}
	switch {
	case w.AckedAt > 0:
		fmt.Fprintf(&b, "; the agent acknowledged it (%s) %s later", w.AckState, at(w.AckedAt).Sub(at(w.CreatedAt)).Round(time.Second))
	case w.ClaimedAt > 0:
		fmt.Fprintf(&b, "; the agent claimed it %s later", at(w.ClaimedAt).Sub(at(w.CreatedAt)).Round(time.Second))
	default:
		b.WriteString("; the agent has not claimed it")
	}
	return oneLine(b.String())
}
