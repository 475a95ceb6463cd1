package configfile

import (
	"errors"
	"flag"
	"strings"
	"testing"
	"time"
)

// list is a repeatable flag, as agent's --ovn-nb.
type list struct{ l *[]string }

func (f list) String() string {
	if f.l == nil {
		return ""
	}
	return strings.Join(*f.l, ",")
}
func (f list) Set(s string) error { *f.l = append(*f.l, s); return nil }
func (list) Repeated()            {}

var _ Repeated = list{}

type opts struct {
	name    string
	mtu     int
	on      bool
	timeout time.Duration
	nb      []string
}

func flags(o *opts) *flag.FlagSet {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.StringVar(&o.name, "node-name", "default", "")
	fs.IntVar(&o.mtu, "mtu", 1400, "")
	fs.BoolVar(&o.on, "services", true, "")
	fs.DurationVar(&o.timeout, "cni-timeout", time.Minute, "")
	fs.Var(list{&o.nb}, "ovn-nb", "")
	return fs
}

func TestApplySetsFlags(t *testing.T) {
	var o opts
	fs := flags(&o)
	doc := "# comment\nnode-name: 0123\nmtu: 1450\nservices: false\ncni-timeout: 90s\novn-nb: [\"tcp:10.0.0.1:6641\", tcp:10.0.0.2:6641]\n"
	if err := Apply(fs, "c.yaml", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	if o.name != "0123" || o.mtu != 1450 || o.on || o.timeout != 90*time.Second ||
		strings.Join(o.nb, " ") != "tcp:10.0.0.1:6641 tcp:10.0.0.2:6641" {
		t.Fatalf("file not applied as written: %+v", o)
	}
}

func TestApplyEmptyDocument(t *testing.T) {
	var o opts
	for _, doc := range []string{"", "# only comments\n#mtu: 9000\n", "---\n"} {
		if err := Apply(flags(&o), "c.yaml", []byte(doc)); err != nil {
			t.Errorf("Apply(%q) = %v", doc, err)
		}
	}
	if o.mtu != 1400 {
		t.Fatalf("a comment changed mtu to %d", o.mtu)
	}
}

// TestApplyRefuses: each bad entry is an error naming the file, line, key and, for a bad
// value, the value; what came before it in the file stays applied, nothing after it is.
func TestApplyRefuses(t *testing.T) {
	cases := []struct {
		name, doc string
		want      []string
		is        error
	}{
		{"unknown key", "mtu: 1450\nmtuu: 1450\n", []string{"c.yaml line 2: mtuu: unknown key"}, ErrUnknownKey},
		{"bad int", "mtu: big\n", []string{"line 1: mtu:", `value "big"`}, nil},
		{"bad bool", "services: yes\n", []string{"services:", `value "yes"`}, nil},
		{"bad duration", "cni-timeout: 60\n", []string{"cni-timeout:", `value "60"`, "want a duration"}, nil},
		{"list for one value", "mtu: [1400, 1450]\n", []string{"mtu: a list given"}, nil},
		{"mapping", "node-name: {a: b}\n", []string{"node-name: want a value or a list"}, nil},
		{"no value", "node-name:\n", []string{"node-name: no value"}, nil},
		{"twice", "mtu: 1450\nmtu: 1500\n", []string{"line 2: mtu: given twice"}, ErrDuplicate},
		{"not a mapping", "- mtu\n", []string{"c.yaml line 1: want a mapping"}, nil},
		{"not yaml", "mtu: [1400\n", []string{"config c.yaml:"}, nil},
		{"empty list", "ovn-nb: []\n", []string{"ovn-nb: an empty list"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var o opts
			err := Apply(flags(&o), "c.yaml", []byte(c.doc))
			if err == nil {
				t.Fatalf("Apply(%q) accepted it: %+v", c.doc, o)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("error %v is not %v", err, c.is)
			}
			if c.name == "twice" && o.mtu != 1450 {
				t.Errorf("the entry before the bad one was not applied: mtu %d", o.mtu)
			}
		})
	}
}
