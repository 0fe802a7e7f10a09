package memcluster

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
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

// restRequest is a request's path, as the API server's RequestInfo reads it.
type restRequest struct {
	gvr             schema.GroupVersionResource
	ns, name, sub   string
	query           map[string][]string
	body, mediaType string
	payload         []byte
}

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

// decodeQuery reads the request's query parameters into opts, as the
// typed clients encoded them (client-go's scheme knows the conversions).
func decodeQuery(r *restRequest, opts runtime.Object) error {
	if err := scheme.ParameterCodec.DecodeParameters(r.query, corev1.SchemeGroupVersion, opts); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	return nil
}

func subresources(sub string) []string {
	if sub == "" {
		return nil
	}
	return []string{sub}
}

func isWatch(q map[string][]string) bool {
	w := q["watch"]
	return len(w) > 0 && (w[0] == "true" || w[0] == "1")
}

// parseREST reads the request's path: /api/v1/... or /apis/GROUP/VERSION/...,
// then [namespaces/NS/]RESOURCE[/NAME[/SUBRESOURCE]].
func parseREST(req *http.Request) (*restRequest, error) {
	r := &restRequest{query: req.URL.Query()}
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		r.gvr.Version, parts = parts[1], parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		r.gvr.Group, r.gvr.Version, parts = parts[1], parts[2], parts[3:]
	default:
		return nil, apierrors.NewNotFound(schema.GroupResource{}, req.URL.Path)
	}
	// namespaces/NS/RESOURCE/...; namespaces/NS and namespaces/NS/status
	// are the Namespace itself.
	if parts[0] == "namespaces" && len(parts) >= 3 && parts[2] != "status" && parts[2] != "finalize" {
		r.ns, parts = parts[1], parts[2:]
	}
	r.gvr.Resource = parts[0]
	if len(parts) > 1 {
		r.name = parts[1]
	}
	if len(parts) > 2 {
		r.sub = strings.Join(parts[2:], "/")
	}
	return r, r.read(req)
}

func (r *restRequest) read(req *http.Request) error {
	if req.Body == nil {
		return nil
	}
	defer req.Body.Close()
	b, err := io.ReadAll(req.Body)
	if err != nil {
		return apierrors.NewBadRequest("reading the request body: " + err.Error())
	}
	r.payload = b
	if ct := req.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err == nil {
			r.mediaType = mt
		}
	}
	return nil
}

func okStatus() runtime.Object {
	return &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess}
}

// statusResponse is err as the API server sends it: a Status with its code.
func statusResponse(req *http.Request, err error) *http.Response {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		st = apierrors.NewInternalError(err)
	}
	s := st.Status()
	s.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	return jsonResponse(req, int(s.Code), &s)
}

func jsonResponse(req *http.Request, code int, obj runtime.Object) *http.Response {
	b, err := json.Marshal(obj)
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","code":500}`)
	}
	return &http.Response{
		StatusCode: code, Status: http.StatusText(code), Request: req,
		Header: http.Header{"Content-Type": []string{"application/json"}},
		Body:   io.NopCloser(strings.NewReader(string(b))), ContentLength: int64(len(b)),
	}
}

// watchResponse streams w's events as the API server does: one JSON
// WatchEvent after another, until the client goes or the watch ends.
func watchResponse(req *http.Request, w watch.Interface) *http.Response {
	pr, pw := io.Pipe()
	go func() {
		defer w.Stop()
		enc := json.NewEncoder(pw)
		for {
			select {
			case <-req.Context().Done():
				pw.CloseWithError(req.Context().Err())
				return
			case ev, ok := <-w.ResultChan():
				if !ok {
					pw.Close()
					return
				}
				raw, err := json.Marshal(ev.Object)
				if err == nil {
					err = enc.Encode(&metav1.WatchEvent{Type: string(ev.Type), Object: runtime.RawExtension{Raw: raw}})
				}
				if err != nil {
					pw.CloseWithError(err)
					return
				}
			}
		}
	}()
	return &http.Response{
		StatusCode: http.StatusOK, Status: "OK", Request: req,
		Header: http.Header{"Content-Type": []string{"application/json"}}, Body: pr, ContentLength: -1,
	}
}
