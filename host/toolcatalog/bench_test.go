package toolcatalog

import (
	"testing"

	"apconnect/schemas"
)

// BenchmarkLoadCatalog is the init cost of the package: reading, bundling,
// checking and compiling every tool's two schemas.
func BenchmarkLoadCatalog(b *testing.B) {
	for b.Loop() {
		if _, err := loadCatalog(schemas.Tools()); err != nil {
			b.Fatal(err)
		}
	}
}
