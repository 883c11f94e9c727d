package discourse_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"apconnect/host/config"
	"apconnect/host/connector"
	"apconnect/host/connector/discourse"
	"apconnect/host/hub/hubtest"
	"apconnect/host/room"
	"apconnect/host/room/roomtest"
	"apconnect/host/store"
)

// benchHost is the configured host of the local-read benchmarks; nothing
// is ever sent to it.
const benchHost = "https://hub.bench.invalid"

// buildStore fills the state of agent seed directly through the store API
// (no hub): rooms rooms of perRoom verified records each (real signed
// records of a template room, so items and records have realistic sizes),
// with inbox items on every fifth record (one room then holds more than
// inbox_next's default page, so every size answers a full page).
func buildStore(b *testing.B, dir string, seed byte, rooms, perRoom int) {
	b.Helper()
	self := hubtest.NewAgent(seed)
	creator := roomtest.NewAgent("bench-creator")
	speaker := roomtest.NewAgent("bench-speaker")
	c := roomtest.NewChain(b, benchHost, "templateroom", creator, nil)
	c.Join(b, speaker, "speaker")
	for c.Room.Last.Seq < int64(perRoom) {
		c.Message(b, speaker, fmt.Sprintf("message %d: a realistic line of discussion text, long enough to matter for the page size.", c.Room.Last.Seq), self.ID)
	}
	p := &room.Processor{Rules: c.Rules, Host: benchHost, Self: self.ID}
	res := p.Process(nil, c.Records, room.Options{})
	if res.Failure != nil {
		b.Fatal(res.Failure)
	}
	var events []store.Event
	var inbox []store.InboxEntry
	for i, a := range res.Applied {
		rec, _ := json.Marshal(a.Record)
		item, _ := json.Marshal(a.Item)
		events = append(events, store.Event{Seq: a.Record.Seq, Hash: a.Record.Hash, EventID: a.Record.EnvelopeHash(), Type: a.Record.Type(),
			Actor: a.Record.Actor(), HeadSeq: a.Head.Seq, HeadHash: a.Head.Hash, Record: rec, Item: item})
		if i%5 == 0 {
			for _, it := range a.Inbox {
				raw, _ := json.Marshal(it)
				inbox = append(inbox, store.InboxEntry{ID: it.ID, Kind: it.Kind, Seq: *it.Seq, EventID: *it.EventID,
					Priority: room.PriorityRank(it.Priority), CreatedAt: it.CreatedAt, Item: raw})
			}
		}
	}
	snap, _ := json.Marshal(res.State.Room)
	st, err := store.Open(ctx, store.Options{Dir: dir, AgentID: self.ID, RecordsPerRoom: perRoom})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	for r := 0; r < rooms; r++ {
		roomID := fmt.Sprintf("room%06d", r)
		err := st.Write(ctx, func(tx *store.Tx) error {
			row, err := tx.EnsureRoom(ctx, benchHost, roomID, 1)
			if err != nil {
				return err
			}
			ib := make([]store.InboxEntry, len(inbox))
			for i, e := range inbox {
				e.ID = fmt.Sprintf("%s-%d", e.ID, r)
				ib[i] = e
			}
			_, err = tx.ApplyBatch(ctx, row.Key, &store.Batch{Events: events, Inbox: ib, Now: 1, State: &store.RoomState{
				Snapshot: snap, HeadSeq: res.State.Room.Head.Seq, HeadHash: res.State.Room.Head.Hash,
				SyncedSeq: res.State.Room.Last.Seq, SyncedHash: res.State.Room.Last.Hash,
				Listing: store.Listing{SelfState: "active", SelfRole: "speaker", StartTime: roomtest.Start, EndTime: roomtest.Start + 1},
			}})
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// readConnector opens a connector on a state built by buildStore.
func readConnector(b *testing.B, home string, seed byte) *connector.Connector {
	cfg, err := config.Default(home, config.DefaultOptions{HostURL: benchHost, HostLabel: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	c, err := connector.New(ctx, connector.Options{Config: cfg, Signer: hubtest.NewAgent(seed).Signer})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

type latencies []time.Duration

func (l latencies) pct(p float64) float64 {
	s := append(latencies{}, l...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(p * float64(len(s)-1))
	return float64(s[i].Microseconds()) / 1000
}

// inboxPage is inbox_next's default page: every size of BenchmarkLocalReads
// must fill it, so that the ratio compares the same answer (it once
// compared 4 items with one room to 10 with 10,000).
const inboxPage = 10

// BenchmarkLocalReads measures the local read paths on a big state: an
// unread timeline page of 50 (unread_only, limit 50) and inbox_next, with
// 10,000 rooms of 100 records stored, against the same calls with one
// room. Metrics: p50-ms and p99-ms per call (target p50 ≤ 1 ms); make
// bench derives the ratio of the p50s (rooms=10000 over rooms=1; target
// ≤ 2).
func BenchmarkLocalReads(b *testing.B) {
	const perRoom = 100
	sizes := []int{1, 10000}
	for _, rooms := range sizes {
		home := b.TempDir()
		seed := byte(0x40)
		start := time.Now()
		cfg, _ := config.Default(home, config.DefaultOptions{HostURL: benchHost, HostLabel: "bench"})
		buildStore(b, cfg.StateDir(), seed, rooms, perRoom)
		b.Logf("built %d rooms × %d records in %v", rooms, perRoom, time.Since(start))
		c := readConnector(b, home, seed)
		b.Run(fmt.Sprintf("timeline/rooms=%d", rooms), func(b *testing.B) {
			var lat latencies
			rng := rand.New(rand.NewPCG(1, 2))
			for i := 0; b.Loop(); i++ {
				roomID := fmt.Sprintf("room%06d", rng.IntN(rooms))
				t0 := time.Now()
				res, err := c.Discourse().RoomTimeline(ctx, discourse.SessionID(fmt.Sprintf("s%d", i%8)), discourse.RoomTimelineInput{RoomID: roomID, UnreadOnly: true, Limit: 50})
				lat = append(lat, time.Since(t0))
				if err != nil || len(res.Items) != 50 {
					b.Fatalf("timeline: %v", err)
				}
			}
			b.ReportMetric(lat.pct(0.5), "p50-ms")
			b.ReportMetric(lat.pct(0.99), "p99-ms")
		})
		b.Run(fmt.Sprintf("inbox_next/rooms=%d", rooms), func(b *testing.B) {
			var lat latencies
			for b.Loop() {
				t0 := time.Now()
				res, err := c.InboxNext(ctx, "s0", connector.InboxNextInput{})
				lat = append(lat, time.Since(t0))
				if err != nil || len(res.Items) != inboxPage {
					b.Fatalf("inbox: %v", err)
				}
			}
			b.ReportMetric(lat.pct(0.5), "p50-ms")
			b.ReportMetric(lat.pct(0.99), "p99-ms")
		})
	}
	// make bench derives the 1,000-rooms/1-room p50 ratios from the
	// sub-benchmarks' p50-ms figures (test/benchreport).
}
