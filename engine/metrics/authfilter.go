package metrics

import (
	"net/http"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// authenticated serves h only to requests whose bearer token the API
// server authenticates (a TokenReview) and whose user it authorizes to
// use the path with the request's verb (a SubjectAccessReview on the
// non-resource URL: get /metrics), as controller-runtime's
// metrics/filters.WithAuthenticationAndAuthorization does. Written here
// with client-go's typed clients: that filter is built on
// k8s.io/apiserver's delegating authenticator and authorizer factories,
// whose webhook code links grpc and OpenTelemetry, about half of
// kroscope's binary. Unlike it, results are not cached: a scraper's few
// requests a minute cost two small API calls each.
func authenticated(auth *rest.Config, h http.Handler) (http.Handler, error) {
	cs, err := kubernetes.NewForConfig(auth)
	if err != nil {
		return nil, err
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if code, msg := admit(cs, r); code != 0 {
			http.Error(w, msg, code)
			return
		}
		h.ServeHTTP(w, r)
	}), nil
}

// admit reviews r's bearer token and then its user's right to r's path
// and verb; it returns 0, or the status and message that refuse r.
func admit(cs kubernetes.Interface, r *http.Request) (int, string) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	token = strings.TrimSpace(token)
	if !ok || token == "" {
		return http.StatusUnauthorized, "Unauthorized"
	}
	tr, err := cs.AuthenticationV1().TokenReviews().Create(r.Context(), &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		return http.StatusInternalServerError, "Authentication failed"
	}
	if !tr.Status.Authenticated {
		return http.StatusUnauthorized, "Unauthorized"
	}
	u := tr.Status.User
	extra := make(map[string]authorizationv1.ExtraValue, len(u.Extra))
	for k, v := range u.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra,
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: r.URL.Path, Verb: strings.ToLower(r.Method)},
	}}
	res, err := cs.AuthorizationV1().SubjectAccessReviews().Create(r.Context(), sar, metav1.CreateOptions{})
	if err != nil {
		return http.StatusInternalServerError, "Authorization failed"
	}
	if !res.Status.Allowed {
		return http.StatusForbidden, "Forbidden"
	}
	return 0, ""
}
