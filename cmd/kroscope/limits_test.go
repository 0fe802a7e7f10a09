package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/kroscope/kroscope/test/graphs"
)

const runtimeDir = "../../reconciler/graph/testdata/runtime"

// TestValidateRejectsExpensiveCEL: validate rejects a graph whose
// estimated worst-case CEL cost exceeds --cel-cost-limit, naming the file,
// the expression and the flag; a raised limit lets it through.
func TestValidateRejectsExpensiveCEL(t *testing.T) {
	file := runtimeDir + "/exponential-readywhen.yaml"
	_, stderr, err := runCmd(t, "validate", "--cel-cost-limit=1000000", file)
	var ec interface{ ExitCode() int }
	if !errors.As(err, &ec) || ec.ExitCode() != 2 {
		t.Fatalf("err = %v, want exit code 2", err)
	}
	for _, want := range []string{file + ": exponential-readywhen: resource cm: readyWhen[0]: ${lists.range(1000000)", "exceeds the limit of 1000000", "--cel-cost-limit"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	out, stderr, err := runCmd(t, "validate", "--cel-cost-limit=100000000000", file)
	if err != nil || !strings.Contains(out, "ok  exponential-readywhen") {
		t.Errorf("raised limit: err %v, stdout %q, stderr %q", err, out, stderr)
	}
	// The flags live on the shared command: leave the default behind.
	if _, _, err := runCmd(t, "validate", "--cel-cost-limit=1000000", runtimeDir+"/foreach-huge-count.yaml"); err != nil {
		t.Errorf("foreach-huge-count: %v", err)
	}
}

// TestValidateTwoGraphsOneKind: two graphs serving the same kind are both
// invalid, each error naming both files.
func TestValidateTwoGraphsOneKind(t *testing.T) {
	dir := t.TempDir()
	same := func(name string) string {
		return graphs.RGD(name, "Same", "", graphs.ConfigMap("cm", "${schema.metadata.name}", ""))
	}
	a, b := dir+"/a.yaml", dir+"/b.yaml"
	writeFile(t, a, same("first"))
	writeFile(t, b, same("second"))
	_, stderr, err := runCmd(t, "validate", dir)
	var ec interface{ ExitCode() int }
	if !errors.As(err, &ec) || ec.ExitCode() != 2 || !strings.Contains(err.Error(), "2 of 2") {
		t.Fatalf("err = %v, want both invalid", err)
	}
	for _, want := range []string{a + `: first: kind Same.kro.run is also served by graph "second" (` + b + ")", b + `: second: kind Same.kro.run is also served by graph "first" (` + a + ")"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// TestValidateEscapesControlCharacters: a definition's name and values
// reach the terminal with their control characters escaped.
func TestValidateEscapesControlCharacters(t *testing.T) {
	path := t.TempDir() + "/evil.yaml"
	writeFile(t, path, graphs.RGD(`"evil\e]0;pwned\a\e[2J"`, "Evil", "", graphs.ConfigMap(`"cm\e[31m"`, "x", "")))
	out, stderr, _ := runCmd(t, "validate", path)
	if strings.ContainsAny(out+stderr, "\x1b\x07") {
		t.Errorf("raw control characters reached the terminal:\n%q\n%q", out, stderr)
	}
	if !strings.Contains(stderr, `evil\x1b]0;pwned\x07\x1b[2J`) || !strings.Contains(stderr, `cm\x1b[31m`) {
		t.Errorf("stderr does not show the escaped name and id:\n%s", stderr)
	}
}

// TestValidateWarnsOfCostForLargeInputs: an expression over the limit only
// when its inputs have 1000 elements (a map over a list of lists) is a
// warning naming the file, the field and the fix, and the graph is valid.
func TestValidateWarnsOfCostForLargeInputs(t *testing.T) {
	file := t.TempDir() + "/teams.yaml"
	writeFile(t, file, graphs.RGD("teams", "Teams", "types:\n  Team:\n    name: string\n    members: \"[]string\"\nspec:\n  teams: \"[]Team\"",
		graphs.ConfigMap("roster", "${schema.metadata.name}", `roster: ${schema.spec.teams.map(t, t.name + ":" + t.members.map(m, m + "@").join(",")).join(";")}`)))
	out, stderr, err := runCmd(t, "validate", file)
	if err != nil || !strings.Contains(out, "ok  teams") {
		t.Fatalf("err %v, stdout %q, stderr %q", err, out, stderr)
	}
	for _, want := range []string{"warning: " + file + ": teams: resource roster: data.roster: ${schema.spec.teams.map(", "when its inputs have 1000 elements or characters", "maxItems"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}
