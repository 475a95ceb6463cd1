package benchkit

import (
	"flag"
	"path/filepath"
	"testing"
)

// TestBinFlag: -bin is absolute whether defaulted or given relative, as the rig's processes
// start in other directories.
func TestBinFlag(t *testing.T) {
	var dir string
	BinFlag(&dir)
	if want, _ := filepath.Abs("bin"); dir != want {
		t.Errorf("default %q, want %q", dir, want)
	}
	if err := flag.Set("bin", "out/bin"); err != nil {
		t.Fatal(err)
	}
	if want, _ := filepath.Abs("out/bin"); dir != want {
		t.Errorf("after -bin out/bin: %q, want %q", dir, want)
	}
}
