package discourse_test

import (
	"fmt"
	"testing"

	"apconnect/host/connector"
	"apconnect/host/connector/discourse"
	"apconnect/host/connector/internal/connectortest"
	"apconnect/host/proto/adp"
)

// A catch-up more than a window behind the host leaves the records it
// would prune before it ends out of the store; the window it ends with is
// the one storing every record gives: the newest records_per_room, and,
// when the catch-up ends early at a record failing verification, the
// window below that record.
func TestCatchUpKeepsTheWindow(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, 0xA1, "")
	roomID := createRoom(t, alice, h, "public", nil)
	for i := range 45 {
		must[*discourse.WriteResult](t, "agent_protocols_room_send_message")(alice.RoomSendMessage(ctx, alice.sess,
			discourse.RoomSendMessageInput{RoomID: roomID, Content: fmt.Sprint("m", i)}))
	}
	const last = 46 // room.create and 45 messages
	window := func(t *testing.T, bob *agent) []int64 {
		t.Helper()
		tl := must[*discourse.RoomTimelineResult](t, "agent_protocols_room_timeline")(bob.RoomTimeline(ctx, bob.sess,
			discourse.RoomTimelineInput{RoomID: roomID, Limit: 200, IncludeRecords: true}))
		var seqs []int64
		for _, it := range tl.Items {
			// The items and records put back into the window are whole.
			if want := fmt.Sprint("m", it.Seq-2); it.Content != want {
				t.Fatalf("item %d: content %v, want %s", it.Seq, it.Content, want)
			}
			rec, err := adp.ParseRecord(it.Record)
			if err != nil || rec.Seq != it.Seq || rec.Envelope.Verify() != nil {
				t.Fatalf("item %d: record %s (%v)", it.Seq, it.Record, err)
			}
			seqs = append(seqs, it.Seq)
		}
		return seqs
	}
	span := func(from, to int64) []int64 {
		var s []int64
		for i := from; i <= to; i++ {
			s = append(s, i)
		}
		return s
	}
	small := func(o *connector.Options) { o.Config.State.RecordsPerRoom = 10; o.HistoryPage = 10 }

	t.Run("to the end", func(t *testing.T) {
		bob := newAgent(t, h, 0xB0, "", small)
		open := must[*discourse.RoomOpenResult](t, "agent_protocols_room_open")(bob.RoomOpen(ctx, bob.sess, discourse.RoomOpenInput{Host: h.Origin(), RoomID: roomID}))
		if open.Sync.SyncedSeq != last {
			t.Fatalf("synced %d, want %d", open.Sync.SyncedSeq, last)
		}
		if got, want := fmt.Sprint(window(t, bob)), fmt.Sprint(span(last-9, last)); got != want {
			t.Fatalf("window %s, want %s", got, want)
		}
	})
	t.Run("ended early", func(t *testing.T) {
		const bad = 30
		p := connectortest.NewProxy(t, h)
		p.SetTamper(func(recs []map[string]any) []map[string]any {
			for _, r := range recs {
				if connectortest.SeqOf(r) == bad {
					env := r["envelope"].(map[string]any)
					sig := []byte(env["signature"].(string))
					sig[10] ^= 'A' ^ 'B'
					env["signature"] = string(sig)
				}
			}
			return recs
		})
		bob := newAgent(t, h, 0xB1, "", small, withHTTP(p.Client))
		open := must[*discourse.RoomOpenResult](t, "agent_protocols_room_open")(bob.RoomOpen(ctx, bob.sess, discourse.RoomOpenInput{Host: h.Origin(), RoomID: roomID}))
		if open.Sync.SyncedSeq != bad-1 || open.Sync.Verification == nil {
			t.Fatalf("sync %+v, want a failure at %d", open.Sync, bad)
		}
		if got, want := fmt.Sprint(window(t, bob)), fmt.Sprint(span(bad-10, bad-1)); got != want {
			t.Fatalf("window %s, want %s", got, want)
		}
	})
}
