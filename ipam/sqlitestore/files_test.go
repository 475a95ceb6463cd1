package sqlitestore_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/edgeovn/edgeovn/ipam"
)

// TestFilesRootOnly: the database, its -wal and -shm files are 0600 whatever the umask, and a
// world-readable database left by an older edgeovn is tightened at open.
func TestFilesRootOnly(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ipam.db")
	st, m := open(t, path)
	must(t, m.EnsureSubnet(ctx, testSubnet))
	_, err := m.Allocate(ctx, ipam.Request{Subnet: testSubnet.Name, Owner: owner("a")})
	must(t, err)
	checkModes := func(when string) {
		t.Helper()
		for _, suffix := range []string{"", "-wal", "-shm"} {
			fi, err := os.Stat(path + suffix)
			if err != nil {
				t.Fatalf("%s: %v", when, err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("%s: %s is %v, want 0600", when, filepath.Base(path+suffix), fi.Mode().Perm())
			}
		}
	}
	checkModes("new database")
	must(t, st.Close())

	for _, suffix := range []string{"", "-wal", "-shm"} {
		if _, err := os.Stat(path + suffix); err == nil {
			must(t, os.Chmod(path+suffix, 0o644))
		}
	}
	st, _ = open(t, path)
	defer st.Close()
	checkModes("database an older edgeovn left 0644")
}
