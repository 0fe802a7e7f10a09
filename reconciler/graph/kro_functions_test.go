package graph

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
)

// gatedFunctions are declared only where kro allows them (the runtime
// receiver exists only in status conditions); their tests sit
// with those features.
var gatedFunctions = map[string]bool{"newCondition": true, "condition": true}

// TestKroFunctionsDeclared checks that every function overload kro v0.9.4
// declares (testdata/kro-cel-functions.txt, read from kro's environment)
// has an overload in kroscope's base environment with the same receiver
// style, argument types and result type, so any expression kro compiles
// also compiles here.
func TestKroFunctionsDeclared(t *testing.T) {
	env, err := baseEnv()
	if err != nil {
		t.Fatal(err)
	}
	have := signatures(env)
	f, err := os.Open("testdata/kro-cel-functions.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		n++
		name, _, _ := strings.Cut(line, "\t")
		if gatedFunctions[name] {
			continue
		}
		if !have[line] {
			t.Errorf("kro's %q is missing or differs (name, member, args, result: %q)", name, line)
		}
	}
	if n < 300 {
		t.Fatalf("read only %d overloads", n)
	}
}

// TestKroscopeOnlyFunctions: every overload kroscope declares beyond kro's
// is one IsKroscopeOnlyFunction names, so nothing else differs and the
// warning about kro-incompatible graphs covers every extra.
func TestKroscopeOnlyFunctions(t *testing.T) {
	env, err := baseEnv()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("testdata/kro-cel-functions.txt")
	if err != nil {
		t.Fatal(err)
	}
	kro := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		kro[line] = true
	}
	extras := 0
	for sig := range signatures(env) {
		if kro[sig] {
			continue
		}
		name, _, _ := strings.Cut(sig, "\t")
		if !IsKroscopeOnlyFunction(name) {
			t.Errorf("kroscope declares %q, which kro does not (%q)", name, sig)
		}
		extras++
	}
	if extras == 0 {
		t.Error("no extras found: math.* and sets.* should be declared")
	}
	for _, name := range []string{"math.greatest", "sets.contains"} {
		if !IsKroscopeOnlyFunction(name) {
			t.Errorf("%s is kroscope's", name)
		}
	}
	for _, name := range []string{"json.marshal", "hash.sha256", "lists.setAtIndex", "random.seededString"} {
		if IsKroscopeOnlyFunction(name) {
			t.Errorf("%s is kro's too", name)
		}
	}
}

// signatures lists env's overloads in the testdata's format.
func signatures(env *cel.Env) map[string]bool {
	out := map[string]bool{}
	for name, fn := range env.Functions() {
		for _, o := range fn.OverloadDecls() {
			var args []string
			for _, a := range o.ArgTypes() {
				args = append(args, a.String())
			}
			member := "false"
			if o.IsMemberFunction() {
				member = "true"
			}
			out[strings.Join([]string{name, member, strings.Join(args, ","), o.ResultType().String()}, "\t")] = true
		}
	}
	return out
}
