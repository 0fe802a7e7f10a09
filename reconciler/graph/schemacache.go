package graph

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/openapi"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/utils/lru"
)

// CachedSchemaResolver reads kinds' schemas from the API server's OpenAPI
// v3 documents, keeping the parsed document of each GroupVersion: a
// process serving many graphs over the same kinds fetches and parses
// apps/v1 (megabytes) once, not once per graph. A document is fetched again
// when the server publishes a new one (its URL carries the content hash,
// so a changed CRD is seen at the next build). The documents are kept in
// an LRU, so kinds no graph uses any more are dropped.
//
// The schemas it returns are shared: callers must not change them.
type CachedSchemaResolver struct {
	discovery discovery.DiscoveryInterface
	client    openapi.Client // without discovery: a fixed index
	docs      *lru.Cache     // GroupVersion string -> *openAPIDoc

	mu              sync.Mutex
	lastInvalidated time.Time

	fetches atomic.Int64
}

// openAPIDoc is one GroupVersion's OpenAPI document, parsed once.
type openAPIDoc struct {
	url  string // ServerRelativeURL: the document's identity, hash included
	once sync.Once
	err  error
	defs map[string]*spec.Schema // components.schemas

	mu    sync.Mutex
	kinds map[schema.GroupVersionKind]*spec.Schema // resolved, refs inlined
}

// NewCachedSchemaResolver keeps up to size GroupVersion documents (64 when
// size <= 0).
func NewCachedSchemaResolver(d discovery.DiscoveryInterface, size int) *CachedSchemaResolver {
	if size <= 0 {
		size = 64
	}
	return &CachedSchemaResolver{discovery: d, docs: lru.New(size)}
}

// NewClientSchemaResolver reads schemas from a fixed OpenAPI v3 index, such
// as builtinschemas.Client() (no cluster).
func NewClientSchemaResolver(client openapi.Client, size int) *CachedSchemaResolver {
	c := NewCachedSchemaResolver(nil, size)
	c.client = client
	return c
}

// Fetches is how many GroupVersion documents were fetched so far.
func (c *CachedSchemaResolver) Fetches() int64 { return c.fetches.Load() }

// rediscoverEvery bounds how often a GroupVersion missing from a cached
// discovery client makes it forget what it cached (a CRD created since).
const rediscoverEvery = 5 * time.Second

// ResolveSchema returns the schema of gvk with every $ref inlined.
func (c *CachedSchemaResolver) ResolveSchema(gvk schema.GroupVersionKind) (*spec.Schema, error) {
	gv, err := c.groupVersion(gvk.GroupVersion())
	if err != nil {
		return nil, err
	}
	key := gvk.GroupVersion().String()
	url := gv.ServerRelativeURL()
	var doc *openAPIDoc
	if v, ok := c.docs.Get(key); ok && v.(*openAPIDoc).url == url {
		doc = v.(*openAPIDoc)
	} else {
		doc = &openAPIDoc{url: url, kinds: map[schema.GroupVersionKind]*spec.Schema{}}
		c.docs.Add(key, doc)
	}
	doc.once.Do(func() { doc.err = c.fetch(doc, gv) })
	if doc.err != nil {
		c.docs.Remove(key) // tried again by the next build
		return nil, fmt.Errorf("OpenAPI of %s: %w", key, doc.err)
	}
	return doc.resolve(gvk)
}

// groupVersion finds gv's document in the server's OpenAPI index. A cached
// discovery client may not list a GroupVersion created since it filled its
// cache; it is asked to forget, at most every rediscoverEvery.
func (c *CachedSchemaResolver) groupVersion(gv schema.GroupVersion) (openapi.GroupVersion, error) {
	path := "apis/" + gv.Group + "/" + gv.Version
	if gv.Group == "" {
		path = "api/" + gv.Version
	}
	for attempt := 0; ; attempt++ {
		client := c.client
		if c.discovery != nil {
			client = c.discovery.OpenAPIV3()
		}
		if client == nil { // a discovery that serves no OpenAPI v3
			return nil, fmt.Errorf("group version %q: no OpenAPI: %w", gv, resolver.ErrSchemaNotFound)
		}
		paths, err := client.Paths()
		if err != nil {
			return nil, err
		}
		if p, ok := paths[path]; ok {
			return p, nil
		}
		cached, isCached := c.discovery.(discovery.CachedDiscoveryInterface)
		if attempt > 0 || !isCached || !c.mayInvalidate() {
			return nil, fmt.Errorf("cannot resolve group version %q: %w", gv, resolver.ErrSchemaNotFound)
		}
		cached.Invalidate()
	}
}

func (c *CachedSchemaResolver) mayInvalidate() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(c.lastInvalidated) < rediscoverEvery {
		return false
	}
	c.lastInvalidated = time.Now()
	return true
}

func (c *CachedSchemaResolver) fetch(doc *openAPIDoc, gv openapi.GroupVersion) error {
	c.fetches.Add(1)
	b, err := gv.Schema(runtime.ContentTypeJSON)
	if err != nil {
		return err
	}
	var parsed struct {
		Components struct {
			Schemas map[string]*spec.Schema `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(b, &parsed); err != nil {
		return err
	}
	doc.defs = parsed.Components.Schemas
	return nil
}

const componentRefPrefix = "#/components/schemas/"

// resolve finds the definition that declares gvk
// (x-kubernetes-group-version-kind) and inlines its references.
func (d *openAPIDoc) resolve(gvk schema.GroupVersionKind) (*spec.Schema, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if s, ok := d.kinds[gvk]; ok {
		return s, nil
	}
	ref := ""
	for name, s := range d.defs {
		var gvks []schema.GroupVersionKind
		if err := s.Extensions.GetObject("x-kubernetes-group-version-kind", &gvks); err != nil {
			return nil, fmt.Errorf("OpenAPI definition %s: %w", name, err)
		}
		for _, g := range gvks {
			if g == gvk {
				ref = name
			}
		}
	}
	if ref == "" {
		return nil, fmt.Errorf("cannot resolve group version kind %q: %w", gvk, resolver.ErrSchemaNotFound)
	}
	s, err := resolver.PopulateRefs(func(r string) (*spec.Schema, bool) {
		s, ok := d.defs[strings.TrimPrefix(r, componentRefPrefix)]
		return s, ok
	}, ref)
	if err != nil {
		return nil, err
	}
	d.kinds[gvk] = s
	return s, nil
}
