package harness

import (
	"errors"
	"fmt"
	"os"
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
