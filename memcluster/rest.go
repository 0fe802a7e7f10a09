package memcluster

import (
	"context"
	"encoding/json"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// kubernetes returns a typed clientset over the cluster: client-go's own
// clientset, whose requests are served in process by restTransport. It
// replaces client-go's fake clientset, which linked a fake of every typed
// client and an object tracker into the binary (2.2 MB of kroscope's 65)
// for the three kinds the engine asks of it (Events, Leases, Deployments).
func (c *Cluster) kubernetes() kubernetes.Interface {
	cfg := &rest.Config{Host: "http://memcluster.invalid", ContentConfig: rest.ContentConfig{ContentType: "application/json"}}
	cs, err := kubernetes.NewForConfigAndClient(cfg, &http.Client{Transport: restTransport{c}})
	if err != nil {
		panic(err) // a constant configuration: cannot fail
	}
	return cs
}

// restTransport answers the REST requests of client-go's typed clients
// from the cluster's store, as the API server would: the same paths,
// query parameters, bodies, Status errors and watch streams.
type restTransport struct{ c *Cluster }

func (t restTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r, err := parseREST(req)
	if err != nil {
		return statusResponse(req, err), nil
	}
	res := dynResource{c: t.c, gvr: r.gvr, ns: r.ns}
	if req.Method == http.MethodGet && r.name == "" && isWatch(r.query) {
		var opts metav1.ListOptions
		if err := decodeQuery(r, &opts); err != nil {
			return statusResponse(req, err), nil
		}
		w, err := res.Watch(req.Context(), opts)
		if err != nil {
			return statusResponse(req, err), nil
		}
		return watchResponse(req, w), nil
	}
	obj, err := t.serve(req.Context(), req.Method, res, r)
	if err != nil {
		return statusResponse(req, err), nil
	}
	return jsonResponse(req, http.StatusOK, obj), nil
}

// serve runs one non-watch request against res.
func (t restTransport) serve(ctx context.Context, method string, res dynResource, r *restRequest) (runtime.Object, error) {
	subs := subresources(r.sub)
	switch {
	case method == http.MethodGet && r.name != "":
		return res.Get(ctx, r.name, metav1.GetOptions{}, subs...)
	case method == http.MethodGet:
		var opts metav1.ListOptions
		if err := decodeQuery(r, &opts); err != nil {
			return nil, err
		}
		return res.List(ctx, opts)
	case method == http.MethodPost:
		return withObject(ctx, res, r, subs, dynResource.Create)
	case method == http.MethodPut:
		return withObject(ctx, res, r, subs, dynResource.Update)
	case method == http.MethodPatch:
		return t.patch(ctx, res, r, subs)
	case method == http.MethodDelete:
		return t.delete(ctx, res, r, subs)
	}
	return nil, apierrors.NewMethodNotSupported(r.gvr.GroupResource(), method)
}

func (t restTransport) patch(ctx context.Context, res dynResource, r *restRequest, subs []string) (runtime.Object, error) {
	var opts metav1.PatchOptions
	if err := decodeQuery(r, &opts); err != nil {
		return nil, err
	}
	pt := types.PatchType(r.mediaType)
	if r.gvr == eventsGVR && pt == types.StrategicMergePatchType && len(subs) == 0 {
		return t.c.patchEvent(r.ns, r.name, r.payload)
	}
	return res.Patch(ctx, r.name, pt, r.payload, opts, subs...)
}

func (t restTransport) delete(ctx context.Context, res dynResource, r *restRequest, subs []string) (runtime.Object, error) {
	var opts metav1.DeleteOptions
	if len(r.payload) > 0 {
		if err := json.Unmarshal(r.payload, &opts); err != nil {
			return nil, apierrors.NewBadRequest("delete options: " + err.Error())
		}
	}
	if r.name == "" {
		var list metav1.ListOptions
		if err := decodeQuery(r, &list); err != nil {
			return nil, err
		}
		return okStatus(), res.DeleteCollection(ctx, opts, list)
	}
	return okStatus(), res.Delete(ctx, r.name, opts, subs...)
}

// withObject runs a create or an update (call) with the request's body
// as the object and its query as the options (O).
func withObject[O any, P interface {
	*O
	runtime.Object
}](ctx context.Context, res dynResource, r *restRequest, subs []string,
	call func(dynResource, context.Context, *unstructured.Unstructured, O, ...string) (*unstructured.Unstructured, error),
) (runtime.Object, error) {
	var opts O
	if err := decodeQuery(r, P(&opts)); err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(r.payload); err != nil {
		return nil, apierrors.NewBadRequest("request body: " + err.Error())
	}
	return call(res, ctx, u, opts, subs...)
}
