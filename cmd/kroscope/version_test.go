package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestVersionCommand(t *testing.T) {
	old := version
	version = "v9.9.9"
	defer func() { version = old }()

	var out bytes.Buffer
	rootCmd.SetOut(&out)
	rootCmd.SetArgs([]string{"version"})
	if err := rootCmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "kroscope v9.9.9") {
		t.Fatalf("version text = %q", out.String())
	}

	out.Reset()
	rootCmd.SetArgs([]string{"version", "-o", "json"})
	if err := rootCmd.Execute(); err != nil {
		t.Fatal(err)
	}
	var b buildInfo
	if err := json.Unmarshal(out.Bytes(), &b); err != nil || b.Version != "v9.9.9" {
		t.Fatalf("version json = %q (%v)", out.String(), err)
	}

	rootCmd.SetArgs([]string{"version", "-o", "yaml"})
	if err := rootCmd.Execute(); err == nil {
		t.Fatal("an unknown output format must be an error")
	}
}
