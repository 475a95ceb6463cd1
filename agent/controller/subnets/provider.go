package subnets

import (
	"slices"
	"strings"
)

// ByProvider returns the applied Subnet whose spec.provider is provider (an attachment
// network's, "<nad>.<namespace>.ovn"); with several, the first by name, as Kube-OVN's lookup
// finds one. False when none is applied.
func (s *Controller) ByProvider(provider string) (string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var names []string
	for name, a := range s.applied {
		if a.spec.Provider == provider && !a.deleting {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return "", false
	}
	slices.SortFunc(names, strings.Compare)
	return names[0], true
}
