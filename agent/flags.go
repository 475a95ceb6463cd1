package agent

import (
	"net/netip"
	"strings"

	"github.com/edgeovn/edgeovn/agent/configfile"
)

// prefixFlag, addrFlag and listFlag bind netip values and repeatable strings to package flag.

type prefixFlag struct{ p *netip.Prefix }

func (f prefixFlag) String() string {
	if f.p == nil || !f.p.IsValid() {
		return ""
	}
	return f.p.String()
}

func (f prefixFlag) Set(s string) error {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return err
	}
	*f.p = p
	return nil
}

type addrFlag struct{ a *netip.Addr }

func (f addrFlag) String() string {
	if f.a == nil || !f.a.IsValid() {
		return ""
	}
	return f.a.String()
}

func (f addrFlag) Set(s string) error {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return err
	}
	*f.a = a
	return nil
}

var (
	_ configfile.Repeated = (*listFlag)(nil)
	_ configfile.Repeated = (*prefixListFlag)(nil)
)

// listFlag replaces its defaults on first use, then appends.
type listFlag struct {
	l       *[]string
	touched bool
}

func (f *listFlag) String() string {
	if f.l == nil {
		return ""
	}
	return strings.Join(*f.l, " ")
}

// Repeated: the config file gives a list.
func (f *listFlag) Repeated() {}

func (f *listFlag) Set(s string) error {
	if s == "" {
		return nil
	}
	if !f.touched {
		*f.l, f.touched = nil, true
	}
	*f.l = append(*f.l, s)
	return nil
}

// prefixListFlag is listFlag for prefixes: the defaults go on first use.
type prefixListFlag struct {
	l       *[]netip.Prefix
	touched bool
}

func (f *prefixListFlag) String() string {
	if f.l == nil {
		return ""
	}
	s := make([]string, len(*f.l))
	for i, p := range *f.l {
		s[i] = p.String()
	}
	return strings.Join(s, " ")
}

// Repeated: the config file gives a list.
func (f *prefixListFlag) Repeated() {}

func (f *prefixListFlag) Set(s string) error {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return err
	}
	if !f.touched {
		*f.l, f.touched = nil, true
	}
	*f.l = append(*f.l, p)
	return nil
}
