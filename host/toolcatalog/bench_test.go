package toolcatalog

import (
	"testing"

	"apconnect/schemas"
)

// BenchmarkLoadCatalog is the init cost of the package: reading, bundling,
// checking and compiling the 39 tools' 78 schemas.
func BenchmarkLoadCatalog(b *testing.B) {
	for b.Loop() {
		if _, err := loadCatalog(schemas.Tools()); err != nil {
			b.Fatal(err)
		}
	}
}
