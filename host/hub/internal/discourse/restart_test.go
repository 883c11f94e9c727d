package discourse_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	"apconnect/host/identity"
	"apconnect/host/proto/adp"
)

// freePort returns a loopback port that is free now, so a restarted hub can
// keep its origin (rooms name their host in room.create).
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// post sends an envelope without hubtest's transport-error reporting: during
// a restart a write may fail in flight (status 0).
func post(h *hubtest.Hub, path string, body []byte) (int, []byte) {
	req, _ := http.NewRequest(http.MethodPost, h.URL(path), bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := h.Client.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// TestRestartMidActivity: writers keep writing to two rooms while the hub
// restarts. Afterwards every acknowledged write is there, every envelope
// whose outcome was lost resolves by exact resubmission, join requests and
// the durable nonce comparisons survive, and each room's state equals a
// full replay of its records.
// Serial: the hub restarts on the port freePort picked, which a parallel
// test could take while it is free.
func TestRestartMidActivity(t *testing.T) {
	port := freePort(t)
	clock := hubtest.NewClock(t0)
	h := hubtest.Start(t, hubtest.WithClock(clock), hubtest.WithDir(t.TempDir()), hubtest.WithOptions(func(o *hub.Options) {
		o.Listen = "127.0.0.1:" + strconv.Itoa(port)
		o.Limits.Discourse.Rules.MessageRate = -1
		o.Limits.Discourse.SnapshotEvery = 5 // snapshots and replayed tails both get exercised
	}))
	f := &fx{t: t, h: h, clock: clock, creators: map[string]*hubtest.Agent{}}
	as := agents(160, 6)
	creator, applicant := as[0], as[5]
	writers := as[1:5]
	createEnv := creator.ADPEvent(t, clock.Now(), adp.TypeRoomCreate, "", nil, f.roomPayload(obj{"visibility": "restricted"}))
	r := h.Post("/v1/rooms", createEnv)
	wantStatus(t, r, http.StatusCreated)
	createResp := r.Body
	var created struct{ ID string }
	r.Decode(t, &created)
	rooms := []string{created.ID, f.create(creator, nil)}
	f.creators[rooms[0]] = creator
	invites := obj{}
	for _, w := range writers {
		invites[w.ID] = "speaker"
	}
	f.must(creator, rooms[0], adp.TypeRoomUpdate, obj{"policy": obj{"invites": invites}})
	for _, w := range writers {
		for _, id := range rooms {
			f.join(w, id, adp.RoleSpeaker)
		}
	}
	req := f.submitRequest(applicant, rooms[0], adp.RoleObserver)

	var hubPtr atomic.Pointer[hubtest.Hub]
	hubPtr.Store(h)
	type outcome struct {
		env    []byte
		status int
		body   []byte
	}
	var mu sync.Mutex
	var outcomes []outcome
	var stop atomic.Bool
	var wg sync.WaitGroup
	for i, w := range writers {
		wg.Add(1)
		go func(w *hubtest.Agent, roomID string) {
			defer wg.Done()
			var head adp.Link
			for n := 0; !stop.Load() && n < 400; n++ {
				cur := hubPtr.Load()
				if head.Seq == 0 {
					// Learn the head from the room resource.
					st, b := func() (int, []byte) {
						resp, err := cur.Client.Get(cur.URL("/v1/rooms/" + roomID))
						if err != nil {
							return 0, nil
						}
						defer resp.Body.Close()
						b, _ := io.ReadAll(resp.Body)
						return resp.StatusCode, b
					}()
					var res struct{ Head adp.Link }
					if st != http.StatusOK || json.Unmarshal(b, &res) != nil || res.Head.Seq == 0 {
						time.Sleep(5 * time.Millisecond)
						continue
					}
					head = res.Head
				}
				env := w.ADPEvent(t, clock.Now(), adp.TypeMessageCreate, roomID, &head, obj{"content_type": "text/plain", "content": "x"})
				st, body := post(cur, "/v1/rooms/"+roomID, env)
				mu.Lock()
				outcomes = append(outcomes, outcome{env, st, body})
				mu.Unlock()
				var next struct {
					Seq   int64  `json:"seq"`
					Hash  string `json:"hash"`
					Error struct {
						Data struct {
							Seq  int64  `json:"current_seq"`
							Hash string `json:"current_hash"`
						} `json:"data"`
					} `json:"error"`
				}
				json.Unmarshal(body, &next)
				switch st {
				case http.StatusOK:
					// A message does not move the head, but any accepted
					// record at or after it is a valid base (0.12.6).
					head = adp.Link{Seq: next.Seq, Hash: next.Hash}
				case http.StatusConflict:
					head = adp.Link{Seq: next.Error.Data.Seq, Hash: next.Error.Data.Hash}
				default:
					head = adp.Link{}
					time.Sleep(2 * time.Millisecond)
				}
			}
		}(w, rooms[i%2])
	}
	// Let the writers get going, restart under them, let them go on.
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(outcomes) > 60 })
	h2 := h.Restart()
	hubPtr.Store(h2)
	f.h = h2
	waitFor(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, o := range outcomes[60:] {
			if o.status == http.StatusOK {
				n++
			}
		}
		return n > 20
	})
	stop.Store(true)
	wg.Wait()

	// Every acknowledged write is there; every lost outcome resolves.
	stored := map[string]*adp.Record{}
	for _, id := range rooms {
		recs := f.records(id, creator)
		if _, err := adp.VerifyChain(id, adp.Link{}, recs); err != nil {
			t.Fatalf("room %s chain: %v", id, err)
		}
		for _, rec := range recs {
			stored[rec.EnvelopeHash()] = rec
		}
		// Snapshot + tail equals a full replay of the records.
		rep := adp.Replay(&adp.Rules{Limits: adp.DefaultLimits(), HostOrigin: h2.Origin()}, recs)
		if !rep.OK() {
			t.Fatalf("replay: %+v", rep.Problems)
		}
		served := decodeJSON(t, h2.Get(t, "/v1/rooms/"+id, creator).Body)
		if !jsonEq(t, rep.Room.Resource(clock.Now().UnixMilli(), h2.Origin()+"/v1/rooms/"+id), served) {
			t.Fatalf("room %s: the served state differs from a replay of its records", id)
		}
	}
	lost, acked := 0, 0
	for _, o := range outcomes {
		env, err := identity.ParseEnvelope(o.env)
		if err != nil {
			t.Fatal(err)
		}
		switch o.status {
		case http.StatusOK:
			acked++
			rec, ok := stored[env.Hash]
			if !ok {
				t.Fatalf("acknowledged write %s is missing after the restart", env.Hash)
			}
			if !jsonEq(t, json.RawMessage(o.body), rec) {
				t.Fatalf("record of %s changed", env.Hash)
			}
		case 0, http.StatusInternalServerError, http.StatusServiceUnavailable:
			lost++
			st, body := post(h2, "/v1/rooms/"+adp.RoomOf(&env.Event), o.env)
			_, was := stored[env.Hash]
			if was && st != http.StatusOK {
				t.Fatalf("resubmitting an accepted envelope: %d %s", st, body)
			}
			if !was && st == http.StatusOK {
				t.Fatalf("an envelope the hub had not accepted was accepted on resubmission")
			}
		case http.StatusConflict:
			if _, was := stored[env.Hash]; was {
				t.Fatalf("a rejected write is in the chain")
			}
		default:
			t.Fatalf("unexpected write outcome %d %s", o.status, o.body)
		}
	}
	t.Logf("%d writes acknowledged, %d lost in flight, %d records", acked, lost, len(stored))

	// room.create resubmission returns the original response.
	r = h2.Post("/v1/rooms", createEnv)
	wantStatus(t, r, http.StatusCreated)
	if string(r.Body) != string(createResp) {
		t.Fatalf("room.create resubmission after restart: %s, want %s", r.Body, createResp)
	}
	// The join request survived.
	var j joinRequestResource
	h2.Get(t, "/v1/rooms/"+rooms[0]+"/join-requests/"+req.ID, applicant).Decode(t, &j)
	if j.Status != "pending" || j.ID != req.ID {
		t.Fatalf("join request after restart: %+v", j)
	}
	// Nonce comparisons survived: an old nonce is refused.
	w := writers[0]
	stale := w.SignJSON(t, identity.Event{Protocol: adp.Protocol, Type: adp.TypeMessageCreate,
		CreatedAt: clock.Now().UnixMilli(), Nonce: clock.Now().UnixMilli(),
		Payload: hubtest.JSONValue(t, obj{"content_type": "text/plain", "content": "replayed nonce"}), Fields: adp.Fields{RoomID: rooms[0], Base: &adp.Link{Seq: int64(1), Hash: f.records(rooms[0], creator)[0].Hash}}.Map()})
	wantError(t, h2.Post("/v1/rooms/"+rooms[0], stale), http.StatusConflict, identity.CodeNonceNotGreater)
}

// waitFor polls cond for up to 20 seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
