//go:build linux

package plugin

import (
	"sync"
	"syscall"

	"github.com/tetratelabs/wazero/experimental"
)

// memoryPool backs each instance's linear memory with its own anonymous
// mapping of the memory's maximum size instead of the Go heap. Growing it
// never copies (the default allocator reallocates and leaves the old
// buffer to the garbage collector, so a guest growing to memory_mib could
// make the host hold two to three times that), only touched pages use
// memory, and a closed instance's pages go back to the kernel at once.
//
// Mappings are recycled within one plugin, never unmapped: wazero frees
// memory when it closes a module, which Plugin.Close may do while a call is
// still running, so a freed region stays mapped (its pages dropped with
// MADV_DONTNEED, which reads back as zeros) and is reused only by a later
// instance of the same plugin.
type memoryPool struct {
	mu   sync.Mutex
	free map[int][][]byte // by length
}

func newMemoryPool() experimental.MemoryAllocator { return &memoryPool{free: map[int][][]byte{}} }

// Allocate implements experimental.MemoryAllocator.
func (mp *memoryPool) Allocate(_, max uint64) experimental.LinearMemory {
	n := int(max)
	mp.mu.Lock()
	if list := mp.free[n]; len(list) > 0 {
		region := list[len(list)-1]
		mp.free[n] = list[:len(list)-1]
		mp.mu.Unlock()
		return &mappedMemory{pool: mp, region: region}
	}
	mp.mu.Unlock()
	if n == 0 {
		return &mappedMemory{pool: mp}
	}
	region, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		return &mappedMemory{pool: mp} // every Reallocate fails: instantiation fails
	}
	return &mappedMemory{pool: mp, region: region}
}

type mappedMemory struct {
	pool   *memoryPool
	region []byte
}

// Reallocate implements experimental.LinearMemory: the first size bytes of
// the region, or nil beyond it.
func (m *mappedMemory) Reallocate(size uint64) []byte {
	if size > uint64(len(m.region)) {
		return nil
	}
	return m.region[:size]
}

// Free implements experimental.LinearMemory.
func (m *mappedMemory) Free() {
	if len(m.region) == 0 {
		return
	}
	_ = syscall.Madvise(m.region, syscall.MADV_DONTNEED)
	m.pool.mu.Lock()
	m.pool.free[len(m.region)] = append(m.pool.free[len(m.region)], m.region)
	m.pool.mu.Unlock()
	m.region = nil
}
