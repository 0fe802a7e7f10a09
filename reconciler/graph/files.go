package graph

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// DefaultMaxFileSize is the largest definition file read (the biggest
// real-world RGDs are a few hundred KiB).
const DefaultMaxFileSize = 10 << 20

// MaxFileSizeFlag is the flag that sets Loader.MaxFileSize.
const MaxFileSizeFlag = "max-file-size"

// Loader reads definitions from files and folders that someone else may
// control: only regular files are read (a FIFO would block forever,
// /dev/zero never ends), each at most MaxFileSize bytes, and one bad path
// does not stop the others from being read.
type Loader struct {
	// MaxFileSize bounds each file; 0 means DefaultMaxFileSize.
	MaxFileSize int64
	// Warn receives paths that were skipped (FIFOs, devices, sockets) and
	// why; nil drops the warnings.
	Warn func(path, why string)
}

// LoadFiles reads definitions from YAML files and directories with the
// default Loader.
func LoadFiles(paths ...string) ([]*ResourceGraphDefinition, error) {
	return Loader{}.Load(paths...)
}

// Load reads definitions from YAML files and directories (recursively,
// *.yaml and *.yml; multi-document; symlinked folders are followed once).
// Documents of other kinds are skipped. Every file or folder that cannot be
// read, is too large or is malformed is an error naming it; the rest is
// still read.
func (l Loader) Load(paths ...string) ([]*ResourceGraphDefinition, error) {
	var out []*ResourceGraphDefinition
	var errs []error
	for _, p := range paths {
		files, err := l.yamlFiles(p)
		errs = append(errs, err)
		for _, f := range files {
			data, err := l.read(f)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if data == nil {
				continue // skipped with a warning
			}
			rgds, err := Parse(data, f)
			out = append(out, rgds...)
			if err != nil {
				errs = append(errs, err)
			}
		}
	}
	return out, errors.Join(errs...)
}

func (l Loader) warn(path, why string) {
	if l.Warn != nil {
		l.Warn(path, why)
	}
}

func (l Loader) maxSize() int64 {
	if l.MaxFileSize > 0 {
		return l.MaxFileSize
	}
	return DefaultMaxFileSize
}

// ReadFile reads one file within the loader's size limit (instance files
// are as untrusted as graphs); nil, nil when it is not a regular file.
func (l Loader) ReadFile(path string) ([]byte, error) { return l.read(path) }

// read returns a regular file's content; nil, nil when it is not a regular
// file (skipped with a warning).
func (l Loader) read(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, readError(path, err)
	}
	if !st.Mode().IsRegular() {
		l.warn(path, "skipped: "+fileKind(st.Mode())+", not a regular file")
		return nil, nil
	}
	max := l.maxSize()
	if st.Size() > max {
		return nil, fmt.Errorf("reading %s: %d bytes is larger than the limit of %d (raise it with --%s)", path, st.Size(), max, MaxFileSizeFlag)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, readError(path, err)
	}
	defer f.Close()
	// The file may grow after the Stat: read one byte past the limit.
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, readError(path, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("reading %s: larger than the limit of %d bytes (raise it with --%s)", path, max, MaxFileSizeFlag)
	}
	return data, nil
}

// fileKind names a non-regular file type for a warning.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeIrregular != 0:
		return "an irregular file"
	}
	return "not a file (" + m.Type().String() + ")"
}

// yamlFiles expands p: a file is returned as is (read checks its type), a
// directory is walked for *.yaml and *.yml files in lexical order. An
// unreadable folder is an error for that folder only; a symlink to a folder
// is followed unless that folder was walked already, so loops terminate.
func (l Loader) yamlFiles(p string) ([]string, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, readError(p, err)
	}
	if !st.IsDir() {
		if !definitionName(p) {
			l.warn(p, "skipped: not a .yaml, .yml or .json file")
			return nil, nil
		}
		return []string{p}, nil
	}
	w := &yamlWalk{seen: map[string]bool{}}
	w.dir(p)
	sort.Strings(w.files)
	return w.files, errors.Join(w.errs...)
}

// yamlWalk is what yamlFiles found so far; seen are the real paths of the
// folders walked.
type yamlWalk struct {
	files []string
	errs  []error
	seen  map[string]bool
}

// dir walks one folder (the one asked for, or one a symlink points to)
// unless it was walked already.
func (w *yamlWalk) dir(dir string) {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		if w.seen[real] {
			return
		}
		w.seen[real] = true
	}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		return w.entry(dir, path, d, err)
	})
	if err != nil {
		w.errs = append(w.errs, readError(dir, err))
	}
}

// entry is WalkDir's callback for the folder dir.
func (w *yamlWalk) entry(dir, path string, d fs.DirEntry, err error) error {
	if err != nil {
		w.errs = append(w.errs, readError(path, err))
		if d != nil && d.IsDir() {
			return fs.SkipDir
		}
		return nil
	}
	if d.IsDir() {
		if real, err := filepath.EvalSymlinks(path); err == nil && path != dir {
			if w.seen[real] {
				return fs.SkipDir
			}
			w.seen[real] = true
		}
		return nil
	}
	if d.Type()&fs.ModeSymlink != 0 {
		st, err := os.Stat(path)
		if err != nil {
			if isYAML(path) {
				w.errs = append(w.errs, readError(path, err))
			}
			return nil
		}
		if st.IsDir() {
			w.dir(path)
			return nil
		}
	}
	if isYAML(path) {
		w.files = append(w.files, path)
	}
	return nil
}

// ReadError is a path the Loader could not read (missing, or not
// readable): a problem with the paths given, not with a definition.
type ReadError struct {
	Path string
	Err  error
}

func (e *ReadError) Error() string { return "cannot read " + e.Path + ": " + e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }

// readError is a *ReadError for path; an fs.PathError's own path and
// operation are left out, so the path is named once.
func readError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		err = pe.Err
	}
	return &ReadError{Path: path, Err: err}
}

// definitionName reports whether a file named on the command line may hold
// definitions: YAML or JSON by its extension, or no extension at all (a
// shell's `examples/*` also names Go files and READMEs, which are skipped).
func definitionName(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml", ".json", "":
		return true
	}
	return false
}

func isYAML(path string) bool {
	return strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")
}
