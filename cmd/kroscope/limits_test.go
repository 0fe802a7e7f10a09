package main

import (
	"errors"
	"strings"
	"testing"
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
