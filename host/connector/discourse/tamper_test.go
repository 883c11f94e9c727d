package discourse_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"apconnect/host/connector/discourse"
	"apconnect/host/connector/internal/connectortest"
	"apconnect/host/identity"
	"apconnect/host/proto/adp"
)

// A proxy between connector and hub that flips a signature byte, changes a
// record hash, breaks pre_hash or serves a forked history: each is
// detected, nothing from the tampered record on is applied, the room is
// marked (visible in sync) and refuses writes, and a clean resync clears
// the mark.
func TestTamperedHistoryDetected(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		tamper func(t *testing.T, target int64) func([]map[string]any) []map[string]any
		code   string
	}{
		{"signature byte flipped", func(t *testing.T, target int64) func([]map[string]any) []map[string]any {
			return func(recs []map[string]any) []map[string]any {
				for _, r := range recs {
					if connectortest.SeqOf(r) == target {
						env := r["envelope"].(map[string]any)
						sig := []byte(env["signature"].(string))
						if sig[10] == 'A' {
							sig[10] = 'B'
						} else {
							sig[10] = 'A'
						}
						env["signature"] = string(sig)
					}
				}
				return recs
			}
		}, identity.CodeInvalidSignature},
		{"record hash changed", func(t *testing.T, target int64) func([]map[string]any) []map[string]any {
			return func(recs []map[string]any) []map[string]any {
				for _, r := range recs {
					if connectortest.SeqOf(r) == target {
						r["hash"] = r["pre_hash"]
					}
				}
				return recs
			}
		}, adp.CodeInvalidRecord},
		{"pre_hash broken", func(t *testing.T, target int64) func([]map[string]any) []map[string]any {
			return func(recs []map[string]any) []map[string]any {
				for i, r := range recs {
					if connectortest.SeqOf(r) == target && i > 0 {
						r["pre_hash"] = recs[i-1]["pre_hash"]
						connectortest.Rehash(t, r)
					}
				}
				return recs
			}
		}, adp.CodeChainBroken},
		{"forked history", func(t *testing.T, target int64) func([]map[string]any) []map[string]any {
			// Two accepted envelopes served in the other order, the chain
			// rebuilt: every hash and signature checks, the history does
			// not (each message was based on the record before it, which
			// now names the record itself).
			return func(recs []map[string]any) []map[string]any {
				for i := range recs {
					if connectortest.SeqOf(recs[i]) == target && i+1 < len(recs) {
						recs[i]["envelope"], recs[i+1]["envelope"] = recs[i+1]["envelope"], recs[i]["envelope"]
						for j := i; j < len(recs); j++ {
							if j > 0 {
								recs[j]["pre_hash"] = recs[j-1]["hash"]
							}
							connectortest.Rehash(t, recs[j])
						}
					}
				}
				return recs
			}
		}, adp.CodeBaseRecordMismatch},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := startHub(t)
			alice := newAgent(t, h, 0xA1, "")
			p := connectortest.NewProxy(t, h)
			bob := newAgent(t, h, 0xB0, "", withHTTP(p.Client))
			roomID := createRoom(t, alice, h, "public", nil)
			say := func(n int) {
				for i := 0; i < n; i++ {
					// Each message anchored on the latest record.
					st := must[*discourse.RoomStateResult](t, "agent_protocols_room_state")(alice.RoomState(ctx, alice.sess, discourse.RoomStateInput{RoomID: roomID}))
					seq, hash := st.Sync.SyncedSeq, lastHash(t, alice, roomID, st.Sync.SyncedSeq)
					must[*discourse.WriteResult](t, "agent_protocols_room_send_message")(alice.RoomSendMessage(ctx, alice.sess,
						discourse.RoomSendMessageInput{RoomID: roomID, Content: fmt.Sprintf("m%d", i), BaseSeq: &seq, BaseHash: &hash}))
				}
			}
			say(3)
			open := must[*discourse.RoomOpenResult](t, "agent_protocols_room_open")(bob.RoomOpen(ctx, bob.sess, discourse.RoomOpenInput{Host: h.Origin(), RoomID: roomID}))
			n := open.Sync.SyncedSeq // 4
			say(3)
			target := n + 2
			p.SetTamper(tc.tamper(t, target))
			st := must[*discourse.RoomStateResult](t, "agent_protocols_room_state")(bob.RoomState(ctx, bob.sess, discourse.RoomStateInput{RoomID: roomID, Refresh: true}))
			v := st.Sync.Verification
			if v == nil || v.Code != tc.code {
				t.Fatalf("not detected as %s: %+v", tc.code, v)
			}
			wantSynced := target - 1
			if tc.code == adp.CodeInvalidRecord {
				// The client refuses a page whose record does not hash to
				// what it claims as a whole: nothing of it is applied.
				wantSynced = n
			}
			if st.Sync.SyncedSeq != wantSynced {
				t.Fatalf("synced %d, want %d: something was applied from the tampered record on", st.Sync.SyncedSeq, wantSynced)
			}
			tl := must[*discourse.RoomTimelineResult](t, "agent_protocols_room_timeline")(bob.RoomTimeline(ctx, bob.sess, discourse.RoomTimelineInput{RoomID: roomID, Limit: 200}))
			if last := tl.Items[len(tl.Items)-1].Seq; last != wantSynced {
				t.Fatalf("timeline reaches %d", last)
			}
			if _, err := bob.RoomSendMessage(ctx, bob.sess, discourse.RoomSendMessageInput{RoomID: roomID, Content: "x"}); code(err) != discourse.CodeVerificationFailed {
				t.Fatalf("write on a failed room: %v", err)
			}
			// Nothing more is applied without a resync, even from a clean host.
			p.SetTamper(nil)
			tl = must[*discourse.RoomTimelineResult](t, "agent_protocols_room_timeline")(bob.RoomTimeline(ctx, bob.sess, discourse.RoomTimelineInput{RoomID: roomID}))
			if tl.Sync.Verification == nil || tl.Sync.SyncedSeq != wantSynced {
				t.Fatalf("applied without a resync: %+v", tl.Sync)
			}
			// A clean resync clears the mark.
			st = must[*discourse.RoomStateResult](t, "agent_protocols_room_state")(bob.RoomState(ctx, bob.sess, discourse.RoomStateInput{RoomID: roomID, Refresh: true}))
			if st.Sync.Verification != nil || st.Sync.SyncedSeq != n+3 {
				t.Fatalf("after a clean resync: %+v", st.Sync)
			}
		})
	}
}

// lastHash returns the record hash at seq from a's verified copy of a room.
func lastHash(t *testing.T, a *agent, roomID string, seq int64) string {
	t.Helper()
	tl := must[*discourse.RoomTimelineResult](t, "agent_protocols_room_timeline")(a.RoomTimeline(ctx, a.sess,
		discourse.RoomTimelineInput{RoomID: roomID, AfterSeq: seq - 1, Limit: 1, IncludeRecords: true}))
	if len(tl.Items) != 1 || tl.Items[0].Seq != seq {
		t.Fatalf("no item at seq %d", seq)
	}
	var rec struct {
		Hash string `json:"hash"`
	}
	if err := json.Unmarshal(tl.Items[0].Record, &rec); err != nil || rec.Hash == "" {
		t.Fatalf("record at seq %d: %v", seq, err)
	}
	return rec.Hash
}
