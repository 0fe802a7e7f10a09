// Command testjson reads `go test -json` on standard input and prints what a
// plain `go test` prints (a line per package, and the output of the tests
// that failed), then a closing "N passed, N failed, N skipped" line and
// every skip with its reason.
//
// With CI=true it also fails the run when a test skipped for a reason that
// skips.txt (beside this file) does not allow: a missing binary or data
// folder must never pass CI by skipping. Written here rather than taken from
// gotestsum because the skip policy is this project's own; it is small.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json's TestEvent).
type event struct {
	Time    time.Time
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

type key struct{ pkg, test string }

type skip struct {
	key
	reason string
}

// run holds what the stream has said so far.
type run struct {
	out                    io.Writer
	buf                    map[key][]string
	passed, failed, skipN  int
	skips                  []skip
	failedPkgs, failedList []string
}

func main() {
	ci := os.Getenv("CI") == "true"
	allowed, err := loadAllowed(skipsPath(os.Getenv("TESTJSON_SKIPS"), ci))
	if err != nil {
		fmt.Fprintln(os.Stderr, "testjson:", err)
		os.Exit(2)
	}
	r := &run{out: os.Stdout, buf: map[key][]string{}}
	if err := r.read(os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "testjson:", err)
		os.Exit(2)
	}
	os.Exit(r.report(allowed, ci))
}

// skipsPath is the allow-list to read: TESTJSON_SKIPS (env) names another
// one outside CI, for trying a list out; under CI=true the committed
// skips.txt is the only one ("" here), so that no environment can widen
// what CI lets skip.
func skipsPath(env string, ci bool) string {
	if ci {
		if env != "" {
			fmt.Fprintln(os.Stderr, "testjson: TESTJSON_SKIPS is ignored under CI=true: hack/testjson/skips.txt is the allow-list")
		}
		return ""
	}
	return env
}

func (r *run) read(in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintln(r.out, string(line)) // build errors and other plain text
			continue
		}
		r.handle(e)
	}
	return sc.Err()
}

func (r *run) handle(e event) {
	k := key{e.Package, e.Test}
	switch e.Action {
	case "output", "build-output":
		r.buf[k] = append(r.buf[k], e.Output)
		if e.Test == "" && isPackageLine(e.Output) {
			fmt.Fprint(r.out, e.Output)
		}
	case "pass":
		if e.Test != "" {
			r.passed++
		}
		delete(r.buf, k)
	case "skip":
		if e.Test != "" {
			r.skipN++
			r.skips = append(r.skips, skip{k, skipReason(r.buf[k])})
		}
		delete(r.buf, k)
	case "fail":
		r.fail(k)
	}
}

// isPackageLine is a package's closing line as plain `go test` prints it.
func isPackageLine(s string) bool {
	for _, p := range []string{"ok  \t", "FAIL\t", "?   \t", "FAIL ", "panic:"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func (r *run) fail(k key) {
	if k.test == "" {
		r.failedPkgs = append(r.failedPkgs, k.pkg)
		// A package that failed outside any test (a build error, a
		// panic in TestMain): its own output says why.
		for _, l := range r.buf[k] {
			if !isPackageLine(l) {
				fmt.Fprint(r.out, l)
			}
		}
		delete(r.buf, k)
		return
	}
	r.failed++
	r.failedList = append(r.failedList, k.pkg+" "+k.test)
	for _, l := range r.buf[k] {
		fmt.Fprint(r.out, l)
	}
	delete(r.buf, k)
}

// skipReason is what the test's skip said: the last entry it logged
// (t.Skip logs its message, then stops the test), with the lines that
// continue it, without go test's own "=== RUN" and "--- SKIP" lines and
// without what the test logged before. Matching the whole log would let a
// test that merely logged an allowed phrase earlier skip for any reason.
func skipReason(lines []string) string {
	var last []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		if logPrefix.MatchString(t) || last == nil {
			last = last[:0]
		}
		last = append(last, logPrefix.ReplaceAllString(t, ""))
	}
	return strings.Join(last, " ")
}

// logPrefix is the "file_test.go:12: " that t.Log puts before each line.
var logPrefix = regexp.MustCompile(`^[\w.-]+\.go:\d+: `)

func (r *run) report(allowed []*regexp.Regexp, ci bool) int {
	sort.Slice(r.skips, func(i, j int) bool { return r.skips[i].pkg+r.skips[i].test < r.skips[j].pkg+r.skips[j].test })
	var refused []skip
	if len(r.skips) > 0 {
		fmt.Fprintln(r.out, "skipped:")
	}
	for _, s := range r.skips {
		fmt.Fprintf(r.out, "  %s %s: %s\n", s.pkg, s.test, s.reason)
		if ci && !matchesAny(allowed, s.reason) {
			refused = append(refused, s)
		}
	}
	for _, f := range r.failedList {
		fmt.Fprintln(r.out, "failed:", f)
	}
	for _, s := range refused {
		fmt.Fprintf(r.out, "not allowed to skip in CI: %s %s: %s\n", s.pkg, s.test, s.reason)
	}
	fmt.Fprintf(r.out, "%d passed, %d failed, %d skipped\n", r.passed, r.failed, r.skipN)
	if r.failed > 0 || len(r.failedPkgs) > 0 || len(refused) > 0 {
		if len(refused) > 0 {
			fmt.Fprintf(r.out, "%d skips are not allowed in CI (hack/testjson/skips.txt lists those that are)\n", len(refused))
		}
		return 1
	}
	return 0
}

func matchesAny(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}
