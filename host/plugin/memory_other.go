//go:build !linux

package plugin

import "github.com/tetratelabs/wazero/experimental"

// newMemoryPool returns nil: linear memory lives on the Go heap (wazero's
// default allocator), where growing it may briefly hold old and new buffer.
func newMemoryPool() experimental.MemoryAllocator { return nil }
