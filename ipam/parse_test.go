package ipam_test

import (
	"errors"
	"testing"

	"github.com/edgeovn/edgeovn/ipam"
)

func TestParseRange(t *testing.T) {
	tests := []struct {
		in, want string
		err      bool
	}{
		{in: "10.0.0.5", want: "10.0.0.5"},
		{in: " 10.0.0.10..10.0.0.20 ", want: "10.0.0.10..10.0.0.20"},
		{in: "10.0.0.7..10.0.0.7", want: "10.0.0.7"},
		{in: "fd00::1..fd00::ff", want: "fd00::1..fd00::ff"},
		{in: "::ffff:10.0.0.1", want: "10.0.0.1"},
		{in: "", err: true},
		{in: "10.0.0.20..10.0.0.10", err: true},
		{in: "10.0.0.1..fd00::1", err: true},
		{in: "10.0.0.1..", err: true},
		{in: "10.0.0.0/24", err: true},
		{in: "fe80::1%eth0", err: true},
		{in: "10.0.0.1..10.0.0.2..10.0.0.3", err: true},
	}
	for _, tt := range tests {
		r, err := ipam.ParseRange(tt.in)
		if tt.err {
			if !errors.Is(err, ipam.ErrInvalid) {
				t.Errorf("ParseRange(%q) = %v, %v; want ErrInvalid", tt.in, r, err)
			}
			continue
		}
		if err != nil || r.String() != tt.want {
			t.Errorf("ParseRange(%q) = %v, %v; want %s", tt.in, r, err, tt.want)
		}
	}
}

func FuzzParseRange(f *testing.F) {
	for _, s := range []string{"10.0.0.5", "10.0.0.10..10.0.0.20", "fd00::1..fd00::2", "1..2", "::ffff:1.2.3.4..1.2.3.5", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ipam.ParseRange(s)
		if err != nil {
			if !errors.Is(err, ipam.ErrInvalid) {
				t.Fatalf("ParseRange(%q): error %v does not wrap ErrInvalid", s, err)
			}
			return
		}
		if r.First.Compare(r.Last) > 0 || r.First.BitLen() != r.Last.BitLen() || r.First.Zone() != "" {
			t.Fatalf("ParseRange(%q) = %v: not a valid range", s, r)
		}
		again, err := ipam.ParseRange(r.String())
		if err != nil || again != r {
			t.Fatalf("round trip of %q via %q: %v, %v", s, r.String(), again, err)
		}
	})
}
