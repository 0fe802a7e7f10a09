package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/kroscope/kroscope/test/graphs"
)

var omitGraph = graphs.RGD("omitter", "Omitter", "spec:\n  note: string | default=\"\"",
	graphs.ConfigMap("cm", "${schema.metadata.name}", `note: '${schema.spec.note == "" ? omit() : schema.spec.note}'`))

// TestValidateCELOmitFlag: omit() is rejected, naming the flag, until
// --enable-cel-omit is given; the commands that build graphs all take it.
func TestValidateCELOmitFlag(t *testing.T) {
	path := t.TempDir() + "/omit.yaml"
	writeFile(t, path, omitGraph)
	t.Cleanup(func() { // flags keep their values between runCmd calls
		if c, _, err := rootCmd.Find([]string{"validate"}); err == nil {
			_ = c.Flags().Set("enable-cel-omit", "false")
		}
	})
	_, stderr, err := runCmd(t, "validate", path)
	var ec interface{ ExitCode() int }
	if !errors.As(err, &ec) || ec.ExitCode() != 2 || !strings.Contains(stderr, "requires the CELOmitFunction feature gate") || !strings.Contains(stderr, "--enable-cel-omit") {
		t.Fatalf("without the flag: err=%v\n%s", err, stderr)
	}
	out, stderr, err := runCmd(t, "validate", "--enable-cel-omit", path)
	if err != nil || !strings.Contains(out, "ok  omitter") {
		t.Fatalf("with the flag: err=%v\n%s%s", err, out, stderr)
	}
	for _, cmd := range []string{"graph", "run"} {
		out, _, err := runCmd(t, cmd, "--help")
		if err != nil || !strings.Contains(out, "--enable-cel-omit") {
			t.Errorf("%s --help lacks --enable-cel-omit (err %v)", cmd, err)
		}
	}
	if f := rootCmd.Flags().Lookup("enable-cel-omit"); f == nil {
		t.Error("the TUI command lacks --enable-cel-omit")
	}
}
