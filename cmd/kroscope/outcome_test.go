package main

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadOutcome(t *testing.T) {
	for _, tc := range []struct {
		o    loadOutcome
		code int // 0: no error
		want string
	}{
		{loadOutcome{valid: 3}, 0, ""},
		{loadOutcome{valid: 2, invalid: 1}, 2, "1 of 3 definition(s) invalid"},
		{loadOutcome{valid: 1, invalid: 1, unreadable: 1}, 2, "1 of 2 definition(s) invalid; 1 of the paths given could not be read"},
		{loadOutcome{valid: 1, unreadable: 1}, 1, "1 of the paths given could not be read"},
		{loadOutcome{unreadable: 1}, 1, "1 of the paths given could not be read"},
		{loadOutcome{paths: []string{"a.yaml", "b/"}}, 2, "no ResourceGraphDefinition found in a.yaml, b/"},
	} {
		err := tc.o.result()
		if tc.code == 0 {
			if err != nil {
				t.Errorf("%+v: %v, want none", tc.o, err)
			}
			continue
		}
		if err == nil || exitCode(err) != tc.code || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%+v: %v (exit %d), want %q, exit %d", tc.o, err, exitCode(err), tc.want, tc.code)
		}
	}
}

// validate as a new user runs it (issue 27 item 6): `validate examples/*`
// skips the Go files beside the examples and says so; a path that does not
// exist is named and not counted as a definition; an instances file is a
// validation failure, exit 2.
func TestValidateAsANewUser(t *testing.T) {
	all, err := filepath.Glob("../../examples/*")
	if err != nil || len(all) < 5 {
		t.Fatalf("glob: %v %v", all, err)
	}
	out, stderr, err := runCmd(t, append([]string{"validate"}, all...)...)
	if err != nil || strings.Count(out, "ok  ") != 4 || !strings.Contains(stderr, "warning: ../../examples/examples.go: skipped: not a .yaml, .yml or .json file") {
		t.Errorf("validate examples/*: %v\n%s%s", err, out, stderr)
	}

	_, stderr, err = runCmd(t, "validate", "/nonexistent.yaml")
	if err == nil || exitCode(err) != 1 || strings.Contains(err.Error(), "definition") ||
		!strings.Contains(stderr, "cannot read /nonexistent.yaml: no such file or directory") {
		t.Errorf("validate /nonexistent.yaml: %v (exit %d)\n%s", err, exitCode(err), stderr)
	}

	_, _, err = runCmd(t, "validate", "../../examples/webapp/instances.yaml")
	var ee *invalidError
	if !errors.As(err, &ee) || exitCode(err) != 2 || !strings.Contains(err.Error(), "no ResourceGraphDefinition found in ../../examples/webapp/instances.yaml") {
		t.Errorf("validate instances.yaml: %v (exit %d)", err, exitCode(err))
	}
}
