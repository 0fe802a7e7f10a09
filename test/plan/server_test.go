package plan_test

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kroscope/kroscope/plan"
	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/redact"
	"github.com/kroscope/kroscope/test/graphs"
)

// widgetCRD serves PlanWidget, whose spec.color only the API server knows
// to be an enum: the graph builder sees a string.
func widgetCRD() *apiextensionsv1.CustomResourceDefinition {
	str := func(enum ...string) apiextensionsv1.JSONSchemaProps {
		p := apiextensionsv1.JSONSchemaProps{Type: "string"}
		for _, e := range enum {
			p.Enum = append(p.Enum, apiextensionsv1.JSON{Raw: []byte(`"` + e + `"`)})
		}
		return p
	}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "planwidgets.test.kroscope.dev"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "test.kroscope.dev", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "PlanWidget", ListKind: "PlanWidgetList", Plural: "planwidgets", Singular: "planwidget"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object",
						Properties: map[string]apiextensionsv1.JSONSchemaProps{"color": str("red", "blue")}}}}}}},
		},
	}
}

// TestPlanAdmissionRefusal: a value out of a CRD's enum, which only the
// API server checks, is a "!" line with the server's message.
func TestPlanAdmissionRefusal(t *testing.T) {
	r := newRig(t)
	r.env.InstallCRDs(t, widgetCRD())
	r.set.RESTMapper().Reset()
	res := "- id: widget\n  template:\n    apiVersion: test.kroscope.dev/v1\n    kind: PlanWidget\n    metadata:\n      name: ${schema.metadata.name}\n    spec:\n      color: ${schema.spec.color}\n"
	g := r.build(graphDoc("PlanEnum", "color: string", res))
	r.serve(g, graphs.Instance("PlanEnum", "a", "color: red"))
	p := r.plan(g, nil, graphs.Instance("PlanEnum", "a", "color: green"))
	in := instanceOf(t, p, "a")
	if len(in.Objects) != 1 || in.Objects[0].Op != plan.OpFail || in.Objects[0].Kind != "PlanWidget" ||
		!strings.Contains(in.Objects[0].Message, `Unsupported value: "green"`) {
		t.Errorf("the widget would be refused by the API server: %+v", in.Objects)
	}
	if s := plan.Summarize([]*plan.Plan{p}); s.Fail != 1 || plan.ExitCode(s, nil) != 2 {
		t.Errorf("summary %+v: one failure, exit 2", s)
	}
}

// TestPlanMasksSecrets: a Secret's values, and a field another object
// derives from a Secret, never appear in a plan, text or JSON; the
// changes are still shown.
func TestPlanMasksSecrets(t *testing.T) {
	r := newRig(t)
	const dbPassword, instPassword = "hunter2-db-long", "s3cret-inst-long"
	_, err := r.env.Kubernetes().CoreV1().Secrets(r.ns).Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "db"}, Data: map[string][]byte{"password": []byte(dbPassword)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res := func(prefix, extra string) string {
		return "- id: db\n  externalRef:\n    apiVersion: v1\n    kind: Secret\n    metadata:\n      name: db\n" +
			"- id: creds\n  template:\n    apiVersion: v1\n    kind: Secret\n    metadata:\n      name: ${schema.metadata.name}-creds\n    stringData:\n      password: ${schema.spec.password}\n" + extra +
			graphs.ConfigMap("cfg", "${schema.metadata.name}-cfg", "token: ${'"+prefix+"' + string(db.data.password)}")
	}
	old := r.build(graphDoc("PlanSecret", "password: string", res("v1:", "")))
	r.serve(old, graphs.Instance("PlanSecret", "a", "password: "+instPassword))
	g := r.build(graphDoc("PlanSecret", "password: string", res("v2:", "      again: ${schema.spec.password}\n")))
	p := r.plan(g, nil)
	var text, js strings.Builder
	_ = plan.Text(&text, []*plan.Plan{p})
	_ = plan.JSON(&js, []*plan.Plan{p})
	for _, secret := range []string{dbPassword, instPassword} {
		for _, form := range []string{secret, base64.StdEncoding.EncodeToString([]byte(secret))} {
			if strings.Contains(text.String(), form) || strings.Contains(js.String(), form) {
				t.Errorf("the plan shows a Secret's value %q:\n%s", form, text.String())
			}
		}
	}
	for _, want := range []string{plan.Sensitive, redact.Marker} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the plan does not show %q where a Secret value changes:\n%s", want, text.String())
		}
	}
	expect(t, "plan", planned(instanceOf(t, p, "a")), []string{"~ ConfigMap " + r.ns + "/a-cfg data.token", "~ Secret " + r.ns + "/a-creds data.again"})
	checkApplied(r, p, &graph2{old, g}, "a")
}

// TestPlanReadOnlyUser: a user who may read but not write ConfigMaps
// (a dry run is authorized as the write) gets a client-side diff for
// them, labelled so, with the same changes the reconciler then makes.
func TestPlanReadOnlyUser(t *testing.T) {
	r := newRig(t)
	old := r.build(graphDoc("PlanViewer", "name: string", graphs.ConfigMap("cm", "${schema.spec.name}", "greeting: hello")))
	r.serve(old, graphs.Instance("PlanViewer", "a", "name: a-cm"))
	g := r.build(graphDoc("PlanViewer", "name: string", graphs.ConfigMap("cm", "${schema.spec.name}", "greeting: hi")))
	user := "viewer-" + r.ns
	r.bindReader(user, []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"kro.run"}, Resources: []string{"planviewers"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"get", "list"}},
	})
	cfg := rest.CopyConfig(r.env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	set, err := client.NewSet(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := r.plan(g, set)
	in := instanceOf(t, p, "a")
	for _, o := range in.Objects {
		if o.ClientSide == "" {
			t.Errorf("%s %s: a client-side diff must say so", o.Kind, o.Name)
		}
	}
	var text strings.Builder
	_ = plan.Text(&text, []*plan.Plan{p})
	if !strings.Contains(text.String(), "[client-side diff: no permission to write configmaps") {
		t.Errorf("the text does not label the client-side diff:\n%s", text.String())
	}
	expect(t, "plan", planned(in), []string{"~ ConfigMap " + r.ns + "/a-cm data.greeting"})
	checkApplied(r, p, &graph2{old, g}, "a")
}

// bindReader gives user the rules in every namespace.
func (r *rig) bindReader(user string, rules []rbacv1.PolicyRule) {
	r.t.Helper()
	ctx := context.Background()
	rbac := r.env.Kubernetes().RbacV1()
	if _, err := rbac.ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		r.t.Fatal(err)
	}
	_, err := rbac.ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: user},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: user, APIGroup: "rbac.authorization.k8s.io"}}}, metav1.CreateOptions{})
	if err != nil {
		r.t.Fatal(err)
	}
}
