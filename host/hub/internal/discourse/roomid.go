package discourse

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/binary"
	"os"
	"sync/atomic"
	"time"
)

// Room ids are Xid-compatible (ADP 6.1 recommends it): 12 bytes — 4 of Unix
// seconds, 3 of a per-process random machine id, 2 of the process id and 3
// of a counter starting at a random value — as 20 lowercase base32hex
// characters. They are unique within the hub (the primary key guards it)
// and sortable by creation second. They are not secrets (ADP 15).
var (
	xidMachine [3]byte
	xidCounter atomic.Uint32
	xidPID     = uint16(os.Getpid())
	xidEncode  = base32.NewEncoding("0123456789abcdefghijklmnopqrstuv").WithPadding(base32.NoPadding)
)

func init() {
	var b [7]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("discourse: no randomness for room ids: " + err.Error())
	}
	copy(xidMachine[:], b[:3])
	xidCounter.Store(binary.BigEndian.Uint32(b[3:]))
}

// newRoomID returns a fresh Xid-compatible room id.
func newRoomID() string {
	var id [12]byte
	binary.BigEndian.PutUint32(id[0:4], uint32(time.Now().Unix()))
	copy(id[4:7], xidMachine[:])
	binary.BigEndian.PutUint16(id[7:9], xidPID)
	c := xidCounter.Add(1)
	id[9], id[10], id[11] = byte(c>>16), byte(c>>8), byte(c)
	return xidEncode.EncodeToString(id[:])
}
