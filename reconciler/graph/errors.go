package graph

// Error is one validation problem.
type Error struct {
	RGD      string // definition name (or source when unnamed)
	Resource string // resource id, "" for schema-level problems
	Path     string // field path, e.g. spec.resources[2].template.spec.replicas
	Message  string
	Fix      string // how to fix it, when known
}

func (e *Error) Error() string {
	s := e.RGD
	if e.Resource != "" {
		s += ": resource " + e.Resource
	}
	if e.Path != "" {
		s += ": " + e.Path
	}
	s += ": " + e.Message
	if e.Fix != "" {
		s += " (" + e.Fix + ")"
	}
	return s
}

// Errors is every problem found in one definition.
type Errors []*Error

func (es Errors) Error() string {
	s := ""
	for i, e := range es {
		if i > 0 {
			s += "\n"
		}
		s += e.Error()
	}
	return s
}

// Unwrap lets errors.As find each *Error.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}
