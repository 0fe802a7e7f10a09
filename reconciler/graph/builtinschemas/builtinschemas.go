// Package builtinschemas holds the OpenAPI v3 schemas of the kinds a
// Kubernetes API server serves by itself (ConfigMap, Deployment, Service,
// Job, Ingress, Role...), as kube-apiserver KubernetesVersion publishes
// them, so that graphs can be type-checked without a cluster: a template
// field the kind does not have, or an expression of the wrong type for its
// field, is the build error it would be on a cluster. Kinds served by CRDs
// are not here; without a cluster they stay untyped.
//
// The documents are embedded gzipped, with descriptions left out; run
// `make builtin-schemas` to write them again from the API server the tests
// run (after the version in hack/assets.sh changes).
package builtinschemas

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"sync"

	"k8s.io/client-go/openapi"
)

// File is the embedded file's name, for the generator.
const File = "schemas.json.gz"

//go:embed schemas.json.gz
var embedded []byte

// Documents is the embedded file's content: the API server's version and,
// by OpenAPI v3 path (api/v1, apis/apps/v1...), each GroupVersion's
// document, holding components.schemas only.
type Documents struct {
	KubernetesVersion string                     `json:"kubernetesVersion"`
	Paths             map[string]json.RawMessage `json:"paths"`
}

var (
	once   sync.Once
	docs   Documents
	errDoc error
)

func load() (Documents, error) {
	once.Do(func() {
		zr, err := gzip.NewReader(bytes.NewReader(embedded))
		if err != nil {
			errDoc = fmt.Errorf("builtinschemas: %w", err)
			return
		}
		data, err := io.ReadAll(zr)
		if err != nil {
			errDoc = fmt.Errorf("builtinschemas: %w", err)
			return
		}
		if err := json.Unmarshal(data, &docs); err != nil {
			errDoc = fmt.Errorf("builtinschemas: %w", err)
		}
	})
	return docs, errDoc
}

// KubernetesVersion is the version of the API server the schemas were read
// from ("" when the embedded file is unreadable).
func KubernetesVersion() string {
	d, _ := load()
	return d.KubernetesVersion
}

// GroupVersions lists the embedded OpenAPI paths, sorted.
func GroupVersions() []string {
	d, _ := load()
	out := make([]string, 0, len(d.Paths))
	for p := range d.Paths {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Client serves the embedded documents as an API server's OpenAPI v3
// index does, for graph.NewClientSchemaResolver.
func Client() openapi.Client { return client{} }

type client struct{}

func (client) Paths() (map[string]openapi.GroupVersion, error) {
	d, err := load()
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
