package store

import (
	"context"
	"encoding/json"
	"errors"
)

// WatchTypes returns the custom event types the agent watches in a room
// (none when it watches nothing).
func (q Q) WatchTypes(ctx context.Context, key int64) ([]string, error) {
	var raw []byte
	err := q.queryRow(ctx, `SELECT types FROM room_watches WHERE room = ?`, key).Scan(&raw)
	if err != nil {
		if errors.Is(notFound(err), ErrNotFound) {
			return nil, nil
		}
		return nil, err
	}
	var types []string
	if err := json.Unmarshal(raw, &types); err != nil {
		return nil, err
	}
	return types, nil
}

// SetWatchTypes replaces the custom event types the agent watches in a
// room; an empty list removes the watch.
func (t *Tx) SetWatchTypes(ctx context.Context, key int64, types []string, now int64) error {
	if len(types) == 0 {
		_, err := t.exec(ctx, `DELETE FROM room_watches WHERE room = ?`, key)
		return err
	}
	raw, err := json.Marshal(types)
	if err != nil {
		return err
	}
	_, err = t.exec(ctx, `INSERT INTO room_watches (room, types, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (room) DO UPDATE SET types = excluded.types, updated_at = excluded.updated_at`, key, raw, now)
	return err
}
