package podnet

import (
	"errors"
	"fmt"

	"github.com/containernetworking/plugins/pkg/ns"
)

// ValidateNetns reports whether path names a network namespace, wrapping ErrInvalidNetns
// when it does not, so callers can reject a bad request before doing any work.
func ValidateNetns(path string) error {
	if path == "" {
		return fmt.Errorf("netns path is empty: %w", ErrInvalidNetns)
	}
	if err := ns.IsNSorErr(path); err != nil {
		return fmt.Errorf("netns %q: %w: %v", path, ErrInvalidNetns, err)
	}
	return nil
}

// openNetns opens path, mapping "missing" and "not a namespace" to ErrInvalidNetns.
func openNetns(path string) (ns.NetNS, error) {
	n, err := ns.GetNS(path)
	if err == nil {
		return n, nil
	}
	var notExist ns.NSPathNotExistErr
	var notNS ns.NSPathNotNSErr
	if errors.As(err, &notExist) || errors.As(err, &notNS) {
		return nil, fmt.Errorf("open netns %q: %w: %v", path, ErrInvalidNetns, err)
	}
	return nil, fmt.Errorf("open netns %q: %w", path, err)
}
