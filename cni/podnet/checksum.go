package podnet

import (
	"fmt"
	"strings"

	"github.com/safchain/ethtool"
)

// txChecksumPrefix covers every TX checksum feature ("ethtool -K dev tx off" turns off the
// same set).
const txChecksumPrefix = "tx-checksum-"

// disableTxChecksum turns TX checksum offload off on ifName. It must run inside the
// namespace that holds ifName: the ethtool ioctl acts on the namespace of its socket.
func disableTxChecksum(ifName string) error {
	et, err := ethtool.NewEthtool()
	if err != nil {
		return fmt.Errorf("open ethtool socket for %s: %w", ifName, err)
	}
	defer et.Close()
	features, err := et.Features(ifName)
	if err != nil {
		return fmt.Errorf("read offload features of %s: %w", ifName, err)
	}
	change := map[string]bool{}
	for name, on := range features {
		if on && strings.HasPrefix(name, txChecksumPrefix) {
			change[name] = false
		}
	}
	if len(change) == 0 {
		return nil
	}
	if err := et.Change(ifName, change); err != nil {
		return fmt.Errorf("turn tx checksum offload off on %s: %w", ifName, err)
	}
	return nil
}

// txChecksumOn reports which TX checksum features are still on, for CHECK and tests.
func txChecksumOn(ifName string) ([]string, error) {
	et, err := ethtool.NewEthtool()
	if err != nil {
		return nil, fmt.Errorf("open ethtool socket for %s: %w", ifName, err)
	}
	defer et.Close()
	features, err := et.Features(ifName)
	if err != nil {
		return nil, fmt.Errorf("read offload features of %s: %w", ifName, err)
	}
	var on []string
	for name, enabled := range features {
		if enabled && strings.HasPrefix(name, txChecksumPrefix) {
			on = append(on, name)
		}
	}
	return on, nil
}
