package connector_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"apconnect/host/connector"
	"apconnect/host/connector/discourse"
	"apconnect/host/connector/internal/connectortest"
	"apconnect/host/store"
)

// heartbeat reads the row of id.
func heartbeat(t *testing.T, c *connector.Connector, id string) *store.Heartbeat {
	t.Helper()
	rows, err := c.Store().Read().Heartbeats(ctx, 200)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.ID == id {
			return r
		}
	}
	return nil
}

// A process's heartbeat: written at start with what it is, rewritten with
// its client, its calls and the states of the rooms it follows live, and
// closed with a clean exit that is never stale.
func TestHeartbeatOfAProcess(t *testing.T) {
	t.Parallel()
	h := connectortest.StartHub(t)
	alice := connectortest.NewAgent(t, h, 0xA1, "").Open()
	now := time.Now().UnixMilli()
	created, err := alice.Discourse().RoomCreate(ctx, "s", discourse.RoomCreateInput{Host: h.Origin(), Topic: "t", Visibility: "public",
		StartTime: now - 1000, EndTime: now + 3600_000})
	if err != nil {
		t.Fatal(err)
	}
	hb := alice.StartHeartbeat(ctx, connector.ProcessInfo{Command: "serve", Transport: "http", Addr: "127.0.0.1:8765", Interval: time.Second})
	first := heartbeat(t, alice, hb.ID())
	if first == nil || first.PID != int64(os.Getpid()) || first.Command != "serve" || first.Transport != "http" || first.Addr != "127.0.0.1:8765" ||
		first.Identity != "default" || first.IntervalMS != 1000 || first.StoppedAt != 0 || first.Stale(first.BeatAt) {
		t.Fatalf("first heartbeat %+v", first)
	}
	// The live stream of the room shows in the heartbeat once open.
	alice.Start(ctx)
	hb.Client("claude-code", "2.1")
	hb.Called("agent_protocols_room_timeline")
	connectortest.Eventually(t, 15*time.Second, "the live stream in the heartbeat", func() bool {
		r := heartbeat(t, alice, hb.ID())
		var states []discourse.StreamState
		_ = json.Unmarshal(r.Streams, &states)
		return r.ClientName == "claude-code" && r.ClientVersion == "2.1" && r.LastCall == "agent_protocols_room_timeline" &&
			r.Calls == 1 && len(states) == 1 && states[0].RoomID == created.Room.RoomID && states[0].State == discourse.StreamLive
	})
	if got := alice.Discourse().StreamStates(); len(got) != 1 || got[0].Host != h.Origin() || got[0].Since == 0 {
		t.Fatalf("stream states %+v", got)
	}
	// Beats keep coming while nothing changes.
	beat := heartbeat(t, alice, hb.ID()).BeatAt
	connectortest.Eventually(t, 5*time.Second, "a later beat", func() bool { return heartbeat(t, alice, hb.ID()).BeatAt > beat })
	hb.Stop()
	last := heartbeat(t, alice, hb.ID())
	if last.StoppedAt == 0 || last.Streams != nil || last.Stale(last.StoppedAt+time.Hour.Milliseconds()) {
		t.Fatalf("after Stop %+v", last)
	}
}

// A process that stops beating without exiting (killed, hung) turns stale
// after three intervals; a new process prunes rows gone for a day.
func TestHeartbeatGoesStale(t *testing.T) {
	t.Parallel()
	h := connectortest.StartHub(t)
	a := connectortest.NewAgent(t, h, 0xA2, "")
	c := a.Open()
	old := time.Now().Add(-25 * time.Hour).UnixMilli()
	if err := c.Store().Write(ctx, func(tx *store.Tx) error {
		return tx.PutHeartbeat(ctx, &store.Heartbeat{ID: "gone", Command: "mcp", Transport: "stdio", BeatAt: old, StartedAt: old, IntervalMS: 5000})
	}); err != nil {
		t.Fatal(err)
	}
	hb := c.StartHeartbeat(ctx, connector.ProcessInfo{Command: "mcp", Transport: "stdio", Interval: 200 * time.Millisecond})
	if heartbeat(t, c, "gone") != nil {
		t.Fatal("a row gone for a day was not pruned")
	}
	// Kill it: cancel the writer without the clean exit.
	hb.Stop()
	if err := c.Store().Write(ctx, func(tx *store.Tx) error {
		r := heartbeat(t, c, hb.ID())
		r.StoppedAt, r.BeatAt = 0, time.Now().UnixMilli()
		return tx.PutHeartbeat(ctx, r)
	}); err != nil {
		t.Fatal(err)
	}
	r := heartbeat(t, c, hb.ID())
	if r.Stale(time.Now().UnixMilli()) {
		t.Fatal("stale at once")
	}
	time.Sleep(700 * time.Millisecond)
	if !heartbeat(t, c, hb.ID()).Stale(time.Now().UnixMilli()) {
		t.Fatal("not stale after three missed beats")
	}
	if !strings.Contains(hb.ID(), "/") {
		t.Fatalf("id %q", hb.ID())
	}
}
