package opview

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The live stream. One Server-Sent Events stream per open page drives its
// updates: an event "change" whose data lists the topics that changed
// ({"topics": ["rooms", "inbox"]}), upon which the page's script fetches
// its main content again (server-rendered, escaped, like the page), and an
// event "ping" every Options.Ping, so the page can say "disconnected"
// plainly when nothing arrives. Event ids are "<epoch>-<n>": epoch names
// this process's feed and n counts the changes it saw. A stream resumed
// with Last-Event-ID (the browser sends it when it reconnects) gets one
// change of every topic at once if anything changed since that id (or the
// id is another process's), and nothing otherwise.
//
// Changes are found by one watcher for all streams, while any is open: it
// reads Source.Version when this process changes local state
// (Source.Changed) and every Options.Poll (other processes: a stdio mcp of
// the same identity, a call), at most every minGap.

const minGap = 100 * time.Millisecond

// feed watches the source for its subscribers.
type feed struct {
	src  Source
	poll time.Duration
	log  *slog.Logger

	mu     sync.Mutex
	epoch  string
	seq    uint64
	last   map[string]string
	subs   map[*subscriber]struct{}
	cancel context.CancelFunc
	done   chan struct{}
}

// subscriber is one open stream: the topics changed since it last wrote,
// and a wake-up.
type subscriber struct {
	mu      sync.Mutex
	pending map[string]bool
	id      string
	wake    chan struct{}
}

func newFeed(src Source, poll time.Duration, log *slog.Logger) *feed {
	return &feed{src: src, poll: poll, log: log, epoch: strconv.FormatInt(time.Now().UnixNano(), 36),
		subs: map[*subscriber]struct{}{}}
}

func (f *feed) idLocked() string { return f.epoch + "-" + strconv.FormatUint(f.seq, 10) }

// subscribe adds a subscriber and returns it with the current event id;
// the watcher runs while there is one. Changes made while nobody watched
// are counted at once, so a resumed stream's id is compared with an
// up-to-date one.
func (f *feed) subscribe(ctx context.Context) (*subscriber, string) {
	s := &subscriber{pending: map[string]bool{}, wake: make(chan struct{}, 1)}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cancel == nil {
		f.checkLocked(ctx)
		wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		f.cancel, f.done = cancel, make(chan struct{})
		go f.watch(wctx, f.done)
	}
	f.subs[s] = struct{}{}
	return s, f.idLocked()
}

// unsubscribe removes a subscriber, stopping the watcher after the last.
func (f *feed) unsubscribe(s *subscriber) {
	f.mu.Lock()
	delete(f.subs, s)
	var cancel context.CancelFunc
	var done chan struct{}
	if len(f.subs) == 0 && f.cancel != nil {
		cancel, done = f.cancel, f.done
		f.cancel, f.done = nil, nil
	}
	f.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// watch checks for changes until ctx ends.
func (f *feed) watch(ctx context.Context, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(f.poll)
	defer t.Stop()
	for {
		changed := f.src.Changed()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-changed:
		}
		f.mu.Lock()
		f.checkLocked(ctx)
		f.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-time.After(minGap):
		}
	}
}

// checkLocked reads the version and tells the subscribers which topics
// changed.
func (f *feed) checkLocked(ctx context.Context) {
	v, err := f.src.Version(ctx)
	if err != nil {
		if ctx.Err() == nil {
			f.log.Debug("operator view: reading the state version", "err", err)
		}
		return
	}
	var changed []string
	for _, t := range Topics() {
		if f.last != nil && v[t] != f.last[t] {
			changed = append(changed, t)
		}
	}
	if f.last == nil {
		f.last = v
		return
	}
	f.last = v
	if len(changed) == 0 {
		return
	}
	f.seq++
	id := f.idLocked()
	for s := range f.subs {
		s.note(id, changed)
	}
}

// note records changed topics for the subscriber and wakes it.
func (s *subscriber) note(id string, topics []string) {
	s.mu.Lock()
	for _, t := range topics {
		s.pending[t] = true
	}
	s.id = id
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// take returns and clears the pending topics.
func (s *subscriber) take() (string, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	topics := slices.Sorted(maps.Keys(s.pending))
	clear(s.pending)
	return s.id, topics
}

// events serves the stream.
func (h *Handler) events(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	ctx := r.Context()
	s, cur := h.feed.subscribe(ctx)
	defer h.feed.unsubscribe(s)
	w.WriteHeader(http.StatusOK)
	var b strings.Builder
	b.WriteString("retry: 2000\n\n")
	if last := r.Header.Get("Last-Event-ID"); last != "" && last != cur {
		writeEvent(&b, cur, "change", map[string]any{"topics": Topics(), "resumed": true})
	} else {
		writeEvent(&b, cur, "hello", map[string]any{"ping_ms": h.o.Ping.Milliseconds()})
	}
	if !h.send(rc, w, b.String()) {
		return
	}
	ping := time.NewTicker(h.o.Ping)
	defer ping.Stop()
	for {
		b.Reset()
		select {
		case <-ctx.Done():
			return
		case <-ping.C:
			writeEvent(&b, "", "ping", map[string]any{"at": h.o.Now().UnixMilli()})
		case <-s.wake:
			id, topics := s.take()
			if len(topics) == 0 {
				continue
			}
			writeEvent(&b, id, "change", map[string]any{"topics": topics})
		}
		if !h.send(rc, w, b.String()) {
			return
		}
	}
}

// send writes and flushes one chunk of the stream within a deadline.
func (h *Handler) send(rc *http.ResponseController, w http.ResponseWriter, chunk string) bool {
	_ = rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := fmt.Fprint(w, chunk); err != nil {
		return false
	}
	return rc.Flush() == nil
}

// writeEvent frames one event: its id (when not empty), its name and its
// JSON data on one line.
func writeEvent(b *strings.Builder, id, name string, data any) {
	if id != "" {
		b.WriteString("id: " + id + "\n")
	}
	b.WriteString("event: " + name + "\n")
	j, _ := json.Marshal(data)
	b.WriteString("data: " + string(j) + "\n\n")
}
