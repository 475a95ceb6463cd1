package northbound

import (
	"fmt"

	"github.com/edgeovn/edgeovn/ovn"
)

// PortGroupSpec is a port group, identified by its schema-unique name: what EnsureACLGroup
// checks each of its port groups against. Ports are logical switch port names.
type PortGroupSpec struct {
	Name  string
	Ports []string
	Owner OwnerRef
}

// Validate reports what is wrong with the spec.
func (s PortGroupSpec) Validate() error {
	if !matchName.MatchString(s.Name) {
		return fmt.Errorf("%w: port group name %q: want letters, digits, '_' and '.', not starting with a digit", ovn.ErrInvalid, s.Name)
	}
	for _, p := range s.Ports {
		if err := validateName("port group member", p); err != nil {
			return err
		}
	}
	return s.Owner.validate("port group " + s.Name)
}
