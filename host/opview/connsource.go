package opview

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"strings"

	"apconnect/host/connector"
	"apconnect/host/connector/discourse"
	"apconnect/host/inbox"
	"apconnect/host/proto/adp"
	"apconnect/host/room"
	"apconnect/host/store"
	"apconnect/host/text"
)

// connSource is the Source of a running connector. It holds what it reads
// and nothing else: the store's read-only pool (a query_only SQLite
// connection pool; store.Q has no write method), the configuration's
// static facts as data, and method values of the local views it needs —
// never the connector, the engine or the signer.
type connSource struct {
	q       store.Q
	static  staticInfo
	now     func() int64
	plugins func() []discourse.PluginHealth
	streams func() []discourse.StreamState
	changed func() <-chan struct{}
	self    string
	mail    mailViews
}

// staticInfo is what the configuration says, read once.
type staticInfo struct {
	identity, agentID, home, database string
	origins                           []Origin // URL, Label, Kind and Grants only
}

// FromConnector returns the Source of a connector. self is the heartbeat id
// of the process serving the view (connector.Heartbeat.ID), "" when none.
func FromConnector(c *connector.Connector, self string) Source {
	e := c.Engine()
	st := staticInfo{identity: e.Ident.Name, agentID: c.AgentID(), home: e.Config.Home(), database: c.Store().Path()}
	hosts := map[string]bool{}
	for _, o := range e.HostOrigins() {
		hosts[o] = true
	}
	for _, o := range e.Config.Origins(e.Ident) {
		og := Origin{URL: o.URL, Kind: "profile service", Grants: e.Grants(o.URL).Names()}
		if o.Host != nil {
			og.Label = o.Host.Label
		}
		if hosts[o.URL] {
			og.Kind = "host"
		}
		st.origins = append(st.origins, og)
	}
	d, m := c.Discourse(), c.Mail()
	return &connSource{q: c.Store().Read(), static: st, now: e.NowMS, plugins: d.PluginHealth, streams: d.StreamStates,
		changed: e.Changed, self: self, mail: mailViews{readable: m.Readable, mailboxes: m.MailboxViews, letters: m.LetterMetas}}
}

func (s *connSource) Changed() <-chan struct{} { return s.changed() }

// Version digests the stored state and this process's live streams and
// plugin health.
func (s *connSource) Version(ctx context.Context) (map[string]string, error) {
	f, err := s.q.ViewFingerprint(ctx)
	if err != nil {
		return nil, err
	}
	streams, _ := json.Marshal(s.streams())
	var plugins strings.Builder
	for _, p := range s.plugins() {
		fmt.Fprintf(&plugins, "%s|%s|%d|%d|%d;", p.Name, p.State, p.Calls, p.Failures, p.LastErrorAt)
	}
	sum := func(parts ...string) string {
		h := fnv.New64a()
		for _, p := range parts {
			h.Write([]byte(p))
			h.Write([]byte{0})
		}
		return fmt.Sprintf("%016x", h.Sum64())
	}
	return map[string]string{
		TopicStatus:     sum(f.Processes, string(streams), plugins.String(), f.Rooms, f.Inbox, f.Outbox, f.Drafts),
		TopicRooms:      sum(f.Rooms, f.Inbox, string(streams)),
		TopicInbox:      sum(f.Inbox, f.Rooms),
		TopicOutbox:     sum(f.Outbox, f.Drafts, f.Rooms),
		TopicWake:       sum(f.Wake, f.Rooms),
		TopicMail:       sum(f.Mail),
		TopicKnowledge:  sum(f.Knowledge),
		TopicDelegation: sum(f.Delegation),
	}, nil
}

// Status reads the status page.
func (s *connSource) Status(ctx context.Context) (*Status, error) {
	now := s.now()
	st := &Status{Identity: s.static.identity, AgentID: s.static.agentID, Home: s.static.home, Database: s.static.database, Now: now}
	rooms, err := s.Rooms(ctx)
	if err != nil {
		return nil, err
	}
	streams := s.streams()
	for _, o := range s.static.origins {
		o.Grants = slices.Clone(o.Grants)
		if hi, err := s.q.Host(ctx, o.URL); err == nil {
			o.DiscoveryAt = hi.CheckedAt
		}
		byState := map[string]int{}
		var errAt int64
		for _, ss := range streams {
			if ss.Host == o.URL {
				byState[ss.State]++
				if ss.Error != "" && ss.Since >= errAt {
					o.StreamError, errAt = ss.Error, ss.Since
				}
			}
		}
		for _, k := range []string{discourse.StreamLive, discourse.StreamConnecting, discourse.StreamRetrying, discourse.StreamWaiting, discourse.StreamPolled} {
			if byState[k] > 0 {
				o.Streams = append(o.Streams, Count{Label: k, N: byState[k]})
			}
		}
		for _, r := range rooms {
			if r.Host != o.URL {
				continue
			}
			o.Rooms++
			o.Lag += r.Lag
			o.LastEventAt = max(o.LastEventAt, r.LastEventAt)
			if r.Verification == VerificationFailed {
				o.FailedRooms++
			}
		}
		st.Origins = append(st.Origins, o)
	}
	for _, r := range rooms {
		st.Counts.Rooms++
		if r.Verification == VerificationFailed {
			st.Counts.FailedRooms++
		}
	}
	for _, p := range s.plugins() {
		st.Plugins = append(st.Plugins, Plugin{Name: p.Name, Version: p.Version, State: p.State, Grants: p.Grants, Tools: p.Tools,
			Validates: p.Validates, Watches: p.Watches, Calls: p.Calls, Failures: p.Failures, LastError: p.LastError,
			LastErrorCode: p.LastErrorCode, LastErrorAt: p.LastErrorAt})
	}
	if st.Processes, err = s.processes(ctx, now); err != nil {
		return nil, err
	}
	return st, s.counts(ctx, &st.Counts)
}

// counts fills the inbox, draft and outbox totals.
func (s *connSource) counts(ctx context.Context, c *Counts) error {
	ic, err := s.q.InboxCounts(ctx)
	if err != nil {
		return err
	}
	c.Pending, c.Claimed, c.Deferred = ic[store.InboxPending], ic[store.InboxClaimed], ic[store.InboxDeferred]
	if c.Drafts, err = s.q.DraftCount(ctx); err != nil {
		return err
	}
	oc, err := s.q.OutboxCounts(ctx)
	if err != nil {
		return err
	}
	c.OutboxPending, c.OutboxFailed = oc[store.OutboxPending], oc[store.OutboxFailed]
	pending, err := s.q.RecentOutbox(ctx, store.OutboxPending, 200)
	if err != nil {
		return err
	}
	for _, e := range pending {
		if heldForGrant(e) {
			c.OutboxHeld++
		}
	}
	return nil
}

// Cleanly stopped processes are listed for an hour, the newest
// stoppedListed of them.
const (
	stoppedShown  = 60 * 60 * 1000
	stoppedListed = 10
)

// processes reads the heartbeats: online, stale (missed three beats) or
// stopped.
func (s *connSource) processes(ctx context.Context, now int64) ([]Process, error) {
	hbs, err := s.q.Heartbeats(ctx, stoppedListed)
	if err != nil {
		return nil, err
	}
	var out []Process
	for _, h := range hbs {
		if h.StoppedAt != 0 && now-h.StoppedAt > stoppedShown {
			continue
		}
		p := Process{PID: h.PID, Hostname: h.Hostname, Command: h.Command, Transport: h.Transport, Addr: h.Addr,
			StartedAt: h.StartedAt, BeatAt: h.BeatAt, StoppedAt: h.StoppedAt, LastCall: h.LastCall, LastCallAt: h.LastCallAt,
			Calls: h.Calls, State: ProcessOnline, Self: h.ID == s.self}
		if h.ClientName != "" {
			p.Client = strings.TrimSpace(h.ClientName + " " + h.ClientVersion)
		}
		switch {
		case h.StoppedAt != 0:
			p.State = ProcessStopped
		case h.Stale(now):
			p.State = ProcessStale
		}
		var streams []discourse.StreamState
		if len(h.Streams) > 0 && json.Unmarshal(h.Streams, &streams) == nil {
			for _, ss := range streams {
				p.Streams = append(p.Streams, Stream{Host: ss.Host, RoomID: ss.RoomID, State: ss.State, Since: ss.Since, Error: ss.Error})
			}
		}
		out = append(out, p)
	}
	// Online first, then stale, then stopped; newest first within each.
	rank := map[string]int{ProcessOnline: 0, ProcessStale: 1, ProcessStopped: 2}
	sort.SliceStable(out, func(i, j int) bool { return rank[out[i].State] < rank[out[j].State] })
	return out, nil
}

// Rooms reads every room known locally (at most 1000).
func (s *connSource) Rooms(ctx context.Context) ([]Room, error) {
	now := s.now()
	rows, err := s.q.ListRooms(ctx, store.RoomFilter{Membership: "all", Now: now, Limit: 1000})
	if err != nil {
		return nil, err
	}
	live := map[string]string{}
	for _, ss := range s.streams() {
		live[ss.Host+" "+ss.RoomID] = ss.State
	}
	out := make([]Room, 0, len(rows))
	for _, row := range rows {
		r, err := s.room(ctx, row, now)
		if err != nil {
			return nil, err
		}
		r.Stream = live[row.Host+" "+row.RoomID]
		out = append(out, *r)
	}
	return out, nil
}

// room builds the list view of one stored room.
func (s *connSource) room(ctx context.Context, row *store.Room, now int64) (*Room, error) {
	r := &Room{Key: row.Key, Host: row.Host, RoomID: row.RoomID, Status: roomStatus(row, now), HeadSeq: row.HeadSeq,
		SyncedSeq: row.SyncedSeq, RemoteSeq: row.RemoteSeq, Lag: max(row.RemoteSeq-row.SyncedSeq, 0), ReadSeq: row.ReadSeq,
		Pending: row.PendingInbox, Subscribed: row.Subscribed, SelfRole: row.SelfRole, SelfState: row.SelfState,
		Verification: VerificationPending}
	for _, o := range s.static.origins {
		if o.URL == row.Host {
			r.HostLabel = o.Label
		}
	}
	switch {
	case row.Failure != nil:
		r.Verification = VerificationFailed
		r.Failure = &Failure{Seq: row.Failure.Seq, Code: row.Failure.Code, Message: row.Failure.Message, At: row.Failure.At}
	case row.HasSnapshot:
		r.Verification = VerificationOK
	}
	var err error
	if r.Unread, err = s.q.UnreadCount(ctx, row.Key, row.ReadSeq, s.static.agentID); err != nil {
		return nil, err
	}
	evs, err := s.q.Timeline(ctx, row.Key, store.TimelineQuery{Limit: 1, Newest: true})
	if err != nil {
		return nil, err
	}
	if len(evs) == 1 {
		var it room.TimelineItem
		if json.Unmarshal(evs[0].Item, &it) == nil {
			r.LastEventAt = it.AcceptedAt
		}
	}
	if row.HasSnapshot {
		b, err := s.q.Blobs(ctx, row.Key)
		if err != nil {
			return nil, err
		}
		var topic struct {
			Topic string `json:"topic"`
		}
		if json.Unmarshal(b.Snapshot, &topic) == nil {
			r.Topic = topic.Topic
		}
	}
	return r, nil
}

// roomStatus is the room's status at now, as rooms_list reports it.
func roomStatus(r *store.Room, now int64) string {
	switch {
	case r.Closed != "":
		return r.Closed
	case !r.HasSnapshot:
		return "unknown"
	case now >= r.EndTime:
		return "ended"
	case now >= r.StartTime:
		return "active"
	}
	return "scheduled"
}

// timelineItems is the number of newest items a room page shows.
const timelineItems = 50

// Room reads one room's page.
func (s *connSource) Room(ctx context.Context, key int64) (*RoomDetail, error) {
	now := s.now()
	row, err := s.q.Room(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	r, err := s.room(ctx, row, now)
	if err != nil {
		return nil, err
	}
	for _, ss := range s.streams() {
		if ss.Host == row.Host && ss.RoomID == row.RoomID {
			r.Stream = ss.State
		}
	}
	d := &RoomDetail{Room: *r, Now: now, Self: s.static.agentID}
	if row.HasSnapshot {
		b, err := s.q.Blobs(ctx, key)
		if err != nil {
			return nil, err
		}
		var ar adp.Room
		if err := json.Unmarshal(b.Snapshot, &ar); err != nil {
			return nil, err
		}
		for _, m := range room.Members(&ar) {
			d.Members = append(d.Members, Member{AgentID: m.AgentID, Role: m.Role, Status: m.Status, Creator: m.IsCreator,
				Self: m.AgentID == s.static.agentID})
		}
	}
	if d.Statuses, err = s.statuses(ctx, key, now); err != nil {
		return nil, err
	}
	evs, err := s.q.Timeline(ctx, key, store.TimelineQuery{Limit: timelineItems + 1, Newest: true})
	if err != nil {
		return nil, err
	}
	if len(evs) > timelineItems {
		d.Older, evs = true, evs[1:]
	}
	d.Timeline = s.items(evs)
	return d, nil
}

// statuses reads a room's unexpired cached agent statuses.
func (s *connSource) statuses(ctx context.Context, key, now int64) ([]AgentStatus, error) {
	list, err := s.q.Statuses(ctx, key, now)
	if err != nil {
		return nil, err
	}
	var out []AgentStatus
	for _, st := range list {
		var v discourse.AgentStatus
		if json.Unmarshal(st.Status, &v) == nil {
			out = append(out, AgentStatus{AgentID: v.AgentID, State: v.State, Summary: v.Summary, Activity: v.Activity,
				ExpiresAt: v.ExpiresAt, UpdatedAt: v.UpdatedAt})
		}
	}
	return out, nil
}

// items converts stored timeline items: the content (a string as it is,
// anything else as JSON) or the summary, cut to MaxItemRunes.
func (s *connSource) items(evs []store.Event) []Item {
	out := make([]Item, 0, len(evs))
	for _, e := range evs {
		var it room.TimelineItem
		if json.Unmarshal(e.Item, &it) != nil {
			continue
		}
		v := Item{Seq: it.Seq, Type: it.Type, Kind: it.Kind, Actor: it.Actor, Self: it.Actor == s.static.agentID,
			At: it.AcceptedAt, Redacted: it.Redacted, Mention: slices.Contains(it.Mentions, s.static.agentID)}
		full := it.Summary
		switch c := it.Content.(type) {
		case nil:
		case string:
			full = c
		default:
			if b, err := json.Marshal(c); err == nil {
				full = string(b)
			}
		}
		v.Text = text.Truncate(full, MaxItemRunes)
		v.Cut = v.Text != full
		out = append(out, v)
	}
	return out
}

// Inbox-page list sizes.
const (
	inboxListed = 100
	ackListed   = 20
)

// Inbox reads the inbox page.
func (s *connSource) Inbox(ctx context.Context) (*Inbox, error) {
	in := &Inbox{Now: s.now()}
	var err error
	if in.Counts, err = s.q.InboxCounts(ctx); err != nil {
		return nil, err
	}
	lists := []struct {
		dst   *[]InboxItem
		state string
		n     int
	}{
		{&in.Pending, store.InboxPending, inboxListed},
		{&in.Claimed, store.InboxClaimed, inboxListed},
		{&in.Deferred, store.InboxDeferred, inboxListed},
		{&in.Acknowledged, store.InboxHandled, ackListed},
		{&in.Acknowledged, store.InboxDismissed, ackListed},
	}
	for _, l := range lists {
		rows, err := s.q.InboxByState(ctx, l.state, l.n)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			*l.dst = append(*l.dst, inboxItem(r))
		}
	}
	sort.SliceStable(in.Acknowledged, func(i, j int) bool { return in.Acknowledged[i].CreatedAt > in.Acknowledged[j].CreatedAt })
	if len(in.Acknowledged) > ackListed {
		in.Acknowledged = in.Acknowledged[:ackListed]
	}
	return in, nil
}

// inboxItem converts a stored inbox item.
func inboxItem(r *store.InboxRow) InboxItem {
	v := InboxItem{ID: r.ID, Kind: r.Kind, State: r.State, RoomKey: r.RoomKey, Host: r.Host, RoomID: r.RoomID, Source: r.Source,
		Seq: r.Seq, CreatedAt: r.CreatedAt, Until: r.Until, Session: r.Session, Mention: r.Kind == room.KindMention}
	var it inbox.Item
	if json.Unmarshal(r.Item, &it) == nil {
		v.Priority, v.Reason, v.RequiresResponse = it.Priority, it.Reason, it.RequiresResponse
		if it.Actor != nil {
			v.Actor = *it.Actor
		}
		if sum, ok := it.Message["summary"].(string); ok {
			v.Summary = text.Truncate(sum, MaxItemRunes)
		}
	}
	return v
}

// Outbox-page list sizes.
const (
	outboxPendingListed = 100
	outboxClosedListed  = 30
	draftsListed        = 100
)

// Outbox reads the drafts and the outbox.
func (s *connSource) Outbox(ctx context.Context) (*Outbox, error) {
	out := &Outbox{Now: s.now()}
	var err error
	if out.Counts, err = s.q.OutboxCounts(ctx); err != nil {
		return nil, err
	}
	lists := []struct {
		dst   *[]OutboxEntry
		state string
		n     int
	}{
		{&out.Pending, store.OutboxPending, outboxPendingListed},
		{&out.Done, store.OutboxDone, outboxClosedListed},
		{&out.Failed, store.OutboxFailed, outboxClosedListed},
	}
	for _, l := range lists {
		es, err := s.q.RecentOutbox(ctx, l.state, l.n)
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			*l.dst = append(*l.dst, OutboxEntry{ID: e.ID, Kind: e.Kind, Service: e.Service, Ref: e.Ref, EventID: e.EventID,
				Nonce: e.Nonce, State: e.State, Attempts: e.Attempts, CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt,
				Error: text.Truncate(e.Error, MaxItemRunes), Held: heldForGrant(e)})
		}
	}
	if out.Drafts, err = s.drafts(ctx); err != nil {
		return nil, err
	}
	return out, nil
}

// heldForGrant reports whether a pending entry waits because the grant it
// needs was withdrawn.
func heldForGrant(e *store.OutboxEntry) bool {
	return e.State == store.OutboxPending && strings.Contains(e.Error, "permission_denied")
}

// drafts reads the held drafts with what their rooms did since their base.
func (s *connSource) drafts(ctx context.Context) ([]Draft, error) {
	ds, err := s.q.Drafts(ctx, 0, 0, draftsListed)
	if err != nil {
		return nil, err
	}
	var out []Draft
	for _, d := range ds {
		v := Draft{ID: d.ID, RoomKey: d.RoomKey, Host: d.Host, RoomID: d.RoomID, Kind: d.Kind, Reason: d.Reason,
			CreatedAt: d.CreatedAt, BaseSeq: d.BaseSeq, Text: draftText(d.Input)}
		if pos, err := s.q.Position(ctx, d.RoomKey); err == nil {
			v.HeadSeq = pos.HeadSeq
		}
		evs, err := s.q.Timeline(ctx, d.RoomKey, store.TimelineQuery{AfterSeq: d.BaseSeq, Limit: MaxDraftChanges, Newest: true})
		if err != nil {
			return nil, err
		}
		v.Changes = s.items(evs)
		out = append(out, v)
	}
	return out, nil
}

// draftText is what a draft would write: a message's content, else the
// event type and its payload as JSON; cut to MaxItemRunes.
func draftText(input []byte) string {
	var in map[string]any
	if json.Unmarshal(input, &in) != nil {
		return ""
	}
	if c, ok := in["content"].(string); ok {
		return text.Truncate(c, MaxItemRunes)
	}
	typ, _ := in["type"].(string)
	p, _ := json.Marshal(in["payload"])
	return text.Truncate(typ+" "+string(p), MaxItemRunes)
}
