package reconciler

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// maxRunMethods bounds run: it wires the parts together, and what a part
// decides is that part's own methods.
const maxRunMethods = 40

// TestPartsOwnTheirFields type-checks the package's non-test files and
// fails when run has more than maxRunMethods methods, or when a part (a
// struct type of the package that has methods: run, observations,
// outcome, applySet, writer, the Controller...) is reached into from
// outside: one of its fields selected, or a value of it built, anywhere
// but in its own methods (building is also allowed in a function named
// new...), or its methods share a file with another part's. A part's
// fields are then its own decision, whatever file or function asks: the
// others call its methods. The check works on types, not names, so a
// field reached through a local variable, a parameter or another part is
// caught as well.
func TestPartsOwnTheirFields(t *testing.T) {
	for _, v := range ownershipViolations(t, ".", "run", maxRunMethods, exportLookup(t)) {
		t.Error(v)
	}
}

// TestOwnershipCheckCatchesViolations proves the check is not vacuous.
func TestOwnershipCheckCatchesViolations(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a.go": `package p
type a struct{ x int }
func (v *a) get() int { return v.x }
func newA() *a { return &a{x: 1} }
func helper() *a { return &a{x: 2} }
type data struct{ z int }
func use(d data) int { return d.z }
`,
		"b.go": `package p
type b struct {
	a *a
	y int
}
func (v *b) peek() int { return v.a.x }
func (v *b) own() int { return v.y + v.a.get() }
func free(v *b) int { w := v; return w.y }
func (v *a) late() {}
type run struct{}
func (r *run) one() {}
func (r *run) two() {}
`,
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	joined := strings.Join(ownershipViolations(t, dir, "run", 1, nil), "\n")
	for _, want := range []string{
		"b.peek reaches into a.x",
		"free reaches into b.y",
		"helper builds a",
		"b.go declares methods of a and b",
		"run has 2 methods, more than 1",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("check missed %q; reported:\n%s", want, joined)
		}
	}
	for _, allowed := range []string{"a.get", "newA", "use", "b.own"} {
		if strings.Contains(joined, allowed) {
			t.Errorf("check flags allowed code %s:\n%s", allowed, joined)
		}
	}
}

// ownershipViolations type-checks the non-test files of dir (its imports
// read from lookup's export data) and lists what breaks the parts'
// ownership, and whether limitType has more than limit methods.
func ownershipViolations(t *testing.T, dir, limitType string, limit int, lookup importer.Lookup) []string {
	t.Helper()
	fset := token.NewFileSet()
	var files []*ast.File
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}, Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", lookup)}
	pkg, err := conf.Check("p", fset, files, info)
	if err != nil {
		t.Fatalf("type-checking %s: %v", dir, err)
	}
	parts, owner := partsOf(pkg)
	var out []string
	methods := map[string]int{}
	for _, f := range files {
		file := filepath.Base(fset.Position(f.Pos()).Filename)
		var inFile []string
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				out = append(out, reaches(d, nil, "package-level declaration in "+file, "", info, parts, owner)...)
				continue
			}
			recv := receiver(info, fd)
			name := fd.Name.Name
			if recv != nil {
				name = recv.Obj().Name() + "." + name
				methods[recv.Obj().Name()]++
				if !slices.Contains(inFile, recv.Obj().Name()) {
					inFile = append(inFile, recv.Obj().Name())
				}
			}
			out = append(out, reaches(fd, recv, name, fd.Name.Name, info, parts, owner)...)
		}
		if len(inFile) > 1 {
			sort.Strings(inFile)
			out = append(out, fmt.Sprintf("%s declares methods of %s: a file holds one part's methods", file, strings.Join(inFile, " and ")))
		}
	}
	if n := methods[limitType]; n > limit {
		out = append(out, fmt.Sprintf("%s has %d methods, more than %d: what a part decides belongs in its own methods", limitType, n, limit))
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// partsOf returns the package's parts (struct types with methods) and,
// for every field of a part, the part it belongs to.
func partsOf(pkg *types.Package) (map[*types.Named]bool, map[*types.Var]*types.Named) {
	parts := map[*types.Named]bool{}
	owner := map[*types.Var]*types.Named{}
	for _, n := range pkg.Scope().Names() {
		tn, ok := pkg.Scope().Lookup(n).(*types.TypeName)
		if !ok {
			continue
		}
		named, ok := tn.Type().(*types.Named)
		if !ok || named.NumMethods() == 0 {
			continue
		}
		st, ok := named.Underlying().(*types.Struct)
		if !ok {
			continue
		}
		parts[named] = true
		for i := range st.NumFields() {
			owner[st.Field(i)] = named
		}
	}
	return parts, owner
}

// reaches lists the fields of parts other than recv that n selects, and
// the parts it builds, in the words of function name (fn its bare name).
func reaches(n ast.Node, recv *types.Named, name, fn string, info *types.Info, parts map[*types.Named]bool, owner map[*types.Var]*types.Named) []string {
	var out []string
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			sel := info.Selections[n]
			if sel == nil || sel.Kind() != types.FieldVal {
				return true
			}
			for _, v := range fieldPath(sel) {
				if o := owner[v]; o != nil && o != recv {
					out = append(out, fmt.Sprintf("%s reaches into %s.%s: ask %s's methods", name, o.Obj().Name(), v.Name(), o.Obj().Name()))
				}
			}
		case *ast.CompositeLit:
			named, _ := info.Types[n].Type.(*types.Named)
			if named != nil && parts[named] && named != recv && !strings.HasPrefix(strings.ToLower(fn), "new") {
				out = append(out, fmt.Sprintf("%s builds %s: only its methods or a new... function do", name, named.Obj().Name()))
			}
		}
		return true
	})
	return out
}

// fieldPath is every field a selection goes through, embedded ones
// included.
func fieldPath(sel *types.Selection) []*types.Var {
	var out []*types.Var
	t := sel.Recv()
	for _, i := range sel.Index() {
		if p, ok := t.Underlying().(*types.Pointer); ok {
			t = p.Elem()
		}
		st, ok := t.Underlying().(*types.Struct)
		if !ok {
			break
		}
		f := st.Field(i)
		out = append(out, f)
		t = f.Type()
	}
	return out
}

// receiver is the named type fd is a method of, nil for a function.
func receiver(info *types.Info, fd *ast.FuncDecl) *types.Named {
	f, _ := info.Defs[fd.Name].(*types.Func)
	if f == nil {
		return nil
	}
	r := f.Type().(*types.Signature).Recv()
	if r == nil {
		return nil
	}
	t := r.Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	named, _ := t.(*types.Named)
	return named
}

// exportLookup finds the compiled export data of the package's
// dependencies (go list -export builds what the build cache lacks), so
// the check sees every imported type exactly.
func exportLookup(t *testing.T) importer.Lookup {
	t.Helper()
	cmd := exec.Command("go", "list", "-export", "-deps", "-f", "{{if .Export}}{{.ImportPath}}\t{{.Export}}{{end}}", ".")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v\n%s", err, stderr.String())
	}
	exports := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if path, file, ok := strings.Cut(sc.Text(), "\t"); ok {
			exports[path] = file
		}
	}
	return func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	}
}
