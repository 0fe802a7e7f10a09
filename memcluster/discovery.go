package memcluster

import (
	"errors"
	"sort"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/openapi"
	restclient "k8s.io/client-go/rest"

	"github.com/kroscope/kroscope/reconciler/graph/builtinschemas"
)

// Discovery returns a discovery client that lists what the cluster serves
// right now (it is always fresh: there is nothing to cache).
func (c *Cluster) Discovery() discovery.CachedDiscoveryInterface { return discoveryClient{c} }

type discoveryClient struct{ c *Cluster }

var _ discovery.CachedDiscoveryInterface = discoveryClient{}

var errNoOpenAPI = errors.New("the demo cluster serves no OpenAPI v2 document")

func (d discoveryClient) Fresh() bool                              { return true }
func (d discoveryClient) Invalidate()                              {}
func (d discoveryClient) RESTClient() restclient.Interface         { return nil }
func (d discoveryClient) WithLegacy() discovery.DiscoveryInterface { return d }

func (d discoveryClient) OpenAPISchema() (*openapi_v2.Document, error) { return nil, errNoOpenAPI }

// OpenAPIV3 serves the built-in kinds' schemas kroscope embeds, so graphs
// are typed in the demo as on a cluster (instance kinds stay untyped).
func (d discoveryClient) OpenAPIV3() openapi.Client { return builtinschemas.Client() }

func (d discoveryClient) ServerVersion() (*version.Info, error) {
	return &version.Info{Major: "1", Minor: "34", GitVersion: "v1.34.4-kroscope-demo", Platform: "in-memory"}, nil
}

// resources lists every served resource by group version, with its status
// subresource.
func (d discoveryClient) resources() map[schema.GroupVersion]*metav1.APIResourceList {
	d.c.mu.Lock()
	defer d.c.mu.Unlock()
	out := map[schema.GroupVersion]*metav1.APIResourceList{}
	verbs := metav1.Verbs{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
	for _, k := range d.c.kinds {
		gv := k.gvr.GroupVersion()
		l := out[gv]
		if l == nil {
			l = &metav1.APIResourceList{GroupVersion: gv.String()}
			out[gv] = l
		}
		l.APIResources = append(l.APIResources, metav1.APIResource{
			Name: k.gvr.Resource, SingularName: lower(k.gvk.Kind), Namespaced: k.namespaced, Kind: k.gvk.Kind, Verbs: verbs,
		})
		if k.status {
			l.APIResources = append(l.APIResources, metav1.APIResource{
				Name: k.gvr.Resource + "/status", Namespaced: k.namespaced, Kind: k.gvk.Kind, Verbs: metav1.Verbs{"get", "patch", "update"},
			})
		}
	}
	for _, l := range out {
		sort.Slice(l.APIResources, func(i, j int) bool { return l.APIResources[i].Name < l.APIResources[j].Name })
	}
	return out
}

func (d discoveryClient) ServerResourcesForGroupVersion(groupVersion string) (*metav1.APIResourceList, error) {
	gv, err := schema.ParseGroupVersion(groupVersion)
	if err != nil {
		return nil, err
	}
	if l, ok := d.resources()[gv]; ok {
		return l, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: gv.Group}, gv.Version)
}

func (d discoveryClient) ServerGroups() (*metav1.APIGroupList, error) {
	byGroup := map[string]*metav1.APIGroup{}
	for gv := range d.resources() {
		g := byGroup[gv.Group]
		if g == nil {
			g = &metav1.APIGroup{Name: gv.Group}
			byGroup[gv.Group] = g
		}
		v := metav1.GroupVersionForDiscovery{GroupVersion: gv.String(), Version: gv.Version}
		g.Versions = append(g.Versions, v)
		g.PreferredVersion = v
	}
	out := &metav1.APIGroupList{}
	for _, g := range byGroup {
		out.Groups = append(out.Groups, *g)
	}
	sort.Slice(out.Groups, func(i, j int) bool { return out.Groups[i].Name < out.Groups[j].Name })
	return out, nil
}

func (d discoveryClient) ServerGroupsAndResources() ([]*metav1.APIGroup, []*metav1.APIResourceList, error) {
	gl, _ := d.ServerGroups()
	groups := make([]*metav1.APIGroup, len(gl.Groups))
	for i := range gl.Groups {
		groups[i] = &gl.Groups[i]
	}
	var lists []*metav1.APIResourceList
	for _, l := range d.resources() {
		lists = append(lists, l)
	}
	sort.Slice(lists, func(i, j int) bool { return lists[i].GroupVersion < lists[j].GroupVersion })
	return groups, lists, nil
}

func (d discoveryClient) ServerPreferredResources() ([]*metav1.APIResourceList, error) {
	_, lists, err := d.ServerGroupsAndResources()
	return lists, err
}

func (d discoveryClient) ServerPreferredNamespacedResources() ([]*metav1.APIResourceList, error) {
	lists, _ := d.ServerPreferredResources()
	out := []*metav1.APIResourceList{}
	for _, l := range lists {
		n := &metav1.APIResourceList{GroupVersion: l.GroupVersion}
		for _, r := range l.APIResources {
			if r.Namespaced {
				n.APIResources = append(n.APIResources, r)
			}
		}
		if len(n.APIResources) > 0 {
			out = append(out, n)
		}
	}
	return out, nil
}
