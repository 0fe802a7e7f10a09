package main

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
)

func runCmd(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	rootCmd.SetOut(&out)
	rootCmd.SetErr(&errOut)
	rootCmd.SetArgs(args)
	// rootCmd is shared with other commands' tests: leave it as found.
	defer func() {
		rootCmd.SetArgs(nil)
		rootCmd.SetOut(nil)
		rootCmd.SetErr(nil)
		// A --help run leaves the help flag set for the next test.
		if c, _, err := rootCmd.Find(args); err == nil && c.Flags().Lookup("help") != nil {
			_ = c.Flags().Set("help", "false")
		}
	}()
	err = rootCmd.Execute()
	return out.String(), errOut.String(), err
}

const invalidDir = "../../reconciler/graph/testdata/invalid"

func TestGraphNoDefinitions(t *testing.T) {
	path := t.TempDir() + "/cm.yaml"
	writeFile(t, path, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")
	_, _, err := runCmd(t, "graph", path)
	if err == nil || !strings.Contains(err.Error(), "no ResourceGraphDefinition found") {
		t.Fatalf("err = %v", err)
	}
	var ec interface{ ExitCode() int }
	if errors.As(err, &ec) {
		t.Fatalf("no definitions should be a usage error, not a validation failure: %v", err)
	}
}

func TestValidateReportsEveryError(t *testing.T) {
	_, stderr, err := runCmd(t, "validate", invalidDir+"/many-errors.yaml", invalidDir+"/cycle-two.yaml")
	var ec interface{ ExitCode() int }
	if !errors.As(err, &ec) || ec.ExitCode() != 2 {
		t.Fatalf("err = %v, want an error with exit code 2", err)
	}
	for _, want := range []string{`id "Bad-Id" is not lowerCamelCase`, `unknown identifier "nothere"`, `kind "lower" is invalid`, "a -> b -> a"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

func TestGraphFormats(t *testing.T) {
	dir := t.TempDir() + "/g.yaml"
	writeFile(t, dir, `apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata:
  name: demo
spec:
  schema:
    apiVersion: v1alpha1
    kind: Demo
    spec:
      name: string
  resources:
  - id: config
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: ${schema.spec.name}
  - id: pod
    template:
      apiVersion: v1
      kind: Pod
      metadata:
        name: ${config.metadata.name}
`)
	out, _, err := runCmd(t, "graph", dir)
	if err != nil || !strings.Contains(out, "order:  config → pod") || !strings.Contains(out, "← config") {
		t.Fatalf("text: err=%v\n%s", err, out)
	}
	out, _, err = runCmd(t, "graph", "-o", "json", dir)
	if err != nil || !strings.Contains(out, `"topologicalOrder": [`) {
		t.Fatalf("json: err=%v\n%s", err, out)
	}
	out, _, err = runCmd(t, "graph", "-o", "dot", dir)
	if err != nil || !strings.Contains(out, `"config" -> "pod";`) {
		t.Fatalf("dot: err=%v\n%s", err, out)
	}
	out, _, err = runCmd(t, "validate", dir)
	if err != nil || !strings.HasPrefix(out, "ok  demo  Demo") {
		t.Fatalf("validate: err=%v\n%s", err, out)
	}
	if _, _, err := runCmd(t, "graph", "-o", "svg", dir); err == nil {
		t.Fatal("unknown format accepted")
	}
	// cobra keeps flag values between runs of the same command.
	_, _, _ = runCmd(t, "graph", "-o", "text", dir)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
