package cellib

import "testing"

// TestMaps checks merge (shallow, right wins) against deepMerge (nested
// maps merged, lists and scalars replaced), as kro's tests specify.
func TestMaps(t *testing.T) {
	runCases(t, testEnv(t), []evalCase{
		{expr: `{}.merge({}) == {}`, want: true},
		{expr: `{'a': 1}.merge({'a': 2, 'b': 2}) == {'a': 2, 'b': 2}`, want: true},
		{expr: `{'a': 1}.merge({'b': 2}) == {'a': 1, 'b': 2}`, want: true},
		{expr: `{'a': {'x': 1, 'y': 2}}.merge({'a': {'y': 3, 'z': 4}}) == {'a': {'y': 3, 'z': 4}}`, want: true},
		{expr: `{'a': {'x': 1, 'y': 2}}.deepMerge({'a': {'y': 3, 'z': 4}}) == {'a': {'x': 1, 'y': 3, 'z': 4}}`, want: true},
		{expr: `{'a': {'b': {'c': 1, 'd': 2}}}.deepMerge({'a': {'b': {'d': 9, 'e': 5}}}) == {'a': {'b': {'c': 1, 'd': 9, 'e': 5}}}`, want: true},
		{expr: `{'a': {'x': 1}, 'keep': 7}.deepMerge({'a': {'y': 2}}) == {'a': {'x': 1, 'y': 2}, 'keep': 7}`, want: true},
		{expr: `{'a': {'x': 1}}.deepMerge({'a': 5}) == {'a': 5}`, want: true},
		{expr: `{'a': 5}.deepMerge({'a': {'x': 1}}) == {'a': {'x': 1}}`, want: true},
		{expr: `{'a': [1, 2]}.deepMerge({'a': [3]}) == {'a': [3]}`, want: true},
		{expr: `{1: 'a', 2: 'b'}.deepMerge({2: 'c', 3: 'd'}) == {1: 'a', 2: 'c', 3: 'd'}`, want: true},
		{expr: `{}.deepMerge({'a': 1}) == {'a': 1}`, want: true},
		{expr: `{'a': 1}.deepMerge([1, 2])`, wantErr: "no such overload"},
		{expr: `'nope'.deepMerge({'a': 1})`, wantErr: "no such overload"},
		{expr: `{'a': 1}.merge([1])`, compileErr: true},
	})
}
