// Package plan says what applying a graph or an instance would do, before
// it happens: for every instance, the objects the reconciler would create,
// change and prune, and what would fail. It runs kroscope's own reconciler
// (one code path with the engine) over a client whose every write is a
// server-side dry run (dryRun=All), so defaulting, admission and conflicts
// are the API server's answer; this package only records, compares and
// prints what came back.
package plan

import "fmt"

// Op is what would happen to one object.
type Op string

// The operations of a plan, each with its sign in the text output.
const (
	OpCreate Op = "create" // +
	OpChange Op = "change" // ~
	OpPrune  Op = "prune"  // -
	OpFail   Op = "fail"   // !
	// OpPending is an object the reconciler cannot render yet (it waits
	// for a dependency that does not exist or is not ready): known after
	// apply, as Terraform says. Not counted.
	OpPending Op = "pending" // ?
)

// Sign is the character a text plan shows before an object with op.
func Sign(op Op) string {
	switch op {
	case OpCreate:
		return "+"
	case OpChange:
		return "~"
	case OpPrune:
		return "-"
	case OpFail:
		return "!"
	}
	return "?"
}

// Field is one changed field of an object: Op is "+" (added), "~"
// (changed) or "-" (removed); Old and New are JSON values, Secret values
// masked.
type Field struct {
	Path string `json:"path"`
	Op   string `json:"op"`
	Old  any    `json:"old,omitempty"`
	New  any    `json:"new,omitempty"`
}

// Object is what would happen to one object of an instance.
type Object struct {
	// Resource is the graph's resource id ("" for an object only the
	// inventory knows, or the instance itself).
	Resource  string  `json:"resource,omitempty"`
	Kind      string  `json:"kind"`
	Namespace string  `json:"namespace,omitempty"`
	Name      string  `json:"name,omitempty"`
	Op        Op      `json:"op"`
	Fields    []Field `json:"fields,omitempty"`
	// Message says why it fails or waits (redacted).
	Message string `json:"message,omitempty"`
	// ClientSide is set when the API server refused the dry run (this
	// user may not write the kind) and the diff was computed here, from
	// the live object and the rendered one: no defaulting, no admission.
	ClientSide string `json:"clientSide,omitempty"`
}

// Instance is the plan of one instance.
type Instance struct {
	Namespace string   `json:"namespace,omitempty"`
	Name      string   `json:"name"`
	Objects   []Object `json:"objects,omitempty"`
}

// Schema is what the graph's instance CRD change means.
type Schema struct {
	CRD string `json:"crd"`
	// New is true when the cluster does not serve the CRD yet.
	New bool `json:"new,omitempty"`
	// Breaking are kro's compatibility rules the change breaks.
	Breaking []string `json:"breaking,omitempty"`
}

// Plan is the plan of one graph (or one edited instance) over its
// instances.
type Plan struct {
	Graph     string     `json:"graph"`
	Kind      string     `json:"kind"`
	Schema    *Schema    `json:"schema,omitempty"`
	Instances []Instance `json:"instances"`
}

// Summary counts a plan's objects by what would happen to them.
type Summary struct {
	Create    int `json:"create"`
	Change    int `json:"change"`
	Prune     int `json:"prune"`
	Fail      int `json:"fail"`
	Instances int `json:"instances"`
}

// Summarize counts the objects of plans; an instance counts once however
// many graphs it appears in.
func Summarize(plans []*Plan) Summary {
	var s Summary
	for _, p := range plans {
		if p.Schema != nil && len(p.Schema.Breaking) > 0 {
			s.Fail++
		}
		for _, in := range p.Instances {
			s.Instances++
			for _, o := range in.Objects {
				switch o.Op {
				case OpCreate:
					s.Create++
				case OpChange:
					s.Change++
				case OpPrune:
					s.Prune++
				case OpFail:
					s.Fail++
				}
			}
		}
	}
	return s
}

// Line is the plan's last line.
func (s Summary) Line() string {
	return fmt.Sprintf("Plan: %d to create, %d to change, %d to prune, across %d instances; %d would fail.",
		s.Create, s.Change, s.Prune, s.Instances, s.Fail)
}

// Changes reports whether applying would do or break anything.
func (s Summary) Changes() bool {
	return s.Create+s.Change+s.Prune+s.Fail > 0
}

// ExitCode is Terraform's -detailed-exitcode: 0 when nothing would change,
// 2 when something would (or would fail), 1 when the plan itself failed.
func ExitCode(s Summary, err error) int {
	switch {
	case err != nil:
		return 1
	case s.Changes():
		return 2
	}
	return 0
}
