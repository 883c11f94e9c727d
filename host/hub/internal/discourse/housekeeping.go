package discourse

import (
	"context"
	"database/sql"
	"time"

	"apconnect/host/proto/adp"
)

// housekeeping runs the time-driven chores until ctx ends, then closes
// every live stream. Room state itself never needs it: status is derived
// from the clock on every read and write (ADP 7), so a slow or stopped loop
// delays only these chores.
func (s *Service) housekeeping(ctx context.Context) {
	defer close(s.loopDone)
	t := time.NewTicker(s.limits.MaintenanceInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			s.live.closeAll("the hub is shutting down")
			return
		case <-t.C:
			if err := s.maintain(ctx); err != nil && ctx.Err() == nil {
				s.logger.Warn("discourse housekeeping failed", "err", err)
			}
		}
	}
}

// maintain forgets expired agent statuses, ends the live streams of rooms
// that have ended by time, and fixes the generation time of the archives
// of rooms that ended by time (room.close and room.cancel fix it in their
// write).
func (s *Service) maintain(ctx context.Context) error {
	now := s.now()
	s.statuses.prune(now)
	for _, id := range s.live.roomsWithSubscribers() {
		s.rooms.mu.Lock()
		e := s.rooms.m[id]
		s.rooms.mu.Unlock()
		if e == nil {
			continue
		}
		e.mu.RLock()
		st := e.room.StatusAt(now)
		e.mu.RUnlock()
		if st == adp.RoomEnded || st == adp.RoomCancelled {
			s.live.endRoom(id, "the room has ended")
		}
	}
	var due bool
	if err := s.db.Reader().QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM adp_rooms
		WHERE archived_at IS NULL AND closed IS NULL AND end_time <= ?)`, now).Scan(&due); err != nil || !due {
		return err
	}
	return s.db.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE adp_rooms SET archived_at = ? WHERE archived_at IS NULL AND closed IS NULL AND end_time <= ?`, now, now)
		return err
	})
}
