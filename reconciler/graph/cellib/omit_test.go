package cellib

import "testing"

// TestOmitIsNoValue: omit() supports no operation; its errors are kro's.
func TestOmitIsNoValue(t *testing.T) {
	runCases(t, testEnv(t, Omit()), []evalCase{
		{expr: `omit() == 1`, wantErr: "omit() is a field-removal sentinel and cannot be compared"},
	})
}
