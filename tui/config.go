package tui

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kroscope/kroscope/theme"
)

// Config is $XDG_CONFIG_HOME/kroscope/config.yaml:
//
//	theme: high-contrast      # auto, dark, light, high-contrast
//	ascii: false
//	keys:
//	  requeue: ["F5", "r"]    # action name → keys
//	  delete: ["ctrl+x"]
type Config struct {
	Theme string
	ASCII bool
	Keys  map[string][]string // normalised key names
}

// Problem is one thing wrong with a config file, where it is.
type Problem struct {
	File string
	Line int // 0 when the whole file is concerned
	Msg  string
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg)
	}
	return p.File + ": " + p.Msg
}

// DefaultConfigPath is $XDG_CONFIG_HOME/kroscope/config.yaml, falling back
// to the user's config directory.
func DefaultConfigPath() string {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		d, err := os.UserConfigDir()
		if err != nil {
			return ""
		}
		dir = d
	}
	return filepath.Join(dir, "kroscope", "config.yaml")
}

// LoadConfig reads a config file. A missing file is an empty config. Each
// bad entry is left out and reported with its line; the good ones apply, so
// a typo never stops kroscope.
func LoadConfig(path string) (Config, []Problem) {
	var c Config
	if path == "" {
		return c, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, []Problem{{File: path, Msg: "cannot read: " + unwrapPathError(err)}}
	}
	return parseConfig(path, data)
}

func unwrapPathError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// yamlLine finds the line in a YAML parser's error.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlParserErrors are the problems go.yaml.in/yaml/v3's parser (as
// opposed to its scanner) reports. Its error gives their line 0-based (it
// adds the missing 1 to scanner errors only; see parser.fail in its
// decode.go), so an unclosed [ on line 4 read "line 3", and one on line 1
// had no line at all. The list is parserc.go's, v3.0.5; the config tests
// fail if a new version changes it.
var yamlParserErrors = map[string]bool{
	"did not find expected ',' or ']'": true, "did not find expected ',' or '}'": true,
	"did not find expected '-' indicator": true, "did not find expected <document start>": true,
	"did not find expected <stream-start>": true, "did not find expected key": true,
	"did not find expected node content": true, "found duplicate %TAG directive": true,
	"found duplicate %YAML directive": true, "found incompatible YAML document": true,
	"found undefined tag handle": true,
}

// syntaxProblem is a YAML syntax error as a Problem on the line where it
// is. A problem found at the end of the file (an unclosed [) is put on its
// last line rather than on the empty one after it.
func syntaxProblem(path string, data []byte, err error) Problem {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	if yamlParserErrors[msg] {
		line = min(line+1, max(strings.Count(strings.TrimRight(string(data), "\n"), "\n")+1, 1))
	}
	return Problem{File: path, Line: line, Msg: "YAML syntax: " + msg}
}

func parseConfig(path string, data []byte) (Config, []Problem) {
	var c Config
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return c, []Problem{syntaxProblem(path, data, err)}
	}
	if len(doc.Content) == 0 {
		return c, nil // empty file
	}
	root := doc.Content[0]
	var probs []Problem
	var bad badFunc = func(n *yaml.Node, format string, args ...any) {
		probs = append(probs, Problem{File: path, Line: n.Line, Msg: fmt.Sprintf(format, args...)})
	}
	if root.Kind != yaml.MappingNode {
		bad(root, "want a mapping with theme, ascii and keys")
		return c, probs
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch k.Value {
		case "theme":
			if v.Kind != yaml.ScalarNode || !theme.Valid(v.Value) {
				bad(v, "theme: unknown theme %q (known: %s)", v.Value, strings.Join(theme.Names(), ", "))
				continue
			}
			c.Theme = v.Value
		case "ascii":
			var b bool
			if v.Kind != yaml.ScalarNode || v.Decode(&b) != nil {
				bad(v, "ascii: %q is not true or false", v.Value)
				continue
			}
			c.ASCII = b
		case "keys":
			if v.Kind != yaml.MappingNode {
				bad(v, "keys: want a mapping of action name to keys, e.g. requeue: [\"f5\", \"r\"]")
				continue
			}
			if good := parseKeys(v, bad); len(good) > 0 {
				c.Keys = good
			}
		default:
			bad(k, "%s: unknown setting (known: theme, ascii, keys)", k.Value)
		}
	}
	sort.SliceStable(probs, func(i, j int) bool { return probs[i].Line < probs[j].Line })
	return c, probs
}

// badFunc reports a problem at a node of the config file.
type badFunc func(n *yaml.Node, format string, args ...any)

// parseKeys reads the keys mapping (action name to a key or a list of
// keys) and returns the bindings that are valid and free of conflicts;
// every other one is reported on its action's line.
func parseKeys(v *yaml.Node, bad badFunc) map[string][]string {
	raw := map[string][]string{}
	lines := map[string]*yaml.Node{}
	for j := 0; j+1 < len(v.Content); j += 2 {
		an, kv := v.Content[j], v.Content[j+1]
		lines[an.Value] = an
		switch kv.Kind {
		case yaml.ScalarNode:
			raw[an.Value] = []string{kv.Value}
		case yaml.SequenceNode:
			ks := []string{}
			for _, e := range kv.Content {
				if e.Kind != yaml.ScalarNode {
					bad(e, "keys.%s: a key must be a string", an.Value)
					continue
				}
				ks = append(ks, e.Value)
			}
			raw[an.Value] = ks
		default:
			bad(kv, "keys.%s: want a list of keys", an.Value)
		}
	}
	good, errs := checkKeys(raw)
	for n, msg := range conflicts(good) {
		errs[n] = msg
		delete(good, n)
	}
	names := make([]string, 0, len(errs))
	for n := range errs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		bad(lines[n], "%s", errs[n])
	}
	return good
}

// CheckConfig reports every problem of a config file ("" is the default
// path); `kroscope config check` prints them.
func CheckConfig(path string) (string, []Problem) {
	if path == "" {
		path = DefaultConfigPath()
	}
	_, probs := LoadConfig(path)
	return path, probs
}

// ProblemsReport is every problem of a config file under a line that
// counts them ("3 problems in FILE:"), one problem a line, whole: what
// `kroscope config check` prints.
func ProblemsReport(file string, probs []Problem) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s in %s:\n", countProblems(len(probs)), file)
	for _, p := range probs {
		b.WriteString("  " + p.String() + "\n")
	}
	return b.String()
}

func countProblems(n int) string {
	if n == 1 {
		return "1 problem"
	}
	return fmt.Sprintf("%d problems", n)
}

// problemsFlash is the one flash line for a config's problems: the problem
// itself when there is one (cut, the line says which command has it
// whole), else their count (within 80 columns for the default file) and
// the command that lists them all. path is the --config file ("" for the
// default).
func problemsFlash(probs []Problem, path string) string {
	switch len(probs) {
	case 0:
		return ""
	case 1:
		return probs[0].String() + "; ignored"
	}
	return countProblems(len(probs)) + " in the config file, ignored: " + configCheckCommand(path) + " lists them"
}

// configCheckCommand is the command that lists the problems of the config
// file at path ("" for the default file): the --config given to the TUI
// must be given to the check too, or it checks another file.
func configCheckCommand(path string) string {
	if path == "" || path == DefaultConfigPath() {
		return "kroscope config check"
	}
	return "kroscope config check --config " + path
}
