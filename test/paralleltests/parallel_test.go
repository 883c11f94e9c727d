// Package paralleltests holds the test that keeps the rule for parallel
// tests in the packages whose tests wait on a real hub, processes and
// timers rather than on the CPU: every top-level test calls t.Parallel()
// as its first statement, or its doc comment says why it cannot, on a line
// starting "Serial:" (it uses t.Setenv or os.Chdir, changes a
// package-level variable, needs a fixed port, or measures time that other
// tests' load would disturb).
package paralleltests

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// packages are the directories, from the module root, the rule covers.
var packages = []string{
	"cmd/apconnect",
	"host/connector/discourse",
	"host/connector/profile",
	"host/hub/internal/discourse",
	"host/mcpserver",
	"host/opview",
	"host/store",
	"host/wake",
	"test/e2e",
}

// exempt are test files the rule does not cover yet, with the reason.
// None today; the map stays so an exemption is a reviewed line, not a
// weakened check.
var exempt = map[string]string{}

func TestTopLevelTestsRunInParallelOrSayWhy(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	for _, pkg := range packages {
		files, err := filepath.Glob(filepath.Join(root, pkg, "*_test.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no test files (%v)", pkg, err)
		}
		sort.Strings(files)
		for _, file := range files {
			rel := filepath.ToSlash(strings.TrimPrefix(file, root+string(filepath.Separator)))
			if _, ok := exempt[rel]; ok {
				continue
			}
			for _, p := range problems(t, file, nil) {
				t.Errorf("%s:%s", rel, p)
			}
		}
	}
	for rel := range exempt {
		if _, err := os.Stat(filepath.Join(root, rel)); err != nil {
			t.Errorf("exempt file %s: %v (drop it from the list)", rel, err)
		}
	}
}

// problems lists the top-level tests of file (or of src, when not nil)
// that break the rule.
func problems(t *testing.T, file string, src any) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Name.Name == "TestMain" {
			continue
		}
		param := testingT(fn)
		if param == "" {
			continue
		}
		parallel := callsParallelFirst(fn, param)
		serial := saysSerial(fn.Doc)
		line := fset.Position(fn.Pos()).Line
		switch {
		case parallel && serial:
			out = append(out, strconv.Itoa(line)+": "+fn.Name.Name+" calls t.Parallel() but its doc comment says Serial:")
		case !parallel && !serial:
			out = append(out, strconv.Itoa(line)+": "+fn.Name.Name+" neither calls t.Parallel() first nor says why it is serial (a \"Serial:\" line in its doc comment)")
		}
	}
	return out
}

// testingT returns the name of fn's *testing.T parameter ("" when fn is not
// a test function).
func testingT(fn *ast.FuncDecl) string {
	ps := fn.Type.Params.List
	if len(ps) != 1 || len(ps[0].Names) != 1 {
		return ""
	}
	star, ok := ps[0].Type.(*ast.StarExpr)
	if !ok {
		return ""
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "T" {
		return ""
	}
	if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "testing" {
		return ""
	}
	return ps[0].Names[0].Name
}

func callsParallelFirst(fn *ast.FuncDecl, param string) bool {
	if fn.Body == nil || len(fn.Body.List) == 0 {
		return false
	}
	es, ok := fn.Body.List[0].(*ast.ExprStmt)
	if !ok {
		return false
	}
	call, ok := es.X.(*ast.CallExpr)
	if !ok || len(call.Args) != 0 {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Parallel" {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == param
}

func saysSerial(doc *ast.CommentGroup) bool {
	if doc == nil {
		return false
	}
	for _, line := range strings.Split(doc.Text(), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "Serial:") {
			return true
		}
	}
	return false
}

// The rule itself: what passes and what fails.
func TestProblemsFindsTestsThatBreakTheRule(t *testing.T) {
	t.Parallel()
	src := `package p

import "testing"

func TestParallel(t *testing.T) {
	t.Parallel()
}

// Serial: it sets a package-level hook.
func TestSerial(t *testing.T) {}

func TestNeither(t *testing.T) {
	x := 1
	_ = x
	t.Parallel()
}

// Serial: stale.
func TestBoth(tt *testing.T) {
	tt.Parallel()
}

func TestOtherT(t *testing.T) {
	u := t
	u.Parallel()
}

func TestMain(m *testing.M) {}

func BenchmarkX(b *testing.B) {}

func helper(t *testing.T) {}
`
	got := problems(t, "p_test.go", src)
	want := []string{
		"12: TestNeither neither calls t.Parallel() first nor says why it is serial (a \"Serial:\" line in its doc comment)",
		"19: TestBoth calls t.Parallel() but its doc comment says Serial:",
		"23: TestOtherT neither calls t.Parallel() first nor says why it is serial (a \"Serial:\" line in its doc comment)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
