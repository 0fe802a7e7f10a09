package tui

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

// maxRootMethods bounds the root model: what it does beyond the stack,
// the feed, the flash, the command line and the shared actions belongs to
// a screen or a component.
const maxRootMethods = 25

// TestScreensNeverCallTheRoot parses the package and fails when code
// other than the root model's own methods (and its constructors) names
// the root model, when a root method names a concrete screen type (it
// must reach screens through the screen interface only), or when the root
// has more than maxRootMethods methods.
func TestScreensNeverCallTheRoot(t *testing.T) {
	for _, v := range layeringViolations(t, ".") {
		t.Error(v)
	}
}

// TestLayeringCheckCatchesViolations proves the check is not vacuous.
func TestLayeringCheckCatchesViolations(t *testing.T) {
	dir := t.TempDir()
	src := `package p
type Model struct{ stack []screen }
type screen interface{ bindings() ([]int, bool) }
type listScreen struct{ m *Model }
func (l *listScreen) bindings() ([]int, bool) { return nil, true }
func (l *listScreen) open() { l.m.push() }
func (m *Model) push() {}
func (m *Model) list() *listScreen { return m.stack[0].(*listScreen) }
func helper(m *Model) {}
func newModel() *Model { return &Model{} }
`
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(layeringViolations(t, dir), "\n")
	for _, want := range []string{"type listScreen holds the root model", "helper names the root model", "Model.list names the screen type listScreen"} {
		if !strings.Contains(joined, want) {
			t.Errorf("check missed %q; reported:\n%s", want, joined)
		}
	}
	if strings.Contains(joined, "newModel") || strings.Contains(joined, "Model.push") {
		t.Errorf("check flags allowed code:\n%s", joined)
	}
}

// rootAllowed are the functions that build or run the root model, and
// the catalogue of every screen's declarations (it takes the root's from
// a prototype root).
var rootAllowed = map[string]bool{"newModel": true, "NewModel": true, "Run": true, "keysets": true}

func layeringViolations(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	var decls []*ast.FuncDecl
	var out []string
	screens := map[string]bool{} // types with a bindings method: the screens
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			for _, d := range f.Decls {
				if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.TYPE {
					for _, sp := range gd.Specs {
						ts := sp.(*ast.TypeSpec)
						if ts.Name.Name != "Model" && mentions(ts.Type, "Model") {
							out = append(out, fmt.Sprintf("type %s holds the root model: screens ask the root through their host", ts.Name.Name))
						}
					}
				}
				if fd, ok := d.(*ast.FuncDecl); ok {
					decls = append(decls, fd)
					if fd.Recv != nil && fd.Name.Name == "bindings" {
						screens[recvType(fd)] = true
					}
				}
			}
		}
	}
	rootMethods := 0
	for _, fd := range decls {
		recv := recvType(fd)
		name := fd.Name.Name
		if recv != "" {
			name = recv + "." + name
		}
		if recv == "Model" {
			rootMethods++
			seen := map[string]bool{}
			for _, id := range idents(fd) {
				if screens[id] && !seen[id] {
					seen[id] = true
					out = append(out, fmt.Sprintf("%s names the screen type %s: the root reaches screens through the screen interface only", name, id))
				}
			}
			continue
		}
		if recv == "" && rootAllowed[fd.Name.Name] {
			continue
		}
		for _, id := range idents(fd) {
			if id == "Model" {
				out = append(out, fmt.Sprintf("%s names the root model: screens ask the root through their host", name))
				break
			}
		}
	}
	if rootMethods > maxRootMethods {
		out = append(out, fmt.Sprintf("the root model has %d methods, more than %d", rootMethods, maxRootMethods))
	}
	sort.Strings(out)
	return out
}

// mentions reports whether the package's identifier name appears in n
// (textinput.Model is another package's).
func mentions(n ast.Node, name string) bool {
	found := false
	skip := map[*ast.Ident]bool{}
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			skip[n.Sel] = true
		case *ast.Ident:
			found = found || (!skip[n] && n.Name == name)
		}
		return !found
	})
	return found
}

func recvType(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return ""
	}
	e := fd.Recv.List[0].Type
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// idents are the identifiers a function's signature and body use (not
// field names after a dot).
func idents(fd *ast.FuncDecl) []string {
	var out []string
	skip := map[*ast.Ident]bool{}
	ast.Inspect(fd, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			skip[n.Sel] = true
		case *ast.Ident:
			if !skip[n] && n != fd.Name {
				out = append(out, n.Name)
			}
		}
		return true
	})
	return out
}

// TestEachActionDeclaredOnce: an action offered by several screens is
// declared once, in the shared table, and offered through share; any
// other action is declared in one place only (an action literal).
func TestEachActionDeclaredOnce(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	where := map[string][]string{}
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				cl, ok := n.(*ast.CompositeLit)
				if id, isID := cl0(cl, ok); !isID || id != "action" {
					return true
				}
				for _, e := range cl.Elts {
					if kv, ok := e.(*ast.KeyValueExpr); ok {
						if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "name" {
							if lit, ok := kv.Value.(*ast.BasicLit); ok {
								where[lit.Value] = append(where[lit.Value], fset.Position(lit.Pos()).String())
							}
						}
					}
				}
				return true
			})
		}
	}
	if len(where) < 10 {
		t.Fatalf("found only %d action literals: the check looks in the wrong place", len(where))
	}
	for name, at := range where {
		if _, ok := shared[strings.Trim(name, `"`)]; ok {
			t.Errorf("action %s is shared: offer it with share, not a literal (%s)", name, strings.Join(at, ", "))
		}
		if len(at) > 1 {
			t.Errorf("action %s is declared %d times (%s): declare it once in shared", name, len(at), strings.Join(at, ", "))
		}
	}
}

func cl0(cl *ast.CompositeLit, ok bool) (string, bool) {
	if !ok {
		return "", false
	}
	id, isID := cl.Type.(*ast.Ident)
	if !isID {
		return "", false
	}
	return id.Name, true
}
