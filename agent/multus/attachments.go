package multus

import (
	"fmt"
	"strings"
)

// Attachment is one kube-ovn attachment network of a pod.
type Attachment struct {
	Selection
	// Provider is Kube-OVN's: "<nad>.<namespace>.ovn", with ".<interface>" appended when the
	// pod selects the NAD more than once. Its annotations are "<provider>.kubernetes.io/...".
	Provider string
	// SubnetProvider is the spec.provider of the Subnet it takes its address from: Provider
	// without the interface.
	SubnetProvider string
	// IPAMOnly: the NAD is another plugin's (macvlan, ...) with Kube-OVN as its IPAM. Its
	// provider is "<nad>.<namespace>" (no ".ovn", never an interface appended, as Kube-OVN):
	// an address and annotations, no OVN port, no interface of edgeovn's.
	IPAMOnly bool
}

// NAD is a NetworkAttachmentDefinition's spec.config, "" for one that has none.
type NAD struct {
	Config string
}

// Attachments returns the kube-ovn attachments among sel (and the networks of other plugins
// whose IPAM is kube-ovn, IPAMOnly); nads holds the selected NADs by
// Key, a missing one is an error naming it. Networks of other plugins are skipped (Multus
// serves them), but their interface names count: two selections on one interface name are
// refused.
func Attachments(sel []Selection, nads map[string]NAD) ([]Attachment, error) {
	count := map[string]int{}
	seen := map[string]string{}
	for _, s := range sel {
		count[s.Key()]++
		if other, dup := seen[s.Interface]; dup {
			return nil, fmt.Errorf("attachments %s and %s both ask for interface %s", other, s.Key(), s.Interface)
		}
		seen[s.Interface] = s.Key()
	}
	var out []Attachment
	for _, s := range sel {
		nad, ok := nads[s.Key()]
		if !ok {
			return nil, fmt.Errorf("attachment %s: NetworkAttachmentDefinition %s not found", s.Key(), s.Key())
		}
		if strings.TrimSpace(nad.Config) == "" {
			continue
		}
		conf, err := ParseNetConf(nad.Config)
		if err != nil {
			return nil, fmt.Errorf("attachment %s: %w", s.Key(), err)
		}
		if _, ok := conf.KubeOVN(); !ok {
			if !conf.KubeOVNIPAM() {
				continue
			}
			if count[s.Key()] > 1 {
				return nil, fmt.Errorf("attachment %s: selected %d times, but its IPAM provider %s.%s serves one interface per pod", s.Key(), count[s.Key()], s.Name, s.Namespace)
			}
			p := s.Name + "." + s.Namespace
			out = append(out, Attachment{Selection: s, Provider: p, SubnetProvider: p, IPAMOnly: true})
			continue
		}
		a := Attachment{Selection: s, SubnetProvider: s.Name + "." + s.Namespace + ".ovn"}
		a.Provider = a.SubnetProvider
		if count[s.Key()] > 1 {
			a.Provider += "." + s.Interface
		}
		out = append(out, a)
	}
	return out, nil
}
