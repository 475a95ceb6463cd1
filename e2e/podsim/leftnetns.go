package podsim

import (
	"errors"
	"sync"
)

// made holds the network namespaces RunSandbox created that nobody removed yet, each with the
// ConfDir of the Kubelet that made it (one per rig), so a rig's teardown can remove what its
// tests and benches left behind without touching another rig's sandboxes.
var made = struct {
	sync.Mutex
	owner map[string]string // netns path -> Kubelet.ConfDir
}{owner: map[string]string{}}

func remember(path, confDir string) {
	made.Lock()
	defer made.Unlock()
	made.owner[path] = confDir
}

func forget(path string) {
	made.Lock()
	defer made.Unlock()
	delete(made.owner, path)
}

// RemoveLeft removes every namespace a Kubelet with k's ConfDir made and nobody removed:
// sandboxes a bench or test ended without StopSandbox(…, true) or RemoveNetns.
func (k *Kubelet) RemoveLeft() error {
	made.Lock()
	var left []string
	for path, dir := range made.owner {
		if dir == k.ConfDir {
			left = append(left, path)
		}
	}
	made.Unlock()
	var errs []error
	for _, path := range left {
		errs = append(errs, RemoveNetns(path))
	}
	return errors.Join(errs...)
}
