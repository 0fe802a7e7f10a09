package graph

import (
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
)

// LabelSelector reads the metadata.selector of a rendered external
// collection and converts it; the error names the path.
func LabelSelector(rendered *unstructured.Unstructured) (labels.Selector, error) {
	raw, _, _ := unstructured.NestedFieldNoCopy(rendered.Object, "metadata", "selector")
	data, err := json.Marshal(raw)
	if err != nil {
		return nil, fmt.Errorf("metadata.selector: %w", err)
	}
	var ls metav1.LabelSelector
	if err := json.Unmarshal(data, &ls); err != nil {
		return nil, fmt.Errorf("metadata.selector: %w", err)
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return nil, fmt.Errorf("metadata.selector: %w", err)
	}
	return sel, nil
}

// StaticSelector is an external collection's selector when it holds no
// ${...} (known before any instance renders), as a label selector string;
// ok is false for a templated or invalid one, or another kind of resource.
func (r *Resource) StaticSelector() (selector string, ok bool) {
	if !r.ExternalCollection {
		return "", false
	}
	for _, f := range r.Fields {
		if strings.HasPrefix(f.Path, "metadata.selector") {
			return "", false
		}
	}
	sel, err := LabelSelector(&unstructured.Unstructured{Object: r.Template})
	if err != nil {
		return "", false
	}
	return sel.String(), true
}

// StaticNamespace is the template's metadata.namespace when it holds no
// ${...}; "" when unset or templated (templated reports ok false).
func (r *Resource) StaticNamespace() (ns string, ok bool) {
	for _, f := range r.Fields {
		if f.Path == "metadata.namespace" {
			return "", false
		}
	}
	md, _ := r.Template["metadata"].(map[string]any)
	ns, _ = md["namespace"].(string)
	return ns, true
}
