package benchkit

import (
	"testing"
	"time"
)

func TestPct(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 20; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	for _, c := range []struct {
		p    int
		want time.Duration
	}{{50, 11 * time.Millisecond}, {95, 20 * time.Millisecond}, {100, 20 * time.Millisecond}, {0, time.Millisecond}} {
		if got := Pct(d, c.p); got != c.want {
			t.Errorf("Pct(1..20 ms, %d) = %v, want %v", c.p, got, c.want)
		}
	}
	if got := Pct(nil, 50); got != 0 {
		t.Errorf("Pct(nil) = %v, want 0", got)
	}
	if got := Ms(1500 * time.Microsecond); got != "1.5 ms" {
		t.Errorf("Ms(1.5ms) = %q", got)
	}
}

func TestMedianRounds(t *testing.T) {
	v := []float64{695.4, 612, 911}
	if m := Median(v); m != 695.4 {
		t.Fatalf("median %v, want 695.4", m)
	}
	if r := Rounds(v); r != "695, 612, 911" {
		t.Fatalf("rounds %q", r)
	}
	if v[0] != 695.4 || Median(nil) != 0 {
		t.Fatal("Median changed its input or did not answer 0 for none")
	}
}
