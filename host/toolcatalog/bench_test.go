package toolcatalog

import (
	"testing"

	"apconnect/schemas"
)

// BenchmarkLoadCatalog is the init cost of the package: reading, bundling,
// checking and compiling the 33 tools' 66 schemas.
func BenchmarkLoadCatalog(b *testing.B) {
	for b.Loop() {
		if _, err := loadCatalog(schemas.Tools()); err != nil {
			b.Fatal(err)
		}
	}
}
