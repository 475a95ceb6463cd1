package benchkit

import (
	"os"
	"testing"
	"time"
)

// TestStatCPU: utime+stime are counted after the command name's last ')', which may hold
// spaces and parentheses; a short line is an error.
func TestStatCPU(t *testing.T) {
	line := "4242 (ovn (north) d) S 1 4242 4242 0 -1 4194560 900 0 0 0 150 27 0 0 20 0 1 0 88 1000 200"
	if got, err := statCPU(line); err != nil || got != 1770*time.Millisecond {
		t.Fatalf("statCPU = %v, %v; want 1.77s (150+27 ticks)", got, err)
	}
	if _, err := statCPU("7 (x) S 1 2"); err == nil {
		t.Fatal("a short stat line gave no error")
	}
	if _, err := CPUTime(os.Getpid()); err != nil {
		t.Fatalf("CPUTime of this process: %v", err)
	}
}
