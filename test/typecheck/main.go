// Command typecheck type-checks packages for another GOOS and GOARCH from
// source, the standard library included, without compiling them: what
// `make lint` asks of the non-unix files (`GOOS=windows GOARCH=amd64 go
// run ./test/typecheck ./...` must find no error).
//
// Rationale: a cross build (`GOOS=windows go build ./...`) compiles every
// package for the other platform, the pure-Go SQLite among them, which
// takes about a minute on two cores with an empty build cache; a build
// constraint gone wrong is a type error (an undefined function, a missing
// method, a wrong signature), and go/types finds every one of those in a
// few seconds. What only the compiler or linker would refuse (a body-less
// function without its assembly, a bad linkname) is not checked here;
// apconnect has neither.
//
// The packages and their files come from `go list -deps` run with the
// target's GOOS and GOARCH (and CGO_ENABLED=0), so build constraints select
// the files exactly as the go command would; each package is type-checked
// after its dependencies, in the order go list gives.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// listed is what typecheck reads of a `go list -json` entry.
type listed struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	CgoFiles   []string
	ImportMap  map[string]string
	Standard   bool
	Error      *struct{ Err string }
}

func main() {
	goos := flag.String("goos", "", "the target GOOS (required)")
	goarch := flag.String("goarch", "", "the target GOARCH (required)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: typecheck -goos GOOS -goarch GOARCH packages...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *goos == "" || *goarch == "" || flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	n, errs, err := check(flag.Args(), *goos, *goarch)
	if err != nil {
		fmt.Fprintln(os.Stderr, "typecheck:", err)
		os.Exit(2)
	}
	for _, e := range errs {
		fmt.Fprintln(os.Stderr, e)
	}
	if len(errs) > 0 {
		fmt.Fprintf(os.Stderr, "typecheck: %d errors for %s/%s\n", len(errs), *goos, *goarch)
		os.Exit(1)
	}
	fmt.Printf("typecheck: %d packages type-check for %s/%s\n", n, *goos, *goarch)
}

// check type-checks patterns and their dependencies for goos/goarch and
// returns how many packages it checked and every type error, in order.
func check(patterns []string, goos, goarch string) (int, []error, error) {
	pkgs, err := list(patterns, goos, goarch)
	if err != nil {
		return 0, nil, err
	}
	fset := token.NewFileSet()
	checked := map[string]*types.Package{"unsafe": types.Unsafe}
	sizes := types.SizesFor("gc", goarch)
	var errs []error
	for _, p := range pkgs {
		if p.ImportPath == "unsafe" {
			continue
		}
		if p.Error != nil {
			errs = append(errs, fmt.Errorf("%s: %s", p.ImportPath, p.Error.Err))
			continue
		}
		if len(p.CgoFiles) > 0 {
			errs = append(errs, fmt.Errorf("%s: has cgo files with CGO_ENABLED=0", p.ImportPath))
			continue
		}
		files, err := parse(fset, p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		conf := types.Config{
			Importer: importerFunc(func(path string) (*types.Package, error) {
				if mapped, ok := p.ImportMap[path]; ok {
					path = mapped
				}
				if tp, ok := checked[path]; ok {
					return tp, nil
				}
				return nil, fmt.Errorf("%s is not type-checked (a dependency with errors?)", path)
			}),
			Sizes: sizes,
			Error: func(err error) { errs = append(errs, err) },
		}
		tp, _ := conf.Check(p.ImportPath, fset, files, nil)
		checked[p.ImportPath] = tp
	}
	return len(pkgs), errs, nil
}

// list runs go list -deps for the target platform, dependencies first.
func list(patterns []string, goos, goarch string) ([]listed, error) {
	args := append([]string{"list", "-e", "-deps", "-json=ImportPath,Dir,GoFiles,CgoFiles,ImportMap,Standard,Error"}, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v: %s", err, stderr.Bytes())
	}
	var pkgs []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return pkgs, nil
		} else if err != nil {
			return nil, fmt.Errorf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
}

// parse parses a package's Go files (function bodies of the standard
// library included: they may use what a build constraint selects too).
func parse(fset *token.FileSet, p listed) ([]*ast.File, error) {
	files := make([]*ast.File, 0, len(p.GoFiles))
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }
