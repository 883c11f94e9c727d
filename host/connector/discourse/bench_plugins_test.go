package discourse_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"apconnect/host/config"
	"apconnect/host/connector"
	"apconnect/host/connector/discourse"
	"apconnect/host/hub/hubtest"
	"apconnect/host/plugin"
	"apconnect/host/plugin/plugintest"
	"apconnect/host/pluginhost"
	"apconnect/host/proto/adp"
)

// firstPartyPlugins are the five first-party plugins' module directories.
var firstPartyPlugins = []string{"reactions", "deliberation", "curation", "moderation", "realtime"}

// fillMixedRoom creates a public room importing the five registered packs
// and posts n-1 more records to it: half ordinary messages and reactions,
// half the records the first-party watchers look at — open polls,
// questions for the target's perspective, claims handed to the target and
// session offers to it — so that each of them also makes an inbox item.
// It returns the room ID and the number of those watched records.
func fillMixedRoom(b *testing.B, h *hubtest.Hub, a *hubtest.Agent, target string, n int) (string, int64) {
	b.Helper()
	now := time.Now()
	var types []any
	for _, p := range firstPartyPlugins {
		types = append(types, map[string]any{"use": "adp:" + p + "/1.0"})
	}
	r := h.Post("/v1/rooms", a.ADPEvent(b, now, adp.TypeRoomCreate, "", nil, map[string]any{
		"host": h.Origin(), "topic": "bench", "visibility": "public", "types": types,
		"start_time": now.UnixMilli() - 1000, "end_time": now.Add(24 * time.Hour).UnixMilli(),
	}))
	if r.Status != http.StatusCreated {
		b.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var created struct {
		ID   string `json:"id"`
		Hash string `json:"hash"`
	}
	if err := json.Unmarshal(r.Body, &created); err != nil {
		b.Fatal(err)
	}
	head := adp.Link{Seq: 1, Hash: created.Hash}
	lastID := created.Hash
	closes := now.Add(24 * time.Hour).UnixMilli()
	var watched int64
	for i := 2; i <= n; i++ {
		if i%8 < 4 {
			watched++
		}
		id := strconv.Itoa(i)
		var typ string
		var payload map[string]any
		switch i % 8 {
		case 0:
			typ, payload = "poll.create", map[string]any{"poll_id": "p" + id, "question": "Option " + id + "?", "closes_at": closes,
				"options": []any{map[string]any{"id": "yes", "label": "Yes"}, map[string]any{"id": "no", "label": "No"}}}
		case 1:
			typ, payload = "question.create", map[string]any{"question": "What about " + id + "?", "target_perspectives": []any{target}}
		case 2:
			typ, payload = "claim.update", map[string]any{"claim_id": "c" + id, "owner": a.ID, "state": "handoff", "handoff_to": target}
		case 3:
			typ, payload = "session.offer", map[string]any{"session_id": "s" + id, "session_type": "webrtc", "media": []any{"audio"}, "to": []any{target},
				"description": map[string]any{"type": "offer", "sdp": "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\na=candidate:1 1 udp 1 127.0.0.1 9 typ host\r\n"}}
		case 4:
			typ, payload = "reaction.create", map[string]any{"event_id": lastID, "reaction": "agree"}
		default:
			typ, payload = adp.TypeMessageCreate, map[string]any{"content_type": "text/plain",
				"content": fmt.Sprintf("message %d of the plugin sync benchmark, a line of ordinary length.", i)}
		}
		r := h.Post("/v1/rooms/"+created.ID, a.ADPEvent(b, time.Now(), typ, created.ID, &head, payload))
		if r.Status != http.StatusOK && r.Status != http.StatusCreated {
			b.Fatalf("post %d (%s): %d %s", i, typ, r.Status, r.Body)
		}
		var rec struct {
			Seq      int64  `json:"seq"`
			Hash     string `json:"hash"`
			Envelope struct {
				Hash string `json:"hash"`
			} `json:"envelope"`
		}
		if err := json.Unmarshal(r.Body, &rec); err != nil {
			b.Fatal(err)
		}
		lastID = rec.Envelope.Hash
		if typ != "reaction.create" && typ != "session.offer" { // signals do not move the head
			head = adp.Link{Seq: rec.Seq, Hash: rec.Hash}
		}
	}
	return created.ID, watched
}

// BenchmarkCatchUpSyncPlugins measures a catch-up sync of the same mixed
// 5,000-record room without plugins and with the five first-party plugins
// enabled (loaded from a config by host/pluginhost, as apconnect mcp does),
// alternately in the same run: every page goes through the three watchers
// (deliberation, moderation, realtime), and half the records become
// inbox items. Metrics: records/s of each and plugins/plain-ratio (target
// ≥ 0.5).
func BenchmarkCatchUpSyncPlugins(b *testing.B) {
	const records = 5000
	h := benchHub(b)
	creator := hubtest.NewAgent(0x41)
	const seed = 0x42
	target := hubtest.NewAgent(seed).ID
	roomID, watched := fillMixedRoom(b, h, creator, target, records)
	var plugins []config.Plugin
	for _, name := range firstPartyPlugins {
		wasm := plugintest.Build(b, "../../../plugins/"+name)
		ins, err := plugintest.Runtime(b).Inspect(ctx, wasm, plugin.Limits{LoadTimeout: time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		plugins = append(plugins, config.Plugin{Name: name, Path: wasm, SHA256: ins.Digest, Grants: ins.Grants.Strings(),
			Limits: config.DefaultPluginLimits(), Enabled: true})
	}
	var plain, withPlugins time.Duration
	var items int64
	n := 0
	sync := func(usePlugins bool) time.Duration {
		var set *pluginhost.Set
		a := newAgent(b, h, seed, "", func(o *connector.Options) {
			if usePlugins {
				o.Config.Plugins = plugins
				set = pluginhost.Load(ctx, o.Config, pluginhost.Options{Cache: plugintest.CompilationCache()})
				o.Plugins, o.PluginFailures = set.Registry, set.Failures()
			}
		})
		if set != nil && len(set.Failures()) > 0 {
			b.Fatalf("plugins refused: %+v", set.Failures())
		}
		start := time.Now()
		res, err := a.RoomOpen(ctx, "bench", discourse.RoomOpenInput{Host: h.Origin(), RoomID: roomID})
		d := time.Since(start)
		if err != nil || res.Sync.SyncedSeq != records {
			b.Fatalf("sync: %v %+v", err, res)
		}
		if usePlugins {
			for _, hl := range set.Health(0) {
				if hl.Failures > 0 {
					b.Fatalf("plugin %s failed: %s", hl.Name, hl.LastError)
				}
			}
			row, err := a.Store.Read().RoomAt(ctx, h.Origin(), roomID)
			if err != nil {
				b.Fatal(err)
			}
			items = row.PendingInbox
		}
		a.Close()
		_ = set.Close(ctx)
		return d
	}
	for b.Loop() {
		n++
		if n%2 == 1 {
			plain += sync(false)
			withPlugins += sync(true)
		} else {
			withPlugins += sync(true)
			plain += sync(false)
		}
	}
	if items != watched {
		b.Fatalf("the plugins made %d inbox items of %d watched records", items, watched)
	}
	rp := float64(records*n) / plain.Seconds()
	rw := float64(records*n) / withPlugins.Seconds()
	b.ReportMetric(rp, "plain-records/s")
	b.ReportMetric(rw, "plugins-records/s")
	b.ReportMetric(rw/rp, "plugins/plain-ratio")
}
