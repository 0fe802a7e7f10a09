package reconciler

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestRunKeepsOnlyTheWholeReconcile: run holds what lives for the whole
// reconcile; what steps decide lives in its parts (observations, outcome,
// and those that act for the instance: see TestPartsOwnTheirFields), so a
// maintainer can tell which fields a change may touch.
func TestRunKeepsOnlyTheWholeReconcile(t *testing.T) {
	if n := reflect.TypeFor[run]().NumField(); n > 12 {
		t.Errorf("run has %d fields, want at most 12: put what a step decides in the part it is about", n)
	}
}

// TestFunctionsFitOnAScreen: no function of the package is longer than 80
// lines (the house rule; aim for 50).
func TestFunctionsFitOnAScreen(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		fs := token.NewFileSet()
		af, err := parser.ParseFile(fs, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok {
				if n := fs.Position(fd.End()).Line - fs.Position(fd.Pos()).Line + 1; n > 80 {
					t.Errorf("%s: %s is %d lines long, more than 80", f, fd.Name.Name, n)
				}
			}
		}
	}
}
