package sqlitestore_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/ipam"
	"github.com/edgeovn/edgeovn/ipam/sqlitestore"
)

const lockChildEnv = "EDGEOVN_IPAM_LOCK_CHILD"

// TestSecondOpenIsRefused: while one Store has the database open, a second read-write open
// (Open or OpenOrReset) fails with ErrLocked and says who holds it; the first keeps working,
// the read-only open used by `edgeovn ipam` still works, and once the first closes the
// database opens again.
func TestSecondOpenIsRefused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ipam.db")
	st, m := open(t, path)
	must(t, m.EnsureSubnet(ctx, testSubnet))
	_, err := m.Allocate(ctx, ipam.Request{Subnet: testSubnet.Name, Owner: owner("a")})
	must(t, err)

	_, err = sqlitestore.Open(ctx, path, nil)
	wantPID := fmt.Sprintf("this process (pid %d", os.Getpid())
	if !errors.Is(err, sqlitestore.ErrLocked) || !strings.Contains(err.Error(), wantPID) || !strings.Contains(err.Error(), path) {
		t.Fatalf("second open: %v; want ErrLocked naming %s and %q", err, path, wantPID)
	}
	if _, _, err := sqlitestore.OpenOrReset(ctx, path, nil); !errors.Is(err, sqlitestore.ErrLocked) {
		t.Fatalf("second OpenOrReset: %v; want ErrLocked", err)
	}
	if _, err := m.Allocate(ctx, ipam.Request{Subnet: testSubnet.Name, Owner: owner("b")}); err != nil {
		t.Fatalf("the first store stopped working after a refused second open: %v", err)
	}
	ro, err := sqlitestore.OpenReadOnly(ctx, path, nil)
	must(t, err)
	if s, err := ro.Load(ctx); err != nil || len(s.Allocations) != 2 {
		t.Fatalf("read-only beside the holder: %d allocations, %v", len(s.Allocations), err)
	}
	must(t, ro.Close())
	must(t, st.Close())

	st2, m2 := open(t, path)
	if n := len(m2.Allocations()); n != 2 {
		t.Fatalf("after the holder closed: %d allocations, want 2 (nothing lost)", n)
	}
	must(t, st2.Close())
}

// TestLockNamesOtherProcess: a database another process holds is refused with that
// process's PID, and is free again as soon as that process is SIGKILLed (the kernel drops a
// dead holder's lock).
func TestLockNamesOtherProcess(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ipam.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockChild$")
	cmd.Env = append(os.Environ(), lockChildEnv+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "open" {
		t.Fatalf("child did not open the database: %q %v", line, err)
	}

	_, err = sqlitestore.Open(ctx, path, nil)
	want := fmt.Sprintf("pid %d ", cmd.Process.Pid)
	if !errors.Is(err, sqlitestore.ErrLocked) || !strings.Contains(err.Error(), want) {
		t.Fatalf("open beside another process: %v; want ErrLocked naming %q", err, want)
	}
	must(t, cmd.Process.Kill())
	_ = cmd.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err := sqlitestore.Open(ctx, path, nil)
		if err == nil {
			must(t, st.Close())
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still refused 5 s after the holder was killed: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLockChild is the other process of TestLockNamesOtherProcess: it opens the database,
// says so, and waits to be killed.
func TestLockChild(t *testing.T) {
	path := os.Getenv(lockChildEnv)
	if path == "" {
		t.Skip("child process of TestLockNamesOtherProcess")
	}
	st, err := sqlitestore.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fmt.Println("open")
	time.Sleep(time.Minute)
}

// TestUnrecordedHolderRefused: a lock file that cannot record its holder's PID (here a link to
// /dev/full, which refuses truncation and every write) fails the open naming the lock file,
// rather than leaving the next opener an error that cannot say who holds the database.
func TestUnrecordedHolderRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ipam.db")
	must(t, os.Symlink("/dev/full", sqlitestore.LockPath(path)))
	st, _, err := sqlitestore.OpenOrReset(context.Background(), path, nil)
	if err == nil {
		st.Close()
		t.Fatal("opened with a lock file that records no holder")
	}
	if !strings.Contains(err.Error(), "record holder in lock file "+sqlitestore.LockPath(path)) {
		t.Fatalf("open: %v; want the lock file named", err)
	}
}
