package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// loadAllowed reads the skip reasons CI accepts: one regular expression a
// line, "#" starting a comment (the why). path "" is hack/testjson/skips.txt
// from the repository's top folder, where make runs it.
func loadAllowed(path string) ([]*regexp.Regexp, error) {
	if path == "" {
		path = filepath.Join("hack", "testjson", "skips.txt")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []*regexp.Regexp
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		re, err := regexp.Compile(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, n, err)
		}
		out = append(out, re)
	}
	return out, sc.Err()
}
