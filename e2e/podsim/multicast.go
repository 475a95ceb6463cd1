package podsim

import (
	"fmt"
	"net"
	"net/netip"
	"time"
)

// JoinGroup opens a UDP socket in the sandbox that has joined the multicast group on its
// interface ifName (the kernel sends the IGMP report); close it to leave.
func JoinGroup(sb *Sandbox, ifName string, group netip.AddrPort) (*net.UDPConn, error) {
	var c *net.UDPConn
	err := inNetns(sb.Netns, func() error {
		ifi, err := net.InterfaceByName(ifName)
		if err != nil {
			return err
		}
		c, err = net.ListenMulticastUDP("udp4", ifi, net.UDPAddrFromAddrPort(group))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("join %s in %s: %w", group, sb.Pod.Name, err)
	}
	return c, nil
}

// SendGroup sends payload from the sandbox to the multicast group (TTL 1: its own segment).
func SendGroup(sb *Sandbox, group netip.AddrPort, payload string) error {
	return inNetns(sb.Netns, func() error {
		c, err := net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(group))
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = c.Write([]byte(payload))
		return err
	})
}

// Received returns what the socket receives within wait ("" when nothing).
func Received(c *net.UDPConn, wait time.Duration) string {
	_ = c.SetReadDeadline(time.Now().Add(wait))
	b := make([]byte, 1500)
	n, _, err := c.ReadFromUDP(b)
	if err != nil {
		return ""
	}
	return string(b[:n])
}
