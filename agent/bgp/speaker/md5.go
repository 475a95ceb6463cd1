package speaker

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// diagnosis tells why sessions do not come up from the kernel's TCP MD5 counters of this
// network namespace (/proc/net/netstat), counted from the speaker's start: a peer with a
// different password, or none where one is set, is otherwise silent (the kernel drops its
// segments). Which counter rises depends on which side's socket the segment meets (GoBGP
// could not put the key on its IPv6 listener here, so a mismatch showed as "unexpected"), so
// with a password set any of them means the passwords disagree.
type diagnosis struct {
	password bool
	base     map[string]uint64
}

var md5Counters = []string{"TCPMD5Failure", "TCPMD5NotFound", "TCPMD5Unexpected"}

func newDiagnosis(password bool) *diagnosis {
	return &diagnosis{password: password, base: tcpCounters()}
}

// reason is the MD5 failure seen since the start, or "".
func (d *diagnosis) reason() string {
	now := tcpCounters()
	for _, c := range md5Counters {
		if now[c] <= d.base[c] {
			continue
		}
		if d.password {
			return fmt.Sprintf("TCP MD5 authentication fails (kernel counter %s): auth-password differs from the peer's, or the peer has none", c)
		}
		return fmt.Sprintf("the peer signs with TCP MD5 (kernel counter %s): it has a password and auth-password is not set here", c)
	}
	return ""
}

// tcpCounters reads the TcpExt counters of /proc/net/netstat; none when unreadable.
func tcpCounters() map[string]uint64 {
	out := map[string]uint64{}
	f, err := os.Open("/proc/net/netstat")
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var names []string
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 || fs[0] != "TcpExt:" {
			continue
		}
		if names == nil {
			names = fs[1:]
			continue
		}
		for i, v := range fs[1:] {
			if i < len(names) {
				out[names[i]], _ = strconv.ParseUint(v, 10, 64)
			}
		}
		break
	}
	return out
}
