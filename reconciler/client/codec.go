package client

import (
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	kjson "sigs.k8s.io/json"
)

// newDynamic is dynamic.NewForConfigAndClient with one change: JSON answers
// are parsed once. client-go's JSON serializer reads an answer up to five
// times before it is a map (a pass to find its kind, one to validate, one
// to find the extent of the Unstructured value, and Unstructured's own
// validate-and-decode), and a watch event twice more for its envelope;
// decoding was a fifth of kroscope's CPU while instances converge. The
// same parser (sigs.k8s.io/json, case-sensitive, integers kept as int64)
// builds the same maps; anything but a single object (lists, Status, the
// metav1 kinds) goes to client-go's serializer as before.
func newDynamic(cfg *rest.Config, hc *http.Client) (*dynamic.DynamicClient, error) {
	c := dynamic.ConfigFor(cfg)
	c.GroupVersion = nil
	c.APIPath = "/if-you-see-this-search-for-the-break" // as client-go's: every path is absolute
	c.NegotiatedSerializer = newOnePass(c.NegotiatedSerializer)
	rc, err := rest.UnversionedRESTClientForConfigAndClient(c, hc)
	if err != nil {
		return nil, err
	}
	return dynamic.New(rc), nil
}

// onePass is a NegotiatedSerializer whose JSON decoders take the one-pass
// path where they can. Its media types are built once: client-go asks for
// them for every answer it decodes.
type onePass struct {
	runtime.NegotiatedSerializer
	infos []runtime.SerializerInfo
}

func newOnePass(n runtime.NegotiatedSerializer) onePass {
	infos := append([]runtime.SerializerInfo(nil), n.SupportedMediaTypes()...)
	for i, in := range infos {
		if in.MediaType != runtime.ContentTypeJSON {
			continue
		}
		infos[i].Serializer = objectDecoder{in.Serializer}
		if in.StreamSerializer != nil {
			s := *in.StreamSerializer
			s.Serializer = envelopeDecoder{s.Serializer}
			infos[i].StreamSerializer = &s
		}
	}
	return onePass{NegotiatedSerializer: n, infos: infos}
}

func (n onePass) SupportedMediaTypes() []runtime.SerializerInfo { return n.infos }

// metaKinds are the kinds client-go's dynamic serializer decodes into
// typed objects (Status, WatchEvent, the option kinds).
var metaKinds = func() *runtime.Scheme {
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return s
}()

// objectDecoder decodes a single object into an Unstructured in one pass.
type objectDecoder struct{ runtime.Serializer }

func (d objectDecoder) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	u, ok := into.(*unstructured.Unstructured)
	if into != nil && !ok {
		return d.Serializer.Decode(data, defaults, into)
	}
	var m map[string]any
	if err := kjson.UnmarshalCaseSensitivePreserveInts(data, &m); err != nil {
		return d.Serializer.Decode(data, defaults, into) // its error, word for word
	}
	gvk, single := singleObject(m)
	if !single || (into == nil && metaKinds.Recognizes(gvk)) {
		return d.Serializer.Decode(data, defaults, into)
	}
	if u == nil {
		u = &unstructured.Unstructured{}
	}
	u.Object = m
	return u, &gvk, nil
}

// singleObject is m's kind, and whether m is one object with a kind and an
// apiVersion (not a list).
func singleObject(m map[string]any) (schema.GroupVersionKind, bool) {
	kind, _ := m["kind"].(string)
	apiVersion, _ := m["apiVersion"].(string)
	_, list := m["items"]
	return schema.FromAPIVersionAndKind(apiVersion, kind), kind != "" && apiVersion != "" && !list
}

// envelopeDecoder decodes a watch event's envelope in one pass; its object
// stays raw for objectDecoder.
type envelopeDecoder struct{ runtime.Serializer }

var watchEventKind = schema.GroupVersion{Version: "v1"}.WithKind("WatchEvent")

func (d envelopeDecoder) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	ev, ok := into.(*metav1.WatchEvent)
	if !ok {
		return d.Serializer.Decode(data, defaults, into)
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(data, ev); err != nil {
		return d.Serializer.Decode(data, defaults, into)
	}
	gvk := watchEventKind
	return ev, &gvk, nil
}
