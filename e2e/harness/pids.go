package harness

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Files in the run directory that let another program find and tear down a rig.
const (
	pidsFile  = "pids"  // one "name pid starttime" line per process, in start order
	netnsFile = "netns" // the namespace's name
)

// pidRecord identifies a process across programs; the start time (clock ticks since boot,
// /proc/<pid>/stat field 22) guards against killing a process that reused the PID.
type pidRecord struct {
	Name      string
	PID       int
	StartTime uint64
}

func (r pidRecord) String() string { return fmt.Sprintf("%s %d %d", r.Name, r.PID, r.StartTime) }

// parsePidRecord parses one line of the pids file.
func parsePidRecord(line string) (pidRecord, error) {
	f := strings.Fields(line)
	if len(f) != 3 {
		return pidRecord{}, fmt.Errorf("parse pid record %q: want \"name pid starttime\"", line)
	}
	pid, err := strconv.Atoi(f[1])
	if err != nil || pid <= 0 {
		return pidRecord{}, fmt.Errorf("parse pid record %q: bad pid %q", line, f[1])
	}
	st, err := strconv.ParseUint(f[2], 10, 64)
	if err != nil {
		return pidRecord{}, fmt.Errorf("parse pid record %q: bad start time %q", line, f[2])
	}
	return pidRecord{Name: f[0], PID: pid, StartTime: st}, nil
}

// appendPidRecord adds a started process to <dir>/pids at once, so that even a rig whose
// start failed half-way can be torn down.
func appendPidRecord(dir string, p *Process) error {
	st, err := procStartTime(p.PID)
	if err != nil {
		return fmt.Errorf("record pid of %s: %w", p.Name, err)
	}
	f, err := os.OpenFile(filepath.Join(dir, pidsFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("record pid of %s: %w", p.Name, err)
	}
	_, werr := fmt.Fprintln(f, pidRecord{Name: p.Name, PID: p.PID, StartTime: st})
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("record pid of %s: %w", p.Name, werr)
	}
	return nil
}

func readPidRecords(dir string) ([]pidRecord, error) {
	f, err := os.Open(filepath.Join(dir, pidsFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var recs []pidRecord
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		r, err := parsePidRecord(sc.Text())
		if err != nil {
			return nil, err
		}
		recs = append(recs, r)
	}
	return recs, sc.Err()
}

// procStat returns the state letter and start time of a process from /proc/<pid>/stat.
func procStat(pid int) (state byte, start uint64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// The command name is in parentheses and may hold spaces: fields start after the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if i < 0 || len(f) < 20 {
		return 0, 0, fmt.Errorf("parse /proc/%d/stat", pid)
	}
	start, err = strconv.ParseUint(f[19], 10, 64)
	return f[0][0], start, err
}

func procStartTime(pid int) (uint64, error) {
	_, st, err := procStat(pid)
	return st, err
}

// alive reports whether the recorded process still runs; a zombie has finished running.
func (r pidRecord) alive() bool {
	state, st, err := procStat(r.PID)
	return err == nil && st == r.StartTime && state != 'Z' && state != 'X'
}

// StopDir tears down a rig started with Options.Detach from another program: it stops every
// process listed in <dir>/pids in reverse start order (SIGTERM, then SIGKILL after a few
// seconds), deletes the network namespace and removes the directory.
func StopDir(dir string) error {
	recs, err := readPidRecords(dir)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("stop rig in %s: %w (no %s file)", dir, ErrNoRig, pidsFile)
	}
	if err != nil {
		return fmt.Errorf("stop rig in %s: %w", dir, err)
	}
	var errs []error
	for i := len(recs) - 1; i >= 0; i-- {
		errs = append(errs, stopRecord(recs[i]))
	}
	if name, err := os.ReadFile(filepath.Join(dir, netnsFile)); err == nil {
		errs = append(errs, deleteNetns(strings.TrimSpace(string(name))))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("stop rig in %s: %w", dir, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove rig dir %s: %w", dir, err)
	}
	return nil
}

// stopRecord stops a process that may not be our child: it cannot be waited for, so its end
// is polled through /proc.
func stopRecord(r pidRecord) error {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		if !r.alive() {
			return nil
		}
		if err := syscall.Kill(r.PID, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("signal %s (pid %d): %w", r.Name, r.PID, err)
		}
		for deadline := time.Now().Add(stopGrace); time.Now().Before(deadline) && r.alive(); {
			time.Sleep(pollInterval)
		}
	}
	if r.alive() {
		return fmt.Errorf("%s (pid %d) survived SIGKILL", r.Name, r.PID)
	}
	return nil
}
