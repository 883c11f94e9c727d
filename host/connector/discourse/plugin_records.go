package discourse

import (
	"context"
	"encoding/json"
	"errors"

	"apconnect/host/plugin"
	"apconnect/host/store"
)

// The records of a plugin's room context come from the verified store by
// the record scope rule of docs/PLUGINS.md section 4, applied by
// plugin.FillRecords over storeLookup.

// fillRecords sets rc.Records and rc.RecordsTruncated to the held records
// of scope in the room with store key key. An empty scope leaves rc as it
// is (no records, nothing claimed about the room).
func (c *Module) fillRecords(ctx context.Context, key int64, rc *plugin.RoomContext, scope plugin.RecordScope) error {
	if len(scope.Types) == 0 && len(scope.EventIDs) == 0 {
		return nil
	}
	return plugin.FillRecords(ctx, rc, scope, storeLookup{q: c.Store.Read(), key: key})
}

// storeLookup is a plugin.RecordLookup over one room of the store: the
// records of its retained window, which were verified before they were
// stored.
type storeLookup struct {
	q   store.Q
	key int64
}

// RecordsByEventID returns the held records with those event IDs.
func (l storeLookup) RecordsByEventID(ctx context.Context, ids []string) ([]plugin.Record, error) {
	var out []plugin.Record
	for _, id := range ids {
		ev, err := l.q.EventByID(ctx, l.key, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		rec, err := pluginRecord(ev)
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	return out, nil
}

// NewestRecordsOfTypes returns the newest held records of those types,
// newest first, reading the store's timeline in pages.
func (l storeLookup) NewestRecordsOfTypes(ctx context.Context, types []string, limit int) ([]plugin.Record, error) {
	var out []plugin.Record
	var before int64
	for len(out) < limit {
		n := min(limit-len(out), 1000)
		evs, err := l.q.Timeline(ctx, l.key, store.TimelineQuery{Types: types, BeforeSeq: before, Limit: n, Newest: true, Records: true})
		if err != nil {
			return nil, err
		}
		for i := len(evs) - 1; i >= 0; i-- {
			rec, err := pluginRecord(&evs[i])
			if err != nil {
				return nil, err
			}
			out = append(out, rec)
		}
		if len(evs) < n || evs[0].Seq <= 1 {
			break
		}
		before = evs[0].Seq
	}
	return out, nil
}

// HoldsWholeRoom reports whether the retained window starts at seq 1.
func (l storeLookup) HoldsWholeRoom(ctx context.Context) (bool, error) {
	pos, err := l.q.Position(ctx, l.key)
	if err != nil {
		return false, err
	}
	return pos.SyncedSeq == 0 || pos.OldestSeq == 1, nil
}

// storedRecord is the part of a stored server record a plugin sees. The
// record was verified before it was stored, so it is only decoded here.
type storedRecord struct {
	AcceptedAt int64 `json:"accepted_at"`
	Envelope   struct {
		Redacted bool `json:"redacted"`
		Event    struct {
			CreatedAt int64           `json:"created_at"`
			Mentions  []string        `json:"mentions"`
			Payload   json.RawMessage `json:"payload"`
		} `json:"event"`
	} `json:"envelope"`
}

// pluginRecord is a stored record as plugins see it.
func pluginRecord(ev *store.Event) (plugin.Record, error) {
	var sr storedRecord
	if err := json.Unmarshal(ev.Record, &sr); err != nil {
		return plugin.Record{}, err
	}
	rec := plugin.Record{Seq: ev.Seq, EventID: ev.EventID, Type: ev.Type, AcceptedAt: sr.AcceptedAt}
	if sr.Envelope.Redacted {
		rec.Redacted = true
		return rec, nil
	}
	rec.Actor, rec.CreatedAt, rec.Mentions, rec.Payload = ev.Actor, sr.Envelope.Event.CreatedAt, sr.Envelope.Event.Mentions, sr.Envelope.Event.Payload
	return rec, nil
}
