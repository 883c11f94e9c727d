package mcpserver

import (
	"testing"

	"apconnect/host/toolcatalog"
)

// BenchmarkValidateArguments is the per-call cost of argument validation.
func BenchmarkValidateArguments(b *testing.B) {
	s, _ := toolcatalog.InputSchema(pfx + "room_send_message")
	args := []byte(fullArgs["room_send_message"])
	for b.Loop() {
		if err := s.ValidateJSON(args); err != nil {
			b.Fatal(err)
		}
	}
}
