//go:build wasip1

package plugin

import (
	"runtime"
	"unsafe"
)

// The host imports of ABI version 1 (module "apconnect").

//go:wasmimport apconnect input
func hostInput(ptr unsafe.Pointer)

//go:wasmimport apconnect output
func hostOutput(ptr unsafe.Pointer, n uint32)

//go:wasmimport apconnect log
func hostLog(level uint32, ptr unsafe.Pointer, n uint32)

//go:wasmexport apconnect_abi_version
func abiVersion() int32 { return ABIVersion }

//go:wasmexport apconnect_call
func apconnectCall(op int32, inLen int32) int32 {
	var in []byte
	if inLen > 0 {
		in = make([]byte, inLen)
		hostInput(unsafe.Pointer(&in[0]))
	}
	out, ok := Handle(Op(op), in)
	if len(out) > 0 {
		hostOutput(unsafe.Pointer(&out[0]), uint32(len(out)))
	}
	// Goroutines, the garbage collector's workers among them, run only while
	// an export is running. Without this yield a collection started during a
	// call never finishes and the heap grows until the memory cap.
	runtime.Gosched()
	if ok {
		return 0
	}
	return 1
}

func writeLog(level Level, msg string) {
	if msg == "" {
		return
	}
	b := []byte(msg)
	hostLog(uint32(level), unsafe.Pointer(&b[0]), uint32(len(b)))
}
