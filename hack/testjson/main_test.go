package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

const stream = `{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"pass","Package":"p","Test":"TestA"}
{"Action":"run","Package":"p","Test":"TestB"}
{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:9: missing prerequisite: kro's controller not found\n"}
{"Action":"output","Package":"p","Test":"TestB","Output":"--- SKIP: TestB (0.00s)\n"}
{"Action":"skip","Package":"p","Test":"TestB"}
{"Action":"run","Package":"p","Test":"TestD"}
{"Action":"output","Package":"p","Test":"TestD","Output":"    d_test.go:3: platform lacks: nothing, this is only logged\n"}
{"Action":"output","Package":"p","Test":"TestD","Output":"    d_test.go:4: missing prerequisite: kubectl not found\n"}
{"Action":"output","Package":"p","Test":"TestD","Output":"        at bin/k8s\n"}
{"Action":"output","Package":"p","Test":"TestD","Output":"--- SKIP: TestD (0.00s)\n"}
{"Action":"skip","Package":"p","Test":"TestD"}
{"Action":"run","Package":"p","Test":"TestC"}
{"Action":"output","Package":"p","Test":"TestC","Output":"    c_test.go:3: platform lacks: root\n"}
{"Action":"skip","Package":"p","Test":"TestC"}
{"Action":"output","Package":"p","Output":"ok  \tp\t0.1s\n"}
{"Action":"pass","Package":"p"}
`

func TestReport(t *testing.T) {
	allowed := []*regexp.Regexp{regexp.MustCompile(`^platform lacks:`)}
	for _, tt := range []struct {
		name     string
		in       string
		ci       bool
		wantCode int
		want     []string
	}{
		{"outside CI skips pass", stream, false, 0, []string{"ok  \tp\t0.1s", "1 passed, 0 failed, 3 skipped", "p TestB: missing prerequisite",
			"p TestD: missing prerequisite: kubectl not found at bin/k8s"}},
		// TestD logged an allowed phrase before it skipped for a reason
		// that is not: the skip line decides.
		{"in CI an unlisted skip fails", stream, true, 1, []string{"not allowed to skip in CI: p TestB", "not allowed to skip in CI: p TestD", "2 skips are not allowed"}},
		{"a failed test fails and shows its output", `{"Action":"output","Package":"p","Test":"TestF","Output":"    f_test.go:1: boom\n"}
{"Action":"fail","Package":"p","Test":"TestF"}
{"Action":"output","Package":"p","Output":"FAIL\tp\t0.1s\n"}
{"Action":"fail","Package":"p"}
`, true, 1, []string{"boom", "FAIL\tp", "failed: p TestF", "0 passed, 1 failed, 0 skipped"}},
		{"a build error is printed", "# p\n./x.go:1: syntax error\n" + `{"Action":"fail","Package":"p"}` + "\n", false, 1, []string{"syntax error"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			r := &run{out: &out, buf: map[key][]string{}}
			if err := r.read(strings.NewReader(tt.in)); err != nil {
				t.Fatal(err)
			}
			if code := r.report(allowed, tt.ci); code != tt.wantCode {
				t.Errorf("exit %d, want %d\n%s", code, tt.wantCode, out.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}

func TestSkipsFileCompiles(t *testing.T) {
	res, err := loadAllowed("skips.txt")
	if err != nil || len(res) == 0 {
		t.Fatalf("skips.txt: %d patterns, %v", len(res), err)
	}
	if matchesAny(res, "missing prerequisite: kro's controller not found") {
		t.Error("skips.txt allows a missing prerequisite")
	}
}

func TestSkipsPathFixedUnderCI(t *testing.T) {
	if got := skipsPath("/tmp/anything.txt", true); got != "" {
		t.Errorf("under CI=true TESTJSON_SKIPS replaced the allow-list with %q", got)
	}
	if got := skipsPath("/tmp/anything.txt", false); got != "/tmp/anything.txt" {
		t.Errorf("outside CI TESTJSON_SKIPS = %q, want it used", got)
	}
}
