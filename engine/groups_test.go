package engine

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxEngineMethods bounds Engine: Run's steps and the exported API. What
// it does beyond that belongs to one of its groups.
const maxEngineMethods = 40

// TestEngineGroupsKeepToTheirFiles parses the package and fails when a
// field of a group type (the type of one of Engine's fields, or of one of
// a group's fields, declared in this package) is selected outside the
// file that declares the type, when a type other than Engine holds the
// Engine, or when Engine has more than maxEngineMethods methods. The
// groups then reach each other only through methods and what New hands
// them.
func TestEngineGroupsKeepToTheirFiles(t *testing.T) {
	for _, v := range groupViolations(t, ".", maxEngineMethods) {
		t.Error(v)
	}
}

// TestGroupCheckCatchesViolations proves the check is not vacuous.
func TestGroupCheckCatchesViolations(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("engine.go", `package p
type Engine struct{ q *queue; n int }
func (e *Engine) A() { e.q.add(); e.n++ }
func (e *Engine) B() { e.q.items = nil }
func (e *Engine) C() { w := e.q; w.items = nil }
`)
	write("queue.go", `package p
type queue struct{ items []int; t *table }
func (q *queue) add() { q.items = append(q.items, 1); q.t.rows = 0 }
`)
	write("table.go", `package p
type table struct{ rows int; back *Engine }
func (t *table) size() int { return t.rows }
func peek(q *queue) int { return len(q.items) + q.t.size() }
`)
	joined := strings.Join(groupViolations(t, dir, 2), "\n")
	for _, want := range []string{
		"engine.go: Engine.B selects queue.items",
		"engine.go: Engine.C selects queue.items",
		"queue.go: queue.add selects table.rows",
		"table.go: peek selects queue.items",
		"table.go: type table holds the Engine",
		"Engine has 3 methods, more than 2",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("check missed %q; reported:\n%s", want, joined)
		}
	}
	if strings.Contains(joined, "Engine.A") || strings.Contains(joined, "table.size") || strings.Contains(joined, "selects queue.t\n") {
		t.Errorf("check flags allowed code:\n%s", joined)
	}
}

// structType is a struct declared in the package: its file, the type
// name of each field (its own type or the one it points to; "" for
// others), and which fields are pointers.
type structType struct {
	file   string
	fields map[string]string
	ptrs   map[string]bool
}

func groupViolations(t *testing.T, dir string, maxMethods int) []string {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]*structType{}
	results := map[string]string{} // function → the package type it returns
	var out []string
	type fn struct {
		file string
		decl *ast.FuncDecl
	}
	var funcs []fn
	for _, pkg := range pkgs {
		for path, f := range pkg.Files {
			file := filepath.Base(path)
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.GenDecl:
					for _, sp := range d.Specs {
						if ts, ok := sp.(*ast.TypeSpec); ok {
							if st, ok := ts.Type.(*ast.StructType); ok {
								fields, ptrs := fieldTypes(st)
								types[ts.Name.Name] = &structType{file: file, fields: fields, ptrs: ptrs}
							}
						}
					}
				case *ast.FuncDecl:
					funcs = append(funcs, fn{file, d})
					if d.Recv == nil && d.Type.Results != nil && len(d.Type.Results.List) == 1 {
						results[d.Name.Name] = typeName(d.Type.Results.List[0].Type)
					}
				}
			}
		}
	}
	groups := groupTypes(types)
	for name, st := range types {
		for _, ft := range st.fields {
			if ft == "Engine" && name != "Engine" {
				out = append(out, fmt.Sprintf("%s: type %s holds the Engine: a group is handed what it needs in New", st.file, name))
				break
			}
		}
	}
	engineMethods := 0
	for _, f := range funcs {
		name := f.decl.Name.Name
		if recv := recvTypeName(f.decl); recv != "" {
			name = recv + "." + name
			if recv == "Engine" {
				engineMethods++
			}
		}
		for _, sel := range groupSelections(f.decl, types, results) {
			if groups[sel.typ] && types[sel.typ].file != f.file {
				out = append(out, fmt.Sprintf("%s: %s selects %s.%s, a field of a group declared in %s: call its methods", f.file, name, sel.typ, sel.field, types[sel.typ].file))
			}
		}
	}
	if engineMethods > maxMethods {
		out = append(out, fmt.Sprintf("Engine has %d methods, more than %d", engineMethods, maxMethods))
	}
	sort.Strings(out)
	return out
}

// groupTypes are the types of Engine's pointer fields declared in the
// package and, in turn, of their pointer fields: the parts Engine wires
// together, shared by pointer (Options and other values are copies, read
// anywhere).
func groupTypes(types map[string]*structType) map[string]bool {
	groups := map[string]bool{}
	var add func(string)
	add = func(name string) {
		st := types[name]
		if st == nil || groups[name] || name == "Engine" {
			return
		}
		groups[name] = true
		for f, ft := range st.fields {
			if st.ptrs[f] {
				add(ft)
			}
		}
	}
	if e := types["Engine"]; e != nil {
		for f, ft := range e.fields {
			if e.ptrs[f] {
				add(ft)
			}
		}
	}
	return groups
}

func fieldTypes(st *ast.StructType) (fields map[string]string, ptrs map[string]bool) {
	fields, ptrs = map[string]string{}, map[string]bool{}
	for _, f := range st.Fields.List {
		tn := typeName(f.Type)
		_, ptr := f.Type.(*ast.StarExpr)
		names := []string{tn} // embedded
		if len(f.Names) > 0 {
			names = names[:0]
			for _, n := range f.Names {
				names = append(names, n.Name)
			}
		}
		for _, n := range names {
			fields[n], ptrs[n] = tn, ptr
		}
	}
	return fields, ptrs
}

// typeName is T for T or *T; "" for any other type expression.
func typeName(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

func recvTypeName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return ""
	}
	return typeName(fd.Recv.List[0].Type)
}

type selection struct{ typ, field string }

// groupSelections lists the fields fd selects on values of the package's
// struct types, as far as their type shows in the source: the receiver,
// parameters, variables assigned from those (or from a field, a composite
// literal or a constructor of the package), and fields of those.
func groupSelections(fd *ast.FuncDecl, types map[string]*structType, results map[string]string) []selection {
	env := map[string]string{}
	params := func(fl *ast.FieldList) {
		if fl == nil {
			return
		}
		for _, f := range fl.List {
			for _, n := range f.Names {
				env[n.Name] = typeName(f.Type)
			}
		}
	}
	params(fd.Recv)
	params(fd.Type.Params)
	var typeOf func(ast.Expr) string
	typeOf = func(e ast.Expr) string {
		switch e := e.(type) {
		case *ast.Ident:
			return env[e.Name]
		case *ast.ParenExpr:
			return typeOf(e.X)
		case *ast.StarExpr:
			return typeOf(e.X)
		case *ast.UnaryExpr:
			return typeOf(e.X)
		case *ast.CompositeLit:
			return typeName(e.Type)
		case *ast.CallExpr:
			if id, ok := e.Fun.(*ast.Ident); ok {
				return results[id.Name]
			}
		case *ast.SelectorExpr:
			if st := types[typeOf(e.X)]; st != nil {
				return st.fields[e.Sel.Name]
			}
		}
		return ""
	}
	var out []selection
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			params(n.Type.Params)
		case *ast.AssignStmt:
			if len(n.Lhs) == len(n.Rhs) {
				for i, l := range n.Lhs {
					if id, ok := l.(*ast.Ident); ok {
						env[id.Name] = typeOf(n.Rhs[i])
					}
				}
			}
		case *ast.ValueSpec:
			for i, id := range n.Names {
				switch {
				case n.Type != nil:
					env[id.Name] = typeName(n.Type)
				case i < len(n.Values):
					env[id.Name] = typeOf(n.Values[i])
				}
			}
		case *ast.SelectorExpr:
			if typ := typeOf(n.X); types[typ] != nil {
				if _, isField := types[typ].fields[n.Sel.Name]; isField {
					out = append(out, selection{typ, n.Sel.Name})
				}
			}
		}
		return true
	})
	return out
}
