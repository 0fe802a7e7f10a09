package memcluster

// The API server's wire form, as restTransport reads and writes it: request
// paths, query parameters and bodies; Status, JSON and watch responses.

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
)

// restRequest is a request's path, as the API server's RequestInfo reads it.
type restRequest struct {
	gvr             schema.GroupVersionResource
	ns, name, sub   string
	query           map[string][]string
	body, mediaType string
	payload         []byte
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
