package podsim

import (
	"testing"
	"time"
)

func TestOutages(t *testing.T) {
	t0 := time.Unix(0, 0)
	sentAt := make([]time.Time, 10)
	for i := range sentAt {
		sentAt[i] = t0.Add(time.Duration(i) * 10 * time.Millisecond)
	}
	st := PingStats{Lost: []int{2, 3, 4, 7, 9}}
	st.Outages = outages(st.Lost, sentAt)
	if len(st.Outages) != 3 {
		t.Fatalf("outages %+v, want 3 runs", st.Outages)
	}
	if o := st.Outages[0]; o.Lost != 3 || o.Duration() != 30*time.Millisecond {
		t.Errorf("first run %+v (%v), want 3 lost over 30ms (sent at 20ms, next answer sent at 50ms)", o, o.Duration())
	}
	if o := st.Outages[2]; o.Lost != 1 || o.Duration() != 0 {
		t.Errorf("last run %+v, want 1 lost, no answer after it", o)
	}
	if l := st.Longest(); l.Lost != 3 {
		t.Errorf("longest %+v, want the 3-ping run", l)
	}
	if l := (PingStats{}).Longest(); l.Lost != 0 || l.Duration() != 0 {
		t.Errorf("nothing lost: longest %+v, want zero", l)
	}
}
