package node

import (
	"testing"
	"time"
)

// TestSouthboundReadDue: the southbound is read every sbReadInterval while every port it read
// was up here, and at each check while the last read found one that was not (a reclaim needs
// two checks in a row).
func TestSouthboundReadDue(t *testing.T) {
	var s sbBindings
	t0 := time.Unix(1000, 0)
	steps := []struct {
		at      time.Duration
		suspect *bool // what the read found, when it was due
		want    bool
	}{
		{0, ptr(false), true},
		{2 * time.Second, nil, false},
		{sbReadInterval - time.Millisecond, nil, false},
		{sbReadInterval, ptr(true), true},
		{sbReadInterval + 2*time.Second, ptr(true), true},
		{sbReadInterval + 4*time.Second, ptr(false), true},
		{sbReadInterval + 6*time.Second, nil, false},
		{2*sbReadInterval + 4*time.Second, ptr(false), true},
	}
	for i, st := range steps {
		if got := s.due(t0.Add(st.at)); got != st.want {
			t.Fatalf("step %d at %v: due %v, want %v", i, st.at, got, st.want)
		}
		if st.suspect != nil {
			s.found(*st.suspect)
		}
	}
}

func ptr[T any](v T) *T { return &v }
