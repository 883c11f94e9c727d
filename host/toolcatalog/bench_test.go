package mcpserver

import (
	"testing"

	"apconnect/schemas"
)

// BenchmarkLoadCatalog is the init cost of the package: reading, bundling,
// checking and compiling the 33 tools' 66 schemas.
func BenchmarkLoadCatalog(b *testing.B) {
	for b.Loop() {
		if _, err := loadCatalog(schemas.Tools); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateArguments is the per-call cost of argument validation.
func BenchmarkValidateArguments(b *testing.B) {
	s, _ := InputSchema(pfx + "room_send_message")
	args := []byte(fullArgs["room_send_message"])
	for b.Loop() {
		if err := s.ValidateJSON(args); err != nil {
			b.Fatal(err)
		}
	}
}
