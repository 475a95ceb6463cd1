package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// digArgs is a parsed dig command line: [@SERVER] NAME [TYPE] with the +options the e2e tests
// pass (+tcp/+notcp, +search, +short, +noall, +answer).
type digArgs struct {
	server string
	name   string
	qtype  dnsmessage.Type
	tcp    bool
	search bool
	short  bool
}

var digTypes = map[string]dnsmessage.Type{
	"A": dnsmessage.TypeA, "AAAA": dnsmessage.TypeAAAA, "PTR": dnsmessage.TypePTR, "SRV": dnsmessage.TypeSRV,
	"CNAME": dnsmessage.TypeCNAME, "TXT": dnsmessage.TypeTXT, "NS": dnsmessage.TypeNS, "MX": dnsmessage.TypeMX, "SOA": dnsmessage.TypeSOA,
}

func parseDigArgs(args []string) (digArgs, error) {
	a := digArgs{qtype: dnsmessage.TypeA}
	for _, arg := range args {
		switch {
		case strings.HasPrefix(arg, "@"):
			a.server = arg[1:]
		case strings.HasPrefix(arg, "+"):
			if err := a.option(arg[1:]); err != nil {
				return a, err
			}
		case digTypes[strings.ToUpper(arg)] != 0:
			a.qtype = digTypes[strings.ToUpper(arg)]
		case strings.HasPrefix(arg, "-"):
			return a, fmt.Errorf("unknown option %s", arg)
		case a.name != "":
			return a, fmt.Errorf("a second name %s (the first is %s)", arg, a.name)
		default:
			a.name = arg
		}
	}
	if a.name == "" {
		return a, errors.New("no name to look up")
	}
	return a, nil
}

func (a *digArgs) option(o string) error {
	switch o {
	case "tcp", "vc":
		a.tcp = true
	case "notcp", "novc":
		a.tcp = false
	case "search":
		a.search = true
	case "nosearch":
		a.search = false
	case "short":
		a.short = true
	case "noall", "answer", "all", "nocmd", "nocomments", "nostats", "noquestion":
		// The answer section is all dig prints here.
	default:
		return fmt.Errorf("unknown option +%s", o)
	}
	return nil
}

// resolvConf is what dig reads from /etc/resolv.conf.
type resolvConf struct {
	servers []string
	search  []string
	ndots   int
}

func parseResolvConf(text string) resolvConf {
	rc := resolvConf{ndots: 1}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "nameserver":
			rc.servers = append(rc.servers, f[1])
		case "search":
			rc.search = f[1:]
		case "options":
			for _, o := range f[1:] {
				var n int
				if _, err := fmt.Sscanf(o, "ndots:%d", &n); err == nil {
					rc.ndots = n
				}
			}
		}
	}
	return rc
}

// candidates are the names dig asks, in order: with +search and fewer dots than ndots, the
// name in each search domain first.
func (rc resolvConf) candidates(name string, search bool) []string {
	if strings.HasSuffix(name, ".") {
		return []string{name}
	}
	var out []string
	if search && strings.Count(name, ".") < rc.ndots {
		for _, d := range rc.search {
			out = append(out, name+"."+strings.TrimSuffix(d, ".")+".")
		}
	}
	return append(out, name+".")
}

// dig asks the server (from @SERVER or /etc/resolv.conf) and prints the answer section, or
// with +short each answer's data. A server that does not reply is exit code 9.
func dig(ctx context.Context, s stdio, args []string) int {
	a, err := parseDigArgs(args)
	if err != nil {
		return usage(s, "dig", "%v", err)
	}
	rc := resolvConf{ndots: 1}
	if b, err := readFile(s.dir, "/etc/resolv.conf"); err == nil {
		rc = parseResolvConf(string(b))
	}
	if a.server != "" {
		rc.servers = []string{a.server}
	}
	if len(rc.servers) == 0 {
		return usage(s, "dig", "no name server: neither @SERVER nor a nameserver in /etc/resolv.conf")
	}
	var answers []dnsmessage.Resource
	for _, name := range rc.candidates(a.name, a.search) {
		msg, err := exchange(ctx, rc.servers[0], a.tcp, name, a.qtype)
		if err != nil {
			fmt.Fprintf(s.err, ";; connection timed out; no servers could be reached: %v\n", err)
			return 9
		}
		if msg.RCode == dnsmessage.RCodeSuccess && len(msg.Answers) > 0 {
			answers = msg.Answers
			break
		}
	}
	for _, r := range answers {
		if a.short {
			fmt.Fprintln(s.out, rdata(r.Body))
			continue
		}
		fmt.Fprintf(s.out, "%s\t%d\tIN\t%s\t%s\n", r.Header.Name, r.Header.TTL, strings.TrimPrefix(r.Header.Type.String(), "Type"), rdata(r.Body))
	}
	return 0
}

// exchange sends one query and reads the reply, over UDP or TCP, within 5 s.
func exchange(ctx context.Context, server string, tcp bool, name string, qtype dnsmessage.Type) (*dnsmessage.Message, error) {
	q, err := query(name, qtype)
	if err != nil {
		return nil, err
	}
	network := "udp"
	if tcp {
		network = "tcp"
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, network, net.JoinHostPort(server, "53"))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	reply, err := roundTrip(c, q, tcp)
	if err != nil {
		return nil, err
	}
	var m dnsmessage.Message
	if err := m.Unpack(reply); err != nil {
		return nil, fmt.Errorf("decode reply from %s: %w", server, err)
	}
	return &m, nil
}

func query(name string, qtype dnsmessage.Type) ([]byte, error) {
	n, err := dnsmessage.NewName(name)
	if err != nil {
		return nil, fmt.Errorf("name %q: %w", name, err)
	}
	m := dnsmessage.Message{Header: dnsmessage.Header{ID: uint16(time.Now().UnixNano()), RecursionDesired: true},
		Questions: []dnsmessage.Question{{Name: n, Type: qtype, Class: dnsmessage.ClassINET}}}
	return m.Pack()
}

// roundTrip writes q and reads one reply; TCP frames both with a two-byte length.
func roundTrip(c net.Conn, q []byte, tcp bool) ([]byte, error) {
	if !tcp {
		if _, err := c.Write(q); err != nil {
			return nil, err
		}
		buf := make([]byte, 65535)
		n, err := c.Read(buf)
		return buf[:n], err
	}
	framed := binary.BigEndian.AppendUint16(nil, uint16(len(q)))
	if _, err := c.Write(append(framed, q...)); err != nil {
		return nil, err
	}
	var l [2]byte
	if _, err := io.ReadFull(c, l[:]); err != nil {
		return nil, err
	}
	buf := make([]byte, binary.BigEndian.Uint16(l[:]))
	_, err := io.ReadFull(c, buf)
	return buf, err
}

// rdata is a record's data as dig prints it.
func rdata(b dnsmessage.ResourceBody) string {
	switch r := b.(type) {
	case *dnsmessage.AResource:
		return netip.AddrFrom4(r.A).String()
	case *dnsmessage.AAAAResource:
		return netip.AddrFrom16(r.AAAA).String()
	case *dnsmessage.CNAMEResource:
		return r.CNAME.String()
	case *dnsmessage.PTRResource:
		return r.PTR.String()
	case *dnsmessage.NSResource:
		return r.NS.String()
	case *dnsmessage.SRVResource:
		return fmt.Sprintf("%d %d %d %s", r.Priority, r.Weight, r.Port, r.Target)
	case *dnsmessage.TXTResource:
		return `"` + strings.Join(r.TXT, `" "`) + `"`
	case *dnsmessage.MXResource:
		return fmt.Sprintf("%d %s", r.Pref, r.MX)
	default:
		return b.GoString()
	}
}
