package cellib

import "testing"

// TestLists checks the index edits and their bounds: [0, size) to set or
// remove, [0, size] to insert.
func TestLists(t *testing.T) {
	runCases(t, testEnv(t), []evalCase{
		{expr: `lists.setAtIndex([1, 2, 3], 1, 99)`, want: []int64{1, 99, 3}},
		{expr: `lists.setAtIndex(["a", "b", "c"], 1, "z")`, want: []string{"a", "z", "c"}},
		{expr: `lists.setAtIndex([1, 2], 2, 9)`, wantErr: "lists.setAtIndex: index 2 out of bounds [0, 2)"},
		{expr: `lists.setAtIndex([1, 2], -1, 9)`, wantErr: "out of bounds"},
		{expr: `lists.insertAtIndex([1, 2, 3], 1, 99)`, want: []int64{1, 99, 2, 3}},
		{expr: `lists.insertAtIndex([1, 2, 3], 0, 99)`, want: []int64{99, 1, 2, 3}},
		{expr: `lists.insertAtIndex([1, 2, 3], 3, 99)`, want: []int64{1, 2, 3, 99}},
		{expr: `lists.insertAtIndex([], 0, 42)`, want: []int64{42}},
		{expr: `lists.insertAtIndex([1, 2], 3, 9)`, wantErr: "lists.insertAtIndex: index 3 out of bounds [0, 2]"},
		{expr: `lists.insertAtIndex([1, 2], -1, 9)`, wantErr: "out of bounds"},
		{expr: `lists.removeAtIndex([1, 2, 3], 1)`, want: []int64{1, 3}},
		{expr: `lists.removeAtIndex([1, 2, 3], 2)`, want: []int64{1, 2}},
		{expr: `lists.removeAtIndex([42], 0)`, want: []int64{}},
		{expr: `lists.removeAtIndex([], 0)`, wantErr: "lists.removeAtIndex: index 0 out of bounds [0, 0)"},
		{expr: `lists.removeAtIndex(lists.insertAtIndex([1, 2, 3], 1, 99), 1)`, want: []int64{1, 2, 3}},
		{expr: `lists.setAtIndex(lists.removeAtIndex([0, 1, 2, 3], 0), 0, 99)`, want: []int64{99, 2, 3}},
		{expr: `lists.setAtIndex([1, 2], 0, "x")`, compileErr: true},
	})
}

// TestListsKeepElementType: the result is typed like the input, so it can
// feed a typed field.
func TestListsKeepElementType(t *testing.T) {
	env := testEnv(t)
	for expr, want := range map[string]string{
		`lists.setAtIndex([1, 2, 3], 0, 9)`:       "list(int)",
		`lists.insertAtIndex(["a", "b"], 0, "z")`: "list(string)",
		`lists.removeAtIndex(["a", "b", "c"], 0)`: "list(string)",
	} {
		a, iss := env.Compile(expr)
		if iss.Err() != nil {
			t.Fatal(iss.Err())
		}
		if got := a.OutputType().String(); got != want {
			t.Errorf("%s: type %s, want %s", expr, got, want)
		}
	}
}
