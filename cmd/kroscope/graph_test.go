package main

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kroscope/kroscope/test/graphs"
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
		resetHelp(rootCmd)
	}()
	err = rootCmd.Execute()
	return out.String(), errOut.String(), err
}

// resetHelp clears --help on every command: cobra keeps a flag's value
// between Execute calls, so one "CMD --help" would turn every later run of
// CMD into a help page.
// resetHelp puts every flag a command line set back to its default, in
// every command (help included): flags live as long as rootCmd, so one
// test's --kubeconfig would otherwise be the next test's.
func resetHelp(c *cobra.Command) {
	reset := func(f *pflag.Flag) {
		if !f.Changed {
			return
		}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			_ = sv.Replace(nil)
		} else {
			_ = f.Value.Set(f.DefValue)
		}
		f.Changed = false
	}
	c.Flags().VisitAll(reset)
	c.PersistentFlags().VisitAll(reset)
	for _, sub := range c.Commands() {
		resetHelp(sub)
	}
}

const invalidDir = "../../reconciler/graph/testdata/invalid"

func TestGraphNoDefinitions(t *testing.T) {
	path := t.TempDir() + "/cm.yaml"
	writeFile(t, path, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")
	_, _, err := runCmd(t, "graph", path)
	if err == nil || !strings.Contains(err.Error(), "no ResourceGraphDefinition found") {
		t.Fatalf("err = %v", err)
	}
	// A file without definitions (an instances file, say) fails validation
	// like an invalid one: exit 2 (issue 27; see loadOutcome.result).
	if exitCode(err) != 2 {
		t.Fatalf("no definitions: exit %d, want 2 (a validation failure): %v", exitCode(err), err)
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
	writeFile(t, dir, graphs.RGD("demo", "Demo", "spec:\n  name: string",
		graphs.ConfigMap("config", "${schema.spec.name}", ""),
		graphs.Template("pod", "v1", "Pod", "name: ${config.metadata.name}", "")))
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

// TestValidateWarnsAboutKroscopeExtensions: validate succeeds on a graph
// that uses kroscope's extensions and warns about each, naming the file,
// resource id and field.
func TestValidateWarnsAboutKroscopeExtensions(t *testing.T) {
	path := t.TempDir() + "/ext.yaml"
	doc := graphs.RGD("ext", "Ext", "spec:\n  count: integer | default=1\nvalidation:\n- expression: \"!has(self.count) || self.count < 5\"",
		graphs.ConfigMap("config", "x", "v: ${string(math.greatest(1, schema.spec.count))}"))
	writeFile(t, path, strings.Replace(doc, "\nspec:\n", "\nspec:\n  defaultServiceAccounts:\n    \"*\": reconciler\n", 1))
	out, stderr, err := runCmd(t, "validate", path)
	if err != nil {
		t.Fatalf("validate failed on warnings only: %v\n%s", err, stderr)
	}
	for _, want := range []string{
		"warning: " + path + ": ext: spec.schema.validation[0]: kro has no spec.schema.validation",
		"warning: " + path + ": ext: spec.defaultServiceAccounts: kro has no spec.defaultServiceAccounts",
		"warning: " + path + ": ext: resource config: spec.resources[0].template.data.v: kro has no CEL function math.greatest",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if !strings.Contains(out, "ok  ext  Ext") || !strings.Contains(out, "3 kro warning(s)") {
		t.Errorf("stdout:\n%s", out)
	}
}

// TestValidateTypeChecksBuiltinKinds: without a cluster, validate checks a
// Deployment's template against the embedded Kubernetes schemas, as kro
// does on a cluster; --builtin-schemas=false leaves it untyped.
func TestValidateTypeChecksBuiltinKinds(t *testing.T) {
	file := t.TempDir() + "/app.yaml"
	writeFile(t, file, graphs.RGD("app", "App", "spec:\n  name: string",
		graphs.Template("deployment", "apps/v1", "Deployment", "name: ${schema.spec.name}",
			"spec:\n  replicas: ${schema.spec.name}\n"+graphs.Indent(graphs.Workload("web", "containers:\n- name: web\n  image: nginx"), 2))))
	_, stderr, err := runCmd(t, "validate", file)
	var ec interface{ ExitCode() int }
	if !errors.As(err, &ec) || ec.ExitCode() != 2 {
		t.Fatalf("err = %v, want exit code 2; stderr:\n%s", err, stderr)
	}
	for _, want := range []string{file + ": app: resource deployment: spec.resources[0].template.spec.replicas", "expects integer", "${schema.spec.name} returns string"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	// Flags keep their values between runs of the shared command: put the
	// default back for the tests after this one.
	defer runCmd(t, "validate", "--builtin-schemas=true", file)
	if out, stderr, err := runCmd(t, "validate", "--builtin-schemas=false", file); err != nil || !strings.Contains(out, "ok  app") {
		t.Errorf("--builtin-schemas=false: err %v, stdout %q, stderr %q", err, out, stderr)
	}
}

// validate says "1 resource", not "1 resources" (the runaway example has one).
func TestValidateCountsInWords(t *testing.T) {
	stdout, _, err := runCmd(t, "validate", "../../examples/runaway/rgd.yaml", "../../examples/webapp/rgd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "(1 resource)") || !strings.Contains(stdout, "(4 resources)") {
		t.Errorf("stdout:\n%s", stdout)
	}
}
