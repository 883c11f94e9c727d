// Package housestyle holds the repository-wide checks of the house style
// that gofmt, go vet and staticcheck do not make: the length of production
// functions, the grouping of imports, and cargo's builds kept where the go
// tool does not look. Each names the file and line to fix.
package housestyle

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// root is the repository, from this package's directory.
const root = "../.."

// maxFuncLines is the house limit on a production function's length: past
// it, a function does two things and its name says one.
const maxFuncLines = 100

// goFiles returns the repository's Go files under dirs (relative to root),
// tests included when tests is true, generated files and test data left
// out.
func goFiles(t *testing.T, tests bool, dirs ...string) []string {
	t.Helper()
	var out []string
	for _, dir := range dirs {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if skippedDir(d.Name()) && path != filepath.Join(root, dir) {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || (!tests && strings.HasSuffix(path, "_test.go")) {
				return nil
			}
			out = append(out, path)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(out) < 100 {
		t.Fatalf("found only %d Go files under %v", len(out), dirs)
	}
	return out
}

// skippedDir reports whether the go tool leaves a directory of that name
// out of a pattern such as apconnect/... (testdata, and names beginning with
// "." or "_"), or it holds another toolchain's files (npm's node_modules,
// cargo's default target).
func skippedDir(name string) bool {
	return name == "testdata" || name == "node_modules" || name == "target" ||
		strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
}

// generated reports whether f carries the standard "Code generated … DO
// NOT EDIT." line.
func generated(f *ast.File) bool {
	for _, c := range f.Comments {
		for _, l := range c.List {
			if strings.HasPrefix(l.Text, "// Code generated ") && strings.HasSuffix(l.Text, " DO NOT EDIT.") {
				return true
			}
		}
	}
	return false
}

// Every production function of the connector, the hub, the command and the
// guest SDK is at most maxFuncLines lines long.
func TestNoLongFunctions(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	funcs := 0
	for _, path := range goFiles(t, false, "host", "cmd", "sdk-guest", "plugins", "examples") {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if generated(f) {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var name string
			switch fn := n.(type) {
			case *ast.FuncDecl:
				name = fn.Name.Name
			case *ast.FuncLit:
				name = "a function literal"
			default:
				return true
			}
			funcs++
			start, end := fset.Position(n.Pos()), fset.Position(n.End())
			if lines := end.Line - start.Line + 1; lines > maxFuncLines {
				rel, _ := filepath.Rel(root, start.Filename)
				t.Errorf("%s:%d: %s is %d lines long; split it (at most %d)", rel, start.Line, name, lines, maxFuncLines)
			}
			return true
		})
	}
	if funcs < 1000 {
		t.Fatalf("found only %d functions", funcs)
	}
}

// importClass is an import's group: the standard library, another module,
// or apconnect's own packages.
func importClass(path string) int {
	switch {
	case path == "apconnect" || strings.HasPrefix(path, "apconnect/"):
		return 2
	case !strings.Contains(strings.SplitN(path, "/", 2)[0], "."):
		return 0
	default:
		return 1
	}
}

var className = [...]string{"the standard library", "third-party modules", "apconnect"}

// Every Go file's imports are grouped as gofmt sorts them within groups:
// the standard library first, then third-party modules, then apconnect's
// own packages, each group once, separated by a blank line. (gci and
// goimports -local mostly fix a file, but take packages new to the standard
// library, crypto/hpke or crypto/sha3, for third-party ones; this check
// calls a path whose first element has no dot standard.)
func TestImportGroups(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	for _, path := range goFiles(t, true, "host", "cmd", "test", "sdk-guest", "plugins", "examples", "schemas") {
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if generated(f) {
			continue
		}
		rel, _ := filepath.Rel(root, path)
		if msg := checkGroups(fset, f); msg != "" {
			t.Errorf("%s: %s", rel, msg)
		}
	}
}

// checkGroups describes what is wrong with f's import grouping, or "".
func checkGroups(fset *token.FileSet, f *ast.File) string {
	seen := map[int]bool{}
	prevClass, prevLine := -1, 0
	for _, spec := range f.Imports {
		p, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			return err.Error()
		}
		class, line := importClass(p), fset.Position(spec.Pos()).Line
		if spec.Doc != nil {
			line = fset.Position(spec.Doc.Pos()).Line
		}
		switch {
		case prevClass == -1:
		case class == prevClass && line > prevLine+1:
			return "line " + strconv.Itoa(line) + ": " + p + " starts a second group of " + className[class]
		case class != prevClass && line == prevLine+1:
			return "line " + strconv.Itoa(line) + ": " + p + " needs a blank line before it (a new group: " + className[class] + ")"
		}
		if class != prevClass {
			if seen[class] || class < prevClass {
				return "line " + strconv.Itoa(line) + ": " + p + ": " + className[class] + " imports come before the others, in one group"
			}
			seen[class] = true
		}
		prevClass, prevLine = class, fset.Position(spec.End()).Line
	}
	return ""
}

// The checks see the repository: this package sits two levels below it.
func TestRootIsTheRepository(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
}

// TestCargoBuildsWhereGoDoesNotLook holds every cargo project in the main
// module to a target directory that the go tool skips. CI builds the interop
// suite's cargo program while the Go tests run; with cargo's default target/
// a directory cargo removed while `go list apconnect/...` walked it failed
// the listing (test/layering, and lint's staticcheck ./... could as well).
// sdk-guest is a module of its own, which the go tool does not enter.
func TestCargoBuildsWhereGoDoesNotLook(t *testing.T) {
	projects := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (skippedDir(d.Name()) || isFile(filepath.Join(path, "go.mod"))) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() != "Cargo.toml" {
			return nil
		}
		projects++
		dir := filepath.Dir(path)
		target := cargoTargetDir(t, filepath.Join(dir, ".cargo", "config.toml"))
		if strings.Contains(target, "/") || !strings.HasPrefix(target, "_") && !strings.HasPrefix(target, ".") {
			t.Errorf("%s: cargo's target-dir is %q; set [build] target-dir in %s/.cargo/config.toml to a name beginning with \"_\"",
				path, target, dir)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if projects == 0 {
		t.Fatal("found no cargo project in the main module (test/interop/rust is one)")
	}
}

// cargoTargetDir returns the build.target-dir a cargo config sets ("" when
// the file or the key is missing).
func cargoTargetDir(t *testing.T, config string) string {
	t.Helper()
	data, err := os.ReadFile(config)
	if err != nil {
		return ""
	}
	section := ""
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			section = line
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if ok && section == "[build]" && strings.TrimSpace(key) == "target-dir" {
			v, err := strconv.Unquote(strings.TrimSpace(value))
			if err != nil {
				t.Fatalf("%s: target-dir %s: %v", config, value, err)
			}
			return v
		}
	}
	return ""
}

func isFile(path string) bool {
	info, err := os.Stat(path)
	return err == nil && !info.IsDir()
}
