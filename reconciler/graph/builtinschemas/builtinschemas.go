// Package builtinschemas holds the OpenAPI v3 schemas of the kinds a
// Kubernetes API server serves by itself (ConfigMap, Deployment, Service,
// Job, Ingress, Role...), for every Kubernetes minor kroscope embeds, as
// each release publishes them, so that graphs can be type-checked without a
// cluster: a template field the kind does not have, or an expression of the
// wrong type for its field, is the build error it would be on a cluster of
// that minor. Kinds served by CRDs are not here; without a cluster they
// stay untyped.
//
// The documents are embedded gzipped, one file per minor, with descriptions
// left out; run `make builtin-schemas` to write them again from the
// k8s.io/kubernetes module versions hack/k8s pins (after one changes or a
// minor is added there).
package builtinschemas

import (
	"bytes"
	"compress/gzip"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"k8s.io/client-go/openapi"
)

// Dir is the embedded files' folder, for the generator: one
// <minor>.json.gz (1.37.json.gz) per Kubernetes minor.
const Dir = "schemas"

//go:embed schemas/*.json.gz
var embedded embed.FS

// Documents is one embedded file's content: the Kubernetes version and, by
// OpenAPI v3 path (api/v1, apis/apps/v1...), each GroupVersion's document,
// holding components.schemas only.
type Documents struct {
	KubernetesVersion string                     `json:"kubernetesVersion"`
	Paths             map[string]json.RawMessage `json:"paths"`
}

// Schemas are one minor's documents.
type Schemas struct {
	minor string
	once  sync.Once
	docs  Documents
	err   error
}

var minors = sync.OnceValue(func() map[string]*Schemas {
	entries, _ := embedded.ReadDir(Dir)
	out := map[string]*Schemas{}
	for _, e := range entries {
		if m, ok := strings.CutSuffix(e.Name(), ".json.gz"); ok {
			out[m] = &Schemas{minor: m}
		}
	}
	return out
})

// Versions lists the embedded minors ("1.35", "1.36", ...), oldest first.
func Versions() []string {
	out := make([]string, 0, len(minors()))
	for m := range minors() {
		out = append(out, m)
	}
	slices.SortFunc(out, compareMinors)
	return out
}

// Newest is the newest embedded minor: what validate and render type
// against unless told otherwise.
func Newest() string {
	v := Versions()
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

func compareMinors(a, b string) int {
	minor := func(s string) int {
		_, m, _ := strings.Cut(s, ".")
		n, _ := strconv.Atoi(m)
		return n
	}
	return minor(a) - minor(b)
}

// For returns the schemas of a Kubernetes minor, given as 1.35, v1.35 or a
// full version (v1.35.4: its minor's schemas). A minor kroscope does not
// embed is an error naming it and the ones embedded.
func For(version string) (*Schemas, error) {
	v := strings.TrimPrefix(strings.TrimSpace(version), "v")
	parts := strings.Split(v, ".")
	if len(parts) < 2 || len(parts) > 3 || parts[0] != "1" {
		return nil, fmt.Errorf("Kubernetes version %q: want a minor such as %s", version, Newest())
	}
	for _, p := range parts[1:] {
		if _, err := strconv.Atoi(p); err != nil {
			return nil, fmt.Errorf("Kubernetes version %q: want a minor such as %s", version, Newest())
		}
	}
	s, ok := minors()[parts[0]+"."+parts[1]]
	if !ok {
		return nil, fmt.Errorf("Kubernetes %s: kroscope embeds the schemas of %s only (use a cluster of that version instead: its own API is typed against)", parts[0]+"."+parts[1], strings.Join(Versions(), ", "))
	}
	return s, nil
}

// Default is the newest minor's schemas.
func Default() *Schemas {
	s, err := For(Newest())
	if err != nil {
		panic("builtinschemas: no schemas embedded")
	}
	return s
}

func (s *Schemas) load() (Documents, error) {
	s.once.Do(func() {
		s.err = s.read()
	})
	return s.docs, s.err
}

func (s *Schemas) read() error {
	raw, err := embedded.ReadFile(path.Join(Dir, s.minor+".json.gz"))
	if err != nil {
		return fmt.Errorf("builtinschemas %s: %w", s.minor, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("builtinschemas %s: %w", s.minor, err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return fmt.Errorf("builtinschemas %s: %w", s.minor, err)
	}
	if err := json.Unmarshal(data, &s.docs); err != nil {
		return fmt.Errorf("builtinschemas %s: %w", s.minor, err)
	}
	return nil
}

// Minor is the Kubernetes minor ("1.37").
func (s *Schemas) Minor() string { return s.minor }

// KubernetesVersion is the release the schemas were read from (v1.37.2;
// "" when the embedded file is unreadable).
func (s *Schemas) KubernetesVersion() string {
	d, _ := s.load()
	return d.KubernetesVersion
}

// GroupVersions lists the OpenAPI paths, sorted.
func (s *Schemas) GroupVersions() []string {
	d, _ := s.load()
	out := make([]string, 0, len(d.Paths))
	for p := range d.Paths {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Client serves the documents as an API server's OpenAPI v3 index does,
// for graph.NewClientSchemaResolver.
func (s *Schemas) Client() openapi.Client { return client{s} }

// KubernetesVersion, GroupVersions and Client are the newest minor's.
func KubernetesVersion() string { return Default().KubernetesVersion() }
func GroupVersions() []string   { return Default().GroupVersions() }
func Client() openapi.Client    { return Default().Client() }

type client struct{ s *Schemas }

func (c client) Paths() (map[string]openapi.GroupVersion, error) {
	d, err := c.s.load()
	if err != nil {
		return nil, err
	}
	out := make(map[string]openapi.GroupVersion, len(d.Paths))
	for p, doc := range d.Paths {
		out[p] = groupVersion{path: p, doc: doc, version: d.KubernetesVersion}
	}
	return out, nil
}

type groupVersion struct {
	path, version string
	doc           json.RawMessage
}

func (g groupVersion) Schema(contentType string) ([]byte, error) {
	if contentType != "application/json" {
		return nil, fmt.Errorf("builtinschemas: %s: only application/json, not %q", g.path, contentType)
	}
	return g.doc, nil
}

// ServerRelativeURL identifies the document, as the API server's hash does.
func (g groupVersion) ServerRelativeURL() string {
	return "/openapi/v3/" + g.path + "?builtin=" + g.version
}
