// Command raw speaks the ABI by hand, without the SDK, to break it in ways
// the SDK never would. Each tool is one misbehaviour.
package main

import (
	"bytes"
	"strings"
	"unsafe"
)

//go:wasmimport apconnect input
func input(ptr unsafe.Pointer)

//go:wasmimport apconnect output
func output(ptr unsafe.Pointer, n uint32)

//go:wasmimport apconnect log
func hostLog(level uint32, ptr unsafe.Pointer, n uint32)

//go:wasmexport apconnect_abi_version
func abiVersion() int32 { return 1 }

var toolNames = []string{
	"malformed", "dupkey", "badutf8", "double", "oob", "nooutput", "badstatus",
	"trap", "huge", "deep", "resource", "errorenv", "badseq", "loglong",
}

func describe() []byte {
	var b strings.Builder
	b.WriteString(`{"name":"raw","version":"0.0.1","abi_version":1,"watches":["demo.raw"],"tools":[`)
	for i, n := range toolNames {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"name":"` + n + `","description":"misbehaves","input_schema":{"type":"object"}}`)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

func out(b []byte) { output(unsafe.Pointer(&b[0]), uint32(len(b))) }

//go:wasmexport apconnect_call
func call(op int32, n int32) int32 {
	in := make([]byte, n)
	input(unsafe.Pointer(&in[0]))
	switch op {
	case 1:
		out(describe())
		return 0
	case 3:
		// Names a seq that is not in the batch.
		out([]byte(`{"items":[{"kind":"room.event.custom","seq":999999,"summary":"x"}]}`))
		return 0
	}
	name := ""
	if i := bytes.Index(in, []byte(`"name":"`)); i >= 0 {
		rest := in[i+8:]
		name = string(rest[:bytes.IndexByte(rest, '"')])
	}
	text := func(s string) []byte { return []byte(`{"content":[{"type":"text","text":"` + s + `"}]}`) }
	switch name {
	case "malformed":
		out([]byte(`{"content":[{"type":"text","text":"cut`))
	case "dupkey":
		out([]byte(`{"content":[{"type":"text","text":"a"}],"content":[{"type":"text","text":"b"}]}`))
	case "badutf8":
		out([]byte("{\"content\":[{\"type\":\"text\",\"text\":\"\xff\xfe\"}]}"))
	case "double":
		out(text("one"))
		out(text("two"))
	case "oob":
		output(unsafe.Add(unsafe.Pointer(&in[0]), 0x7FFFFF00), 1024)
	case "nooutput":
	case "badstatus":
		out(text("ok"))
		return 7
	case "trap":
		var p *int
		*p = 1 // nil dereference without recover: the Go runtime aborts
	case "huge":
		output(unsafe.Pointer(&in[0]), 512<<20)
	case "deep":
		out([]byte(`{"content":[{"type":"text","text":"d"}],"structured":{"a":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}}`))
	case "resource":
		out([]byte(`{"content":[{"type":"resource","resource":{"uri":"file:///etc/passwd","text":"root"}}]}`))
	case "errorenv":
		out([]byte(`{"error":{"code":"busy","message":"try later"}}`))
		return 1
	case "loglong":
		long := bytes.Repeat([]byte("L"), 100000)
		hostLog(2, unsafe.Pointer(&long[0]), uint32(len(long)))
		out(text("logged"))
	default:
		out([]byte(`{"error":{"code":"unknown_tool","message":"no such tool"}}`))
		return 1
	}
	return 0
}

func main() {}
