package podnet

import (
	"fmt"
	"strings"
	"unicode"
)

// maxIfName is the longest interface name the kernel takes (IFNAMSIZ minus the NUL).
const maxIfName = 15

// ValidateIfName checks an interface name as the kernel's dev_valid_name does: 1 to 15
// characters, not "." or "..", no '/', ':' or whitespace. The CNI server checks the runtime's
// CNI_IFNAME with it before anything waits.
func ValidateIfName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("interface name is empty: %w", ErrInvalidRequest)
	case len(name) > maxIfName:
		return fmt.Errorf("interface name %q is longer than %d characters: %w", name, maxIfName, ErrInvalidRequest)
	case name == "." || name == "..":
		return fmt.Errorf("interface name %q: %w", name, ErrInvalidRequest)
	case strings.ContainsAny(name, "/:") || strings.IndexFunc(name, unicode.IsSpace) >= 0:
		return fmt.Errorf("interface name %q contains '/', ':' or whitespace: %w", name, ErrInvalidRequest)
	}
	return nil
}
