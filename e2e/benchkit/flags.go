package benchkit

import (
	"flag"
	"path/filepath"
)

// BinFlag registers -bin, the directory holding edgeovn and edgeovn-cni, on the command line's
// flags; *dir holds it as an absolute path (the rig's processes start elsewhere).
func BinFlag(dir *string) {
	*dir = "bin"
	if abs, err := filepath.Abs(*dir); err == nil {
		*dir = abs
	}
	flag.Var((*absDir)(dir), "bin", "directory holding edgeovn and edgeovn-cni (make build)")
}

// absDir is a flag.Value that keeps a directory as an absolute path.
type absDir string

func (d *absDir) String() string { return string(*d) }

func (d *absDir) Set(s string) error {
	abs, err := filepath.Abs(s)
	if err != nil {
		return err
	}
	*d = absDir(abs)
	return nil
}
