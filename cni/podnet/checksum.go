package podnet

import (
	"fmt"
	"runtime"
	"strings"
	"unsafe"

	"github.com/safchain/ethtool"
	"golang.org/x/sys/unix"
)

// txChecksumPrefix covers every TX checksum feature ("ethtool -K dev tx off" turns off the
// same set).
const txChecksumPrefix = "tx-checksum-"

// disableTxChecksum turns TX checksum offload off on ifName, as `ethtool -K dev tx off`
// does: one ETHTOOL_STXCSUM ioctl, which clears every TX checksum feature at once. It must
// run inside the namespace that holds ifName: the ioctl acts on the namespace of its
// socket. (The ethtool library's feature-name route reads the names into a 1 MiB buffer,
// twice per call: a few milliseconds of every pod's ADD.)
func disableTxChecksum(ifName string) error {
	if err := setTxChecksum(ifName, false); err != nil {
		return fmt.Errorf("turn tx checksum offload off on %s: %w", ifName, err)
	}
	return nil
}

// ethtoolValue is the kernel's struct ethtool_value.
type ethtoolValue struct {
	cmd  uint32
	data uint32
}

// ifreqData is the kernel's struct ifreq with ifr_data set.
type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer // a pointer the runtime tracks (a moved stack updates it)
	_    [16]byte       // the rest of the union
}

// setTxChecksum sets TX checksum offload on or off with ETHTOOL_STXCSUM.
func setTxChecksum(ifName string, on bool) error {
	if len(ifName) >= unix.IFNAMSIZ {
		return fmt.Errorf("interface name %q too long: %w", ifName, ErrInvalidRequest)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open ethtool socket: %w", err)
	}
	defer unix.Close(fd)
	v := ethtoolValue{cmd: unix.ETHTOOL_STXCSUM}
	if on {
		v.data = 1
	}
	var ifr ifreqData
	copy(ifr.name[:], ifName)
	ifr.data = unsafe.Pointer(&v)
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
	runtime.KeepAlive(&v)
	if errno != 0 {
		return fmt.Errorf("ETHTOOL_STXCSUM: %w", errno)
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
