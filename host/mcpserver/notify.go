package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Resource subscriptions.
//
// The go-sdk keeps the table of which session subscribed to which URI and
// sends notifications/resources/updated to the sessions subscribed to
// exactly the URI it is given (over subscriptions/listen for 2026-07-28
// sessions). What it cannot know is when our data changed. The watcher
// keeps a fingerprint (SHA-256 of the resource's JSON content) of every
// subscribed URI and recomputes them at once after every tool call of any
// session and otherwise every ChangePoll, which also catches what the
// engine's background sync applied (live records, statuses, inbox items),
// deferrals and claims that expired, and changes another process made to the
// same state. A URI whose content changed gets one notification.
//
// Most resources take well under a millisecond to build; a room's
// timeline, members, types and state take more. For those the watcher first
// compares a cheap key — the room's row: positions, head, read cursor,
// counters, failure mark — and rebuilds the content only when the key moved
// or fullEvery has passed (content that changes with time alone, such as a
// room's status at its end_time, is caught that way).
//
// The watcher runs only while there is a subscription: it stops when the
// last subscribed session unsubscribes or goes away.

// fullEvery is how often a room resource is rebuilt even when its room row
// did not change.
const fullEvery = 5 * time.Second

type watcher struct {
	s    *server
	kick chan struct{}

	mu      sync.Mutex
	subs    map[string]*subscription
	running bool
}

type subscription struct {
	sessions map[*mcp.ServerSession]bool
	fp       [32]byte
	// cheap and built are the room key and build time of the last full
	// fingerprint of a room resource.
	cheap string
	built time.Time
}

// probe is one subscribed URI to check.
type probe struct {
	uri   string
	cheap string
	built time.Time
}

func newWatcher(s *server) *watcher {
	return &watcher{s: s, kick: make(chan struct{}, 1), subs: map[string]*subscription{}}
}

// poke asks for a check now.
func (w *watcher) poke() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// subscribe is the SDK's SubscribeHandler: only our resource URIs can be
// subscribed to (a room that is not known yet included: its resources start
// to exist when it is opened).
func (w *watcher) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	if _, _, ok := parseURI(uri); !ok {
		return mcp.ResourceNotFoundError(uri)
	}
	cheap := w.cheapKey(ctx, uri)
	fp := w.fingerprint(ctx, uri)
	w.mu.Lock()
	defer w.mu.Unlock()
	sub, ok := w.subs[uri]
	if !ok {
		sub = &subscription{sessions: map[*mcp.ServerSession]bool{}, fp: fp, cheap: cheap, built: time.Now()}
		w.subs[uri] = sub
	}
	sub.sessions[req.Session] = true
	if !w.running {
		w.running = true
		go w.loop()
	}
	return nil
}

// unsubscribe is the SDK's UnsubscribeHandler.
func (w *watcher) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if sub, ok := w.subs[req.Params.URI]; ok {
		delete(sub.sessions, req.Session)
		if len(sub.sessions) == 0 {
			delete(w.subs, req.Params.URI)
		}
	}
	return nil
}

// fingerprint hashes a resource's current content; a resource that cannot
// be read hashes its error code, so its appearance is a change too.
func (w *watcher) fingerprint(ctx context.Context, uri string) (fp [32]byte) {
	defer func() {
		if r := recover(); r != nil {
			w.s.log.Error("panic while checking a resource for changes", "uri", uri, "panic", fmt.Sprint(r))
			fp = sha256.Sum256([]byte("panic"))
		}
	}()
	var data []byte
	var err error
	if kind, roomID, _ := parseURI(uri); kind == resArchive {
		// The summary changes whenever the archive is kept again; the
		// records are not read for a fingerprint.
		var v any
		if v, err = w.s.archiveResource(uri, roomID, false); err == nil {
			data, err = json.Marshal(v)
		}
	} else {
		data, err = w.s.resourceJSON(ctx, uri)
	}
	if err != nil {
		var je *jsonrpc.Error
		if errors.As(err, &je) {
			return sha256.Sum256([]byte("error:" + je.Message))
		}
		return sha256.Sum256([]byte("error"))
	}
	return sha256.Sum256(data)
}

// loop checks the subscribed URIs until there are none.
func (w *watcher) loop() {
	ctx := context.Background()
	t := time.NewTicker(w.s.opts.ChangePoll)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-w.kick:
		}
		probes := w.live()
		if probes == nil {
			return
		}
		type built struct {
			fp    [32]byte
			cheap string
			at    time.Time
		}
		fps := make(map[string]built, len(probes))
		for _, p := range probes {
			cheap := w.cheapKey(ctx, p.uri)
			if cheap != "" && cheap == p.cheap && time.Since(p.built) < fullEvery {
				continue // the room did not move: its resource is the same
			}
			fps[p.uri] = built{fp: w.fingerprint(ctx, p.uri), cheap: cheap, at: time.Now()}
		}
		var changed []string
		w.mu.Lock()
		for u, b := range fps {
			sub, ok := w.subs[u]
			if !ok {
				continue
			}
			sub.cheap, sub.built = b.cheap, b.at
			if sub.fp != b.fp {
				sub.fp = b.fp
				changed = append(changed, u)
			}
		}
		w.mu.Unlock()
		for _, u := range changed {
			if err := w.s.srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: u}); err != nil {
				w.s.log.Debug("resource updated notification", "uri", u, "err", err)
			}
		}
	}
}

// live drops the subscriptions of sessions that are gone and returns the
// subscribed URIs; nil (and the loop marked stopped) when none is left.
func (w *watcher) live() []probe {
	sessions := map[*mcp.ServerSession]bool{}
	for ss := range w.s.srv.Sessions() {
		sessions[ss] = true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	uris := make([]probe, 0, len(w.subs))
	for u, sub := range w.subs {
		for ss := range sub.sessions {
			if !sessions[ss] {
				delete(sub.sessions, ss)
			}
		}
		if len(sub.sessions) == 0 {
			delete(w.subs, u)
			continue
		}
		uris = append(uris, probe{uri: u, cheap: sub.cheap, built: sub.built})
	}
	if len(uris) == 0 {
		w.running = false
		return nil
	}
	return uris
}

// cheapKey is the room row behind a room resource whose content only
// changes with it ("" for other resources: they are always rebuilt).
func (w *watcher) cheapKey(ctx context.Context, uri string) string {
	kind, roomID, ok := parseURI(uri)
	if !ok {
		return ""
	}
	switch kind {
	case resRoom, resMembers, resTimeline, resTypes:
	default:
		return ""
	}
	return w.s.conn.Discourse().RoomFingerprint(ctx, roomID)
}
