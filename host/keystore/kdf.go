package keystore

import (
	"fmt"

	"golang.org/x/crypto/argon2"
)

// KDFParams are the argon2id cost parameters stored in an encrypted key file.
type KDFParams struct {
	// Time is the number of passes over memory (argon2 "t").
	Time uint32
	// MemoryKiB is the memory size in KiB (argon2 "m").
	MemoryKiB uint32
	// Threads is the degree of parallelism (argon2 "p").
	Threads uint8
}

// DefaultKDFParams returns what Save uses unless WithKDFParams says otherwise:
// 3 passes over 64 MiB with 4 lanes, the second recommended setting of
// RFC 9106 section 4 with a smaller memory size suited to a desktop unlock.
func DefaultKDFParams() KDFParams { return KDFParams{Time: 3, MemoryKiB: 64 * 1024, Threads: 4} }

// Bounds on KDF parameters. Load refuses a file outside them before deriving
// anything, so a hostile key file cannot make apconnect allocate gigabytes or
// spin for minutes; Save refuses them too, so it never writes a file Load
// would refuse.
const (
	// MaxKDFTime is the largest accepted number of argon2id passes.
	MaxKDFTime = 16
	// MaxKDFMemoryKiB is the largest accepted argon2id memory, 1 GiB.
	MaxKDFMemoryKiB = 1 << 20
	// MaxKDFThreads is the largest accepted argon2id parallelism.
	MaxKDFThreads = 16
)

// Check reports whether p is within the accepted bounds: 1 ≤ Time ≤
// MaxKDFTime, 1 ≤ Threads ≤ MaxKDFThreads and 8×Threads ≤ MemoryKiB ≤
// MaxKDFMemoryKiB (argon2 needs at least 8 KiB per lane).
func (p KDFParams) Check() error {
	switch {
	case p.Time < 1 || p.Time > MaxKDFTime:
		return fmt.Errorf("argon2id time %d is outside 1..%d", p.Time, MaxKDFTime)
	case p.Threads < 1 || p.Threads > MaxKDFThreads:
		return fmt.Errorf("argon2id threads %d is outside 1..%d", p.Threads, MaxKDFThreads)
	case p.MemoryKiB < 8*uint32(p.Threads) || p.MemoryKiB > MaxKDFMemoryKiB:
		return fmt.Errorf("argon2id memory_kib %d is outside %d..%d", p.MemoryKiB, 8*uint32(p.Threads), MaxKDFMemoryKiB)
	}
	return nil
}

// deriveKey runs argon2id; p must have passed Check.
func deriveKey(pass, salt []byte, p KDFParams) []byte {
	return argon2.IDKey(pass, salt, p.Time, p.MemoryKiB, p.Threads, 32)
}
