package adp

import "apconnect/host/text"

// RoomStatus is a room state (7).
type RoomStatus string

// The four room states.
const (
	RoomScheduled RoomStatus = "scheduled"
	RoomActive    RoomStatus = "active"
	RoomEnded     RoomStatus = "ended"
	RoomCancelled RoomStatus = "cancelled"
)

// Closure records an explicit end: a room.close (ended) or room.cancel
// (cancelled) record.
type Closure struct {
	Status RoomStatus `json:"status"` // RoomEnded (room.close) or RoomCancelled (room.cancel)
	Seq    int64      `json:"seq"`    // seq of the closing record
	At     int64      `json:"at"`     // its accepted_at
	By     string     `json:"by"`     // its actor
}

// StatusAt returns the room state in force at time t (Unix ms) under the
// current contract (7): cancelled or ended after a room.cancel or room.close
// record; otherwise ended from end_time on, active from start_time on, and
// scheduled before. Time-driven transitions produce no record, so replaying
// a chain evaluates each record at its accepted_at with the effective times
// of that point.
func (r *Room) StatusAt(t int64) RoomStatus {
	if r.Closed != nil {
		return r.Closed.Status
	}
	switch {
	case t >= r.EndTime:
		return RoomEnded
	case t >= r.StartTime:
		return RoomActive
	}
	return RoomScheduled
}

// stateAllows applies the state restrictions of section 13 (and 12.2 for
// room.close and room.cancel) to a write of type typ in state s.
func stateAllows(s RoomStatus, typ string) error {
	switch s {
	case RoomEnded:
		return newError(CodeRoomNotActive, "", "the room has ended and is read-only")
	case RoomCancelled:
		return newError(CodeRoomNotActive, "", "the room was cancelled and is read-only")
	case RoomScheduled:
		if b, ok := builtinTypes[typ]; ok && b.scheduled {
			return nil
		}
		return newError(CodeRoomNotActive, "", "a scheduled room does not accept %s", text.Truncate(typ, 80))
	case RoomActive:
		if typ == TypeRoomCancel {
			return newError(CodeRoomNotActive, "", "room.cancel applies only to scheduled rooms; close an active room with room.close")
		}
		return nil
	}
	return newError(CodeRoomNotActive, "", "unknown room state %q", s)
}
