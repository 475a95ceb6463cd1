package northbound

import (
	"fmt"
	"strings"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// ACLSpec is one ACL of an edgeovn port group, identified by (Direction, Priority, Match).
type ACLSpec struct {
	PortGroup string
	Direction nbdb.ACLDirection
	Priority  int // 0-32767
	Match     string
	Action    nbdb.ACLAction
	Owner     OwnerRef
}

// Validate reports what is wrong with the spec.
func (s ACLSpec) Validate() error {
	what := fmt.Sprintf("acl %s %d %q", s.Direction, s.Priority, s.Match)
	switch {
	case !matchName.MatchString(s.PortGroup):
		return fmt.Errorf("%w: %s: bad port group name %q", ovn.ErrInvalid, what, s.PortGroup)
	case s.Direction != nbdb.ACLDirectionFromLport && s.Direction != nbdb.ACLDirectionToLport:
		return fmt.Errorf("%w: %s: direction must be from-lport or to-lport", ovn.ErrInvalid, what)
	case s.Priority < 0 || s.Priority > 32767:
		return fmt.Errorf("%w: %s: priority outside 0-32767", ovn.ErrInvalid, what)
	case strings.TrimSpace(s.Match) == "":
		return fmt.Errorf("%w: %s: empty match", ovn.ErrInvalid, what)
	case s.Action == "":
		return fmt.Errorf("%w: %s: no action", ovn.ErrInvalid, what)
	}
	return s.Owner.validate(what)
}
