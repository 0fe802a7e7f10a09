package tui

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestViewIsPure parses the package and fails when a View method, or any
// method or function it calls, assigns to a field of its receiver or of a
// parameter (x.f = …, x.f[i] = …, x.f++). Rendering must not change state:
// scrolling, offsets, widths and caches belong to Update.
func TestViewIsPure(t *testing.T) {
	for _, v := range impureViews(t, ".") {
		t.Error(v)
	}
}

// TestViewPurityCheckCatchesAssignments proves the check is not vacuous: a
// View that scrolls itself is reported, and so is one that calls a helper
// that does.
func TestViewPurityCheckCatchesAssignments(t *testing.T) {
	dir := t.TempDir()
	src := `package p
type pane struct{ off int; cache map[string]string; sub *pane }
func (p *pane) View() string { p.off = 3; return "" }
type other struct{ n int }
func (o *other) View() string { return o.render() }
func (o *other) render() string { o.n++; return "" }
type third struct{ lines []string }
func (t *third) View() string { draw(t); return "" }
func draw(t *third) { t.lines[0] = "x" }
type fourth struct{ sub *pane }
func (f *fourth) View() string { f.sub.scroll(); return "" }
func (p *pane) scroll() { p.off++ }
type fine struct{ lines []string }
func (f *fine) View() string { local := f.lines; local = nil; _ = local; return f.join() }
func (f *fine) join() string { return "" }
`
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got := impureViews(t, dir)
	joined := strings.Join(got, "\n")
	for _, want := range []string{"pane.View assigns p.off", "other.render assigns o.n", "draw assigns t.lines", "pane.scroll assigns p.off (called from fourth.View)"} {
		if !strings.Contains(joined, want) {
			t.Errorf("check missed %q; reported:\n%s", want, joined)
		}
	}
	if strings.Contains(joined, "fine") {
		t.Errorf("check flags a pure View:\n%s", joined)
	}
}

type funcInfo struct {
	decl  *ast.FuncDecl
	recv  string   // receiver name, "" for functions
	typ   string   // receiver type, "" for functions
	names []string // names whose fields must not be written: receiver and parameters
}

func impureViews(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	methods := map[string]*funcInfo{} // "Type.name"
	funcs := map[string]*funcInfo{}
	var views []*funcInfo
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				fi := &funcInfo{decl: fd}
				for _, p := range fd.Type.Params.List {
					for _, n := range p.Names {
						fi.names = append(fi.names, n.Name)
					}
				}
				if fd.Recv == nil {
					funcs[fd.Name.Name] = fi
					continue
				}
				r := fd.Recv.List[0]
				typ := r.Type
				if s, ok := typ.(*ast.StarExpr); ok {
					typ = s.X
				}
				if id, ok := typ.(*ast.Ident); ok {
					fi.typ = id.Name
				}
				if len(r.Names) > 0 {
					fi.recv = r.Names[0].Name
					fi.names = append(fi.names, fi.recv)
				}
				methods[fi.typ+"."+fd.Name.Name] = fi
				if fd.Name.Name == "View" {
					views = append(views, fi)
				}
			}
		}
	}
	var out []string
	seen := map[*funcInfo]bool{}
	var visit func(fi *funcInfo, via string)
	visit = func(fi *funcInfo, via string) {
		if seen[fi] {
			return
		}
		seen[fi] = true
		label := fi.decl.Name.Name
		if fi.typ != "" {
			label = fi.typ + "." + label
		}
		report := func(n ast.Node, lhs ast.Expr) {
			if root, ok := fieldRoot(lhs); ok && contains(fi.names, root) {
				out = append(out, fset.Position(n.Pos()).String()+": "+label+" assigns "+exprString(lhs)+via)
			}
		}
		ast.Inspect(fi.decl.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				for _, l := range n.Lhs {
					report(n, l)
				}
			case *ast.IncDecStmt:
				report(n, n.X)
			case *ast.CallExpr:
				switch fn := n.Fun.(type) {
				case *ast.SelectorExpr:
					if id, ok := fn.X.(*ast.Ident); ok && id.Name == fi.recv && fi.recv != "" {
						if callee := methods[fi.typ+"."+fn.Sel.Name]; callee != nil {
							visit(callee, " (called from "+label+")")
						}
					} else if root, through := fieldRoot(fn.X); through && contains(fi.names, root) {
						// x.pane.prepare(): the field's type is unknown without
						// type checking, so every method of that name is followed.
						for k, callee := range methods {
							if strings.HasSuffix(k, "."+fn.Sel.Name) {
								visit(callee, " (called from "+label+")")
							}
						}
					}
				case *ast.Ident:
					if callee := funcs[fn.Name]; callee != nil {
						visit(callee, " (called from "+label+")")
					}
				}
			}
			return true
		})
	}
	for _, v := range views {
		visit(v, "")
	}
	sort.Strings(out)
	return out
}

// fieldRoot returns x for x.f, x.f.g, x.f[i], (*x).f: a write through x
// into something that outlives the call.
func fieldRoot(e ast.Expr) (string, bool) {
	through := false
	for {
		switch x := e.(type) {
		case *ast.SelectorExpr:
			e, through = x.X, true
		case *ast.IndexExpr:
			e, through = x.X, true
		case *ast.StarExpr:
			e, through = x.X, true
		case *ast.ParenExpr:
			e = x.X
		case *ast.Ident:
			return x.Name, through
		default:
			return "", false
		}
	}
}

func exprString(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.SelectorExpr:
		return exprString(x.X) + "." + x.Sel.Name
	case *ast.IndexExpr:
		return exprString(x.X) + "[…]"
	case *ast.StarExpr:
		return "*" + exprString(x.X)
	case *ast.ParenExpr:
		return exprString(x.X)
	case *ast.Ident:
		return x.Name
	}
	return "?"
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
