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

// BenchmarkCompileCatalog is what the first use of every schema costs in
// all: compiling each of them, which loading no longer does.
func BenchmarkCompileCatalog(b *testing.B) {
	for b.Loop() {
		cat, err := loadCatalog(schemas.Tools())
		if err != nil {
			b.Fatal(err)
		}
		if err := cat.compileAll(); err != nil {
			b.Fatal(err)
		}
	}
}
