package controller

import (
	"context"
	"strings"
	"testing"

	"github.com/edgeovn/edgeovn/agent/config"
)

// TestRunRefusesNoWorkers: the number of workers has one default, config.Default's; a request
// without it is refused before anything starts, naming the field, rather than run with a
// default of the controller's own.
func TestRunRefusesNoWorkers(t *testing.T) {
	for _, workers := range []int{0, -1} {
		err := Run(context.Background(), Request{Controller: config.Controller{Workers: workers}})
		if err == nil || !strings.Contains(err.Error(), "workers") || !strings.Contains(err.Error(), "at least 1") {
			t.Errorf("Run with %d workers = %v, want an error naming workers and \"at least 1\"", workers, err)
		}
	}
}
