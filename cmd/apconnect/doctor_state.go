package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"apconnect/host/capability"
	"apconnect/host/config"
	"apconnect/host/store"
	"apconnect/host/text"
)

// checkState reports, from an identity's state database when it has one,
// what the operator's grants hold back: signed writes waiting in the outbox
// because their origin's grant was withdrawn, and rooms the connector would
// follow live on a host whose discourse.read is withdrawn. Nothing is sent.
func checkState(ctx context.Context, cs *checks, cfg *config.Config, id *config.Identity, agentID string) {
	name, err := store.FileName(agentID)
	if err != nil {
		return
	}
	if _, err := os.Stat(filepath.Join(cfg.StateDir(), "agents", name)); errors.Is(err, os.ErrNotExist) {
		return // never run: nothing held back
	}
	st, err := store.Open(ctx, store.Options{Dir: cfg.StateDir(), AgentID: agentID})
	if err != nil {
		cs.add("identity "+id.Name+" state", statusFail, "%s", oneLine(err.Error()))
		return
	}
	defer st.Close()
	label := "identity " + id.Name + " state"
	held := 0
	byOrigin := map[string]int{}
	pending, err := st.Read().OutboxEntries(ctx, store.OutboxPending)
	if err == nil {
		for _, e := range pending {
			if strings.Contains(e.Error, "permission_denied") {
				byOrigin[e.Service]++
				held++
			}
		}
	}
	for _, origin := range sortedKeys(byOrigin) {
		cs.add(label, statusWarn, "%s to %s wait in the outbox: the grant they need was withdrawn (they are sent when it is restored)",
			text.Plural(int64(byOrigin[origin]), "signed write", "signed writes"), origin)
	}
	rooms := map[string]int{}
	if live, err := st.Read().LiveRooms(ctx); err == nil {
		for _, r := range live {
			if g, _ := cfg.Grants(id, r.Host); !g.Has(capability.DiscourseRead) {
				rooms[r.Host]++
			}
		}
	}
	for _, host := range sortedKeys(rooms) {
		cs.add(label, statusWarn, "not followed: %s on %s, where discourse.read is not granted", text.Plural(int64(rooms[host]), "room", "rooms"), host)
	}
	if held == 0 && len(rooms) == 0 {
		cs.add(label, statusOK, "%s pending; nothing held back by the grants", text.Plural(int64(len(pending)), "outbox entry", "outbox entries"))
	}
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
