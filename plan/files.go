package plan

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kroscope/kroscope/reconciler/graph"
)

// ReadObjects reads the objects of YAML (or JSON) files, one per document,
// each file within maxSize bytes. Every object needs apiVersion, kind and
// metadata.name; an error names the file and the document.
func ReadObjects(paths []string, maxSize int64) ([]*unstructured.Unstructured, error) {
	l := graph.Loader{MaxFileSize: maxSize}
	var out []*unstructured.Unstructured
	for _, path := range paths {
		data, err := l.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if data == nil {
			return nil, fmt.Errorf("%s: not a regular file", path)
		}
		dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for doc := 1; ; doc++ {
			var obj map[string]any
			err := dec.Decode(&obj)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("%s: document %d: %w", path, doc, err)
			}
			if obj == nil {
				continue
			}
			u := &unstructured.Unstructured{Object: obj}
			if u.GetAPIVersion() == "" || u.GetKind() == "" || u.GetName() == "" {
				return nil, fmt.Errorf("%s: document %d: an instance needs apiVersion, kind and metadata.name", path, doc)
			}
			out = append(out, u)
		}
	}
	return out, nil
}
