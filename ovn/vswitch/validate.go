package vswitch

import (
	"fmt"
	"strings"

	"github.com/edgeovn/edgeovn/ovn"
)

// maxIfaceName is IFNAMSIZ-1: bridges and ports are kernel interfaces too.
const maxIfaceName = 15

func validateIfaceName(what, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty %s name", ovn.ErrInvalid, what)
	case len(name) > maxIfaceName:
		return fmt.Errorf("%w: %s name %q is longer than %d bytes", ovn.ErrInvalid, what, name, maxIfaceName)
	case strings.ContainsAny(name, " \t\n/:\""):
		return fmt.Errorf("%w: %s name %q contains whitespace, '/', ':' or quotes", ovn.ErrInvalid, what, name)
	}
	return nil
}
