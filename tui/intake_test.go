package tui

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kroscope/kroscope/termtext/termtexttest"
)

// TestIntakeMakesPlantedTextInert: every sequence planted in every string
// of the snapshot (names, messages, errors, logs, conditions, graphs) is
// drawn escaped on every screen the keys reach; none is drawn raw.
func TestIntakeMakesPlantedTextInert(t *testing.T) {
	snap := fixture()
	termtexttest.Plant(snap, termtexttest.Payload())
	m, _ := newTestModel(t, snap, Options{}, 200, 60)
	for _, keys := range [][]string{nil, {"enter"}, {"enter", "y"}, {"enter", "L"}, {"enter", "H"}, {"enter", "t"},
		{"enter", "enter"}, {"esc", "esc", "esc", "D"}, {"enter"}, {"y"}} {
		press(m, keys...)
		f := m.Frame()
		if bad := termtexttest.Unsafe(f); len(bad) > 0 {
			t.Errorf("after %v the frame carries %v raw:\n%s", keys, bad, plain(f))
		}
		if !strings.Contains(plain(f), termtexttest.Sequences[0].Shown[:8]) {
			t.Errorf("after %v the frame shows nothing planted:\n%s", keys, plain(f))
		}
	}
}

// TestBackendErrorsReachTheFlashInert: an error from the API server that
// quotes an object's field (as a conflict or an admission denial does)
// is flashed escaped, and keeps its chain for the code that asks it.
func TestBackendErrorsReachTheFlashInert(t *testing.T) {
	m, f := newTestModel(t, fixture(), Options{}, 200, 40)
	f.deleteErr = fmt.Errorf("admission webhook denied the request: label %q%s: %w", "x", termtexttest.Payload(), fs.ErrPermission)
	pressRun(t, m, "ctrl+d", "right", "enter") // enter on Delete, not the default Cancel
	frame := m.Frame()
	if bad := termtexttest.Unsafe(frame); len(bad) > 0 {
		t.Errorf("the flash carries %v raw:\n%s", bad, plain(frame))
	}
	if !strings.Contains(plain(frame), "admission webhook denied") || !strings.Contains(plain(frame), termtexttest.Sequences[0].Shown) {
		t.Errorf("the flash does not show the error escaped:\n%s", plain(frame))
	}
	if err := inertErr(f.deleteErr); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("the inert error lost its chain: %v", err)
	}
}

// backendReads are the methods of Backend and of the optional backend
// interfaces (InstanceReader, GraphReader, PlanRunner, GraphApplier,
// InstanceEditor): what they return comes from the cluster.
var backendReads = map[string]bool{"Snapshot": true, "Requeue": true, "RequeueAll": true, "Delete": true,
	"InstanceDetail": true, "GraphEvents": true, "Plan": true, "ApplyGraphs": true, "ApplyGraphRefused": true,
	"EditableInstance": true, "ApplyInstanceEdit": true}

// TestEveryBackendReadGoesThroughTheIntake: outside intake.go, every call
// of a backend method is the argument of inert or inertErr, so no screen
// gets cluster text around the boundary (a new read that skips it fails
// here). The one exception reads the snapshot's version, a number.
func TestEveryBackendReadGoesThroughTheIntake(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "intake.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		wrapped := map[ast.Node]bool{} // calls that are inert's argument
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && (id.Name == "inert" || id.Name == "inertErr") && len(n.Args) > 0 {
					wrapped[n.Args[0]] = true
				}
			case *ast.SelectorExpr:
				// x.Snapshot().Version: the version only.
				if c, ok := n.X.(*ast.CallExpr); ok && n.Sel.Name == "Version" {
					wrapped[c] = true
				}
			}
			return true
		})
		ast.Inspect(f, func(n ast.Node) bool {
			c, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := c.Fun.(*ast.SelectorExpr); ok && backendReads[sel.Sel.Name] && !wrapped[c] {
				t.Errorf("%s: %s is called outside the intake: wrap it in inert or inertErr", fset.Position(c.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
}
