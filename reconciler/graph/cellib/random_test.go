package cellib

import "testing"

// TestRandom checks kro's outputs: "test-seed"/10 is the value kro's
// issue tracker and kroscope's issue 11 quote; the others were produced
// by kro v0.9.4's random.seededString/seededInt.
func TestRandom(t *testing.T) {
	runCases(t, testEnv(t), []evalCase{
		{expr: `random.seededString(10, 'test-seed')`, want: "5czheg3o5c"},
		{expr: `random.seededString(20, 'test-seed')`, want: "5czheg3o5czheg3o5czh"},
		{expr: `random.seededString(12, 'my-app')`, want: "8qejs8ek8qej"},
		{expr: `random.seededString(1, 'test-seed')`, want: "5"},
		{expr: `random.seededString(0, 'test-seed')`, wantErr: "length must be positive"},
		{expr: `random.seededString(-1, 'test-seed')`, wantErr: "length must be positive"},
		{expr: `random.seededString('10', 'test-seed')`, compileErr: true},
		{expr: `random.seededString(10, 123)`, compileErr: true},
		{expr: `random.seededString(10)`, compileErr: true},
		{expr: `random.seededInt(0, 100, 'test-seed')`, want: int64(56)},
		{expr: `random.seededInt(30000, 32768, 'my-service')`, want: int64(31247)},
		{expr: `random.seededInt(-100, -50, 'seed')`, want: int64(-58)},
		{expr: `random.seededInt(5, 6, 'seed')`, want: int64(5)},
		{expr: `random.seededInt(5, 5, 'seed')`, wantErr: "min must be less than max"},
		{expr: `random.seededInt(10, 5, 'seed')`, wantErr: "min must be less than max"},
		{expr: `random.seededInt(0, 100, 1)`, compileErr: true},
	})
}
