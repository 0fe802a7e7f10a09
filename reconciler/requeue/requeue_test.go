package requeue

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestDecideRecognisesWrappedErrors(t *testing.T) {
	base := errors.New("boom")
	cases := []struct {
		err   error
		want  Decision
		delay time.Duration
	}{
		{nil, Forget, 0},
		{base, RateLimited, 0},
		{None(base), Drop, 0},
		{Now(base), Immediately, 0},
		{After(3*time.Second, base), Later, 3 * time.Second},
		{fmt.Errorf("ctx: %w", After(time.Second, base)), Later, time.Second},
		{fmt.Errorf("a: %w", fmt.Errorf("b: %w", None(base))), Drop, 0},
	}
	for _, c := range cases {
		d, delay := Decide(c.err)
		if d != c.want || delay != c.delay {
			t.Errorf("Decide(%v) = %v, %s; want %v, %s", c.err, d, delay, c.want, c.delay)
		}
	}
	if !errors.Is(After(time.Second, base), base) {
		t.Error("the cause is not reachable through errors.Is")
	}
	if got := After(time.Second, nil).Error(); got != "requeue after 1s" {
		t.Errorf("message %q", got)
	}
}
