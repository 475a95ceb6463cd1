package sqlitestore

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrLocked: another Store (in this process or another) has the database open for writing.
var ErrLocked = errors.New("ipam database is in use")

// LockPath is the lock file of the database at path: beside it, so it moves with it.
func LockPath(path string) string { return path + ".lock" }

// dbLock is the exclusive, non-blocking flock a read-write Store holds on its lock file for
// as long as it is open. flock belongs to the open file, so a second read-write open fails in this
// process as in any other, and the kernel drops the lock when the holder dies (SIGKILL
// included): a crashed daemon never leaves the database locked. The file holds the
// holder's PID, for the error the next opener gets.
type dbLock struct {
	f *os.File
}

func lockDatabase(path string) (*dbLock, error) {
	lp := LockPath(path)
	f, err := os.OpenFile(lp, os.O_RDWR|os.O_CREATE, fileMode)
	if err != nil {
		return nil, fmt.Errorf("open lock file of ipam database %s: %w", path, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		holder := holderOf(f)
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("ipam database %s: %w by %s (lock file %s); one controller per database: stop it first, or read it with `edgeovn ipam`, which needs no lock",
				path, ErrLocked, holder, lp)
		}
		return nil, fmt.Errorf("lock ipam database %s (lock file %s): %w", path, lp, err)
	}
	// A holder that cannot be recorded fails the open: the next opener's ErrLocked names it.
	if err = f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("record holder in lock file %s: %w", lp, err)
	}
	return &dbLock{f: f}, nil
}

// holderOf names the process recorded in a lock file held by someone else.
func holderOf(f *os.File) string {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil || pid <= 0 {
		return "another process (pid unknown)"
	}
	if pid == os.Getpid() {
		return fmt.Sprintf("this process (pid %d, another open Store)", pid)
	}
	return fmt.Sprintf("pid %d", pid)
}

// release drops the lock; the file stays (removing it would race a concurrent opener, who
// could lock an unlinked file).
func (l *dbLock) release() error {
	if l == nil {
		return nil
	}
	return l.f.Close()
}
