package krodetect

import (
	"testing"
	"time"
)

func TestDecide(t *testing.T) {
	start := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return start.Add(d) }
	const lease, deploy = "lease kro-system/controller.kro.run", "Deployment kro-system/kro"
	write := func(d time.Duration, source string) Sighting {
		return Sighting{What: "write", At: at(d), Slack: time.Second, Source: source}
	}
	for name, tc := range map[string]struct {
		f      Facts
		want   Presence
		reason string
	}{
		"nothing seen":                {Facts{}, NeverSeen, ""},
		"a proof alone, nothing seen": {Facts{Proofs: []Proof{{What: deploy + " scaled to zero", At: at(0), Of: deploy}}}, NeverSeen, ""},
		"lease held":                  {Facts{Sightings: []Sighting{{What: lease + " held by k", At: at(0), Live: true, Source: lease}}}, Present, lease + " held by k"},
		"held lease beats a proof": {Facts{
			Sightings: []Sighting{{What: "held", At: at(0), Live: true, Source: lease}},
			Proofs:    []Proof{{What: "silence", At: at(time.Hour)}}}, Present, "held"},
		"live beats take-over": {Facts{TakeOver: true, Since: at(time.Hour),
			Sightings: []Sighting{{What: "ready", At: at(0), Live: true, Source: deploy}}}, Present, "ready"},
		// Issue #26: kro run as a plain process wrote, then its objects
		// were deleted; nothing proves it stopped.
		"kro without lease or Deployment wrote, objects gone": {Facts{Since: at(-time.Hour),
			Sightings: []Sighting{write(0, "")}}, Unproven, "write"},
		"an expired lease does not cover writes it does not explain": {Facts{
			Sightings: []Sighting{write(time.Minute, ""), {What: "held", At: at(0), Source: lease}},
			Proofs:    []Proof{{What: "expired", At: at(2 * time.Minute), Of: lease}}}, Unproven, "write"},
		"lease expired after the leader's writes": {Facts{
			Sightings: []Sighting{write(time.Minute, lease), {What: "held", At: at(time.Minute), Source: lease}},
			Proofs:    []Proof{{What: "expired", At: at(time.Minute + 15*time.Second), Of: lease}}}, Absent, "expired"},
		"a leader's write after its lease's proof": {Facts{
			Sightings: []Sighting{write(2*time.Minute, lease)},
			Proofs:    []Proof{{What: "gone", At: at(time.Minute), Of: lease}}}, Unproven, "write"},
		"write within the second of the proof (slack)": {Facts{
			Sightings: []Sighting{write(0, lease)},
			Proofs:    []Proof{{What: "gone", At: at(500 * time.Millisecond), Of: lease}}}, Unproven, "write"},
		"Deployment scaled to zero after it was ready": {Facts{
			Sightings: []Sighting{{What: "ready", At: at(0), Source: deploy}, write(0, deploy)},
			Proofs:    []Proof{{What: "zero", At: at(2 * time.Second), Of: deploy}}}, Absent, "zero"},
		"a Deployment's proof does not cover a lease's kro": {Facts{
			Sightings: []Sighting{{What: "held", At: at(0), Source: lease}},
			Proofs:    []Proof{{What: "zero", At: at(time.Minute), Of: deploy}}}, Unproven, "held"},
		"silence covers every kro": {Facts{
			Sightings: []Sighting{write(0, ""), {What: "held", At: at(0), Source: lease}},
			Proofs:    []Proof{{What: "silence", At: at(time.Minute)}}}, Absent, "silence"},
		"a write during the silence": {Facts{
			Sightings: []Sighting{write(2*time.Minute, "")},
			Proofs:    []Proof{{What: "silence", At: at(time.Minute)}}}, Unproven, "write"},
		"take-over sets old sightings aside": {Facts{TakeOver: true, Since: at(time.Hour),
			Sightings: []Sighting{write(0, "")}}, TakenOver, "write"},
		"take-over does not set aside a sighting made since": {Facts{TakeOver: true, Since: at(time.Hour),
			Sightings: []Sighting{write(0, ""), write(2*time.Hour, "")}}, Unproven, "write"},
		"without take-over old sightings count": {Facts{Since: at(time.Hour),
			Sightings: []Sighting{write(0, "")}}, Unproven, "write"},
	} {
		t.Run(name, func(t *testing.T) {
			v := Decide(tc.f)
			if v.Presence != tc.want || v.Reason != tc.reason {
				t.Fatalf("Decide = %+v, want presence %d reason %q", v, tc.want, tc.reason)
			}
			if v.MayWrite() != (tc.want <= TakenOver) {
				t.Errorf("MayWrite = %v", v.MayWrite())
			}
		})
	}
}

func TestVerdictLine(t *testing.T) {
	for _, tc := range []struct {
		v        Verdict
		takeOver bool
		want     string
	}{
		{Verdict{Presence: Absent, Reason: "x"}, false, ""},
		{Verdict{Presence: Present, Reason: "lease kro-system/controller.kro.run held by kro-1"}, false,
			"kro is reconciling this cluster (lease kro-system/controller.kro.run held by kro-1): observing; --take-over to reconcile"},
		{Verdict{Presence: Unproven, Reason: "ResourceGraphDefinition web written by field manager kro at T"}, false,
			"kro was seen on this cluster (ResourceGraphDefinition web written by field manager kro at T) and is not proven gone: observing; --take-over to reconcile"},
		{Verdict{Presence: Unproven, Reason: "w", SinceStart: true}, false,
			"kro was seen on this cluster while kroscope ran (w) and is not proven gone: observing; restart kroscope with --take-over once kro is stopped"},
	} {
		if got := tc.v.Line(tc.takeOver); got != tc.want {
			t.Errorf("Line(%+v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}
