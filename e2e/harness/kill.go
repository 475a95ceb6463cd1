package harness

import (
	"errors"
	"fmt"
	"os"
	"slices"
)

// Kill sends SIGKILL to the process by its PID (a crash, with no chance to clean up) and
// waits until it has been reaped. Killing an exited process does nothing.
func (p *Process) Kill() error {
	select {
	case <-p.done:
		return nil
	default:
	}
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kill %s (pid %d): %w", p.Name, p.PID, err)
	}
	<-p.done
	return nil
}

// KillAll SIGKILLs every process the rig started, by PID, newest first, and waits for each:
// the host crashed. Its namespace and files stay (Close removes them).
func (r *Rig) KillAll() error {
	r.mu.Lock()
	procs := slices.Clone(r.procs)
	r.mu.Unlock()
	var errs []error
	for i := len(procs) - 1; i >= 0; i-- {
		errs = append(errs, procs[i].Kill())
	}
	return errors.Join(errs...)
}
