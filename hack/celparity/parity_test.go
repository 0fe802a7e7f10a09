package celparity

import (
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// allowed are the expressions whose results may differ, each with why
// kroscope keeps its own behaviour. Each must still differ: an entry that
// kro now agrees with fails the test, so the list cannot go stale.
var allowed = map[string]string{
	"random.seededString(4194304, 'x').size()": "kroscope bounds one string at 3 MiB (twice the API server's largest " +
		"request); kro allocates whatever length a graph asks for",
	"lists.range(1500).map(i, lists.range(1500).size()).size()": "kroscope bounds every evaluation's cost " +
		"(--cel-cost-limit, 1,000,000 by default); kro's programs have no cost limit",
}

// notCallable are overloads no expression can choose: cel.@block exists
// only in ASTs cel-go's optimizer writes, and __not_strictly_false__ is
// the old name of @not_strictly_false (which all() and exists() call):
// the checker refuses it by name ("undeclared reference").
var notCallable = map[string]bool{"cel_block_list": true, "__not_strictly_false__": true}

// outcome is what one side made of an expression.
type outcome struct {
	Value any
	Err   string
}

func (o outcome) String() string {
	if o.Err != "" {
		return "error: " + o.Err
	}
	return fmt.Sprintf("%#v", o.Value)
}

func run(eval func(string, map[string]any) (any, error), src string) (o outcome) {
	defer func() {
		if r := recover(); r != nil {
			o = outcome{Err: fmt.Sprintf("panic: %v", r)}
		}
	}()
	v, err := eval(src, vars)
	if err != nil {
		return outcome{Err: err.Error()}
	}
	return outcome{Value: v}
}

func sortedFamilies() []string {
	var names []string
	for name := range samples {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// TestParity evaluates every sample with kro's CEL and kroscope's and
// fails on any difference in value or error, naming the expression.
func TestParity(t *testing.T) {
	for _, family := range sortedFamilies() {
		for _, src := range samples[family] {
			kro, ks := run(Kro, src), run(Kroscope, src)
			same := reflect.DeepEqual(kro, ks)
			reason, ok := allowed[src]
			switch {
			case !same && !ok:
				t.Errorf("%s: ${%s}\n\tkro:       %v\n\tkroscope:  %v", family, src, kro, ks)
			case same && ok:
				t.Errorf("%s: ${%s} is an allowed difference (%s) but both give %v: remove it", family, src, reason, kro)
			}
		}
	}
	for src := range allowed {
		if !inSamples(src) {
			t.Errorf("allowed difference ${%s} is no sample", src)
		}
	}
}

func inSamples(src string) bool {
	for _, list := range samples {
		for _, s := range list {
			if s == src {
				return true
			}
		}
	}
	return false
}

// TestEveryOverloadHasASample fails when an overload kro declares is
// chosen by no sample, so a function new in kro cannot go untested.
func TestEveryOverloadHasASample(t *testing.T) {
	covered := map[string]bool{}
	for _, family := range sortedFamilies() {
		for _, src := range samples[family] {
			ids, err := Covered(src, vars)
			if err != nil {
				continue // an error case; its overload is covered elsewhere
			}
			for _, id := range ids {
				covered[id] = true
			}
		}
	}
	list, err := KroOverloads()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) < 300 {
		t.Fatalf("kro declares only %d overloads: the environment was not read", len(list))
	}
	// cel-go's checker hides mixed numeric comparisons unless
	// CrossTypeNumericComparisons is on (kro leaves it off), so no checked
	// call names them; a dyn operand reaches them at run time.
	for id, src := range dynOnly {
		if v, err := Kro(src, vars); err != nil {
			t.Errorf("${%s} (for %s): %v", src, id, err)
		} else if _, ok := v.(bool); ok {
			covered[id] = true
		}
	}
	for _, o := range list {
		if !covered[o.ID] && !notCallable[o.ID] {
			t.Errorf("no sample calls kro's overload %s (%q)", o.ID, o.Signature)
		}
	}
}

// TestComparisonSeesDifferences: the comparison is not blind. kroscope's
// math.* does not exist in kro; a value and a compile error must differ.
func TestComparisonSeesDifferences(t *testing.T) {
	src := `math.greatest(1, 2)`
	kro, ks := run(Kro, src), run(Kroscope, src)
	if reflect.DeepEqual(kro, ks) || kro.Err == "" || ks.Value != int64(2) {
		t.Fatalf("kro %v, kroscope %v", kro, ks)
	}
}

// TestOverloadListIsCurrent: the list kroscope's own tests read
// (TestKroFunctionsDeclared) is the one this kro version declares; after
// a kro upgrade, `make kro-overloads` rewrites it.
func TestOverloadListIsCurrent(t *testing.T) {
	const path = "../../reconciler/graph/testdata/kro-cel-functions.txt"
	have, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	if err := WriteOverloads(&want); err != nil {
		t.Fatal(err)
	}
	if string(have) != want.String() {
		t.Errorf("%s is not the list kro declares: run `make kro-overloads`", path)
	}
}
