package termtext

import (
	"errors"
	"reflect"
	"sync"
)

// Deep returns v with every string reachable from it made inert (see
// Inert): exported struct fields, slice, array and map elements, map
// keys, pointers and interfaces are followed, so a field added to a type
// later is covered without a change here. An error is replaced by one
// whose message is inert and which unwraps to the original (errors.Is
// and errors.As still see it). What holds nothing to escape is returned
// as it is, shared and not copied; what does is copied on the way to the
// string, never changed in place: v may be a shared, read-only snapshot.
//
// Unexported fields are copied as they are: they are a type's own
// encoding (an encoded object, a time), read through methods; whatever
// shows their content escapes it there.
//
// Two map keys that escape to the same text (an ESC and the four
// characters `\x1b`) become one: views of such a map lose one entry.
func Deep[T any](v T) T {
	rv := reflect.ValueOf(&v).Elem()
	out, changed := walk(rv, map[uintptr]bool{})
	if !changed {
		return v
	}
	return out.Interface().(T)
}

// walk returns v made inert and whether that changed anything; seen
// breaks cycles through pointers and maps.
func walk(v reflect.Value, seen map[uintptr]bool) (reflect.Value, bool) {
	t := v.Type()
	if !mayHoldText(t) {
		return v, false
	}
	switch v.Kind() {
	case reflect.String:
		s := v.String()
		e := Inert(s)
		if e == s {
			return v, false
		}
		out := reflect.New(t).Elem()
		out.SetString(e)
		return out, true
	case reflect.Struct:
		return walkStruct(v, seen)
	case reflect.Pointer:
		if v.IsNil() || seen[v.Pointer()] {
			return v, false
		}
		seen[v.Pointer()] = true
		defer delete(seen, v.Pointer())
		e, changed := walk(v.Elem(), seen)
		if !changed {
			return v, false
		}
		p := reflect.New(t.Elem())
		p.Elem().Set(e)
		return p, true
	case reflect.Slice, reflect.Array:
		return walkList(v, seen)
	case reflect.Map:
		return walkMap(v, seen)
	case reflect.Interface:
		return walkInterface(v, seen)
	}
	return v, false
}

func walkStruct(v reflect.Value, seen map[uintptr]bool) (reflect.Value, bool) {
	t := v.Type()
	exported := func(i int) bool { return t.Field(i).IsExported() }
	return walkParts(v, t.NumField(), exported, reflect.Value.Field, seen)
}

func walkList(v reflect.Value, seen map[uintptr]bool) (reflect.Value, bool) {
	if v.Kind() == reflect.Slice {
		if v.IsNil() || v.Len() == 0 || seen[v.Pointer()] {
			return v, false
		}
		seen[v.Pointer()] = true
		defer delete(seen, v.Pointer())
	}
	return walkParts(v, v.Len(), nil, reflect.Value.Index, seen)
}

// walkParts walks v's n parts (struct fields or list elements: part picks
// one, follow says which to walk, nil all) copy on write: v as it is when
// none changes, else a copy of v with the changed parts set.
func walkParts(v reflect.Value, n int, follow func(int) bool, part func(reflect.Value, int) reflect.Value, seen map[uintptr]bool) (reflect.Value, bool) {
	var out reflect.Value
	for i := range n {
		if follow != nil && !follow(i) {
			continue
		}
		e, changed := walk(part(v, i), seen)
		if !changed {
			continue
		}
		if !out.IsValid() {
			out = shallowCopy(v)
		}
		part(out, i).Set(e)
	}
	if !out.IsValid() {
		return v, false
	}
	return out, true
}

// shallowCopy is a settable copy of v; a slice gets its own backing array.
func shallowCopy(v reflect.Value) reflect.Value {
	if v.Kind() == reflect.Slice {
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		reflect.Copy(out, v)
		return out
	}
	out := reflect.New(v.Type()).Elem()
	out.Set(v)
	return out
}

func walkMap(v reflect.Value, seen map[uintptr]bool) (reflect.Value, bool) {
	if v.IsNil() || v.Len() == 0 || seen[v.Pointer()] {
		return v, false
	}
	seen[v.Pointer()] = true
	defer delete(seen, v.Pointer())
	type entry struct{ k, v reflect.Value }
	entries := make([]entry, 0, v.Len())
	dirty := false
	for it := v.MapRange(); it.Next(); {
		k, kc := walk(it.Key(), seen)
		e, ec := walk(it.Value(), seen)
		dirty = dirty || kc || ec
		entries = append(entries, entry{k, e})
	}
	if !dirty {
		return v, false
	}
	out := reflect.MakeMapWithSize(v.Type(), len(entries))
	for _, e := range entries {
		out.SetMapIndex(e.k, e.v)
	}
	return out, true
}

var errorType = reflect.TypeFor[error]()

func walkInterface(v reflect.Value, seen map[uintptr]bool) (reflect.Value, bool) {
	if v.IsNil() {
		return v, false
	}
	t := v.Type()
	if t.Implements(errorType) {
		if err, ok := v.Interface().(error); ok {
			if e := Error(err); e != err {
				out := reflect.New(t).Elem()
				out.Set(reflect.ValueOf(e))
				return out, true
			}
			return v, false
		}
	}
	e, changed := walk(v.Elem(), seen)
	if !changed {
		return v, false
	}
	out := reflect.New(t).Elem()
	out.Set(e)
	return out, true
}

// Error returns err when its message needs no escaping, and otherwise an
// error whose message is Inert(err.Error()) and which unwraps to err.
func Error(err error) error {
	if err == nil {
		return nil
	}
	var ie *inertError
	if errors.As(err, &ie) && ie == err {
		return err
	}
	msg := err.Error()
	if e := Inert(msg); e != msg {
		return &inertError{msg: e, err: err}
	}
	return err
}

type inertError struct {
	msg string
	err error
}

func (e *inertError) Error() string { return e.msg }
func (e *inertError) Unwrap() error { return e.err }

// holds caches mayHoldText per type.
var holds sync.Map // reflect.Type -> bool

// mayHoldText reports whether a value of t can reach a string through
// what walk follows; a type that cannot (numbers, times, []byte) is
// skipped without looking at its values.
func mayHoldText(t reflect.Type) bool {
	if h, ok := holds.Load(t); ok {
		return h.(bool)
	}
	h := computeHolds(t, map[reflect.Type]bool{})
	holds.Store(t, h)
	return h
}

func computeHolds(t reflect.Type, visiting map[reflect.Type]bool) bool {
	if visiting[t] {
		return false // a cycle adds nothing the other fields do not
	}
	visiting[t] = true
	defer delete(visiting, t)
	switch t.Kind() {
	case reflect.String, reflect.Interface:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return computeHolds(t.Elem(), visiting)
	case reflect.Map:
		return computeHolds(t.Key(), visiting) || computeHolds(t.Elem(), visiting)
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && computeHolds(f.Type, visiting) {
				return true
			}
		}
	}
	return false
}
