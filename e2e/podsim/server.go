package podsim

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"
)

// ServeRequest says where a Server listens and who it says it is.
type ServeRequest struct {
	// Netns is the path of the network namespace to listen in (a Sandbox's Netns).
	Netns string
	// Port is listened on for TCP and UDP alike, on every address; 0 picks a free one.
	Port uint16
	// Name is what the server answers with: the pod's name, so a client sees which backend
	// of a Service answered.
	Name string
}

// Server answers every TCP request and every UDP datagram with one line:
// "<name> <client address:port>", the client address as the server saw it (after any NAT).
// A TCP request is one line from the client; the server answers it and closes.
type Server struct {
	Name string
	Port uint16

	tcp  net.Listener
	udp  net.PacketConn
	wg   sync.WaitGroup
	once sync.Once
	err  error       // of the shutdown, set inside once
	stop func() bool // unhooks the shutdown from the context
}

// serverIdle bounds how long a TCP connection may take to send its request line.
const serverIdle = 5 * time.Second

// Serve starts a Server in a namespace. It runs until Close or until ctx ends.
func Serve(ctx context.Context, req ServeRequest) (*Server, error) {
	s := &Server{Name: req.Name}
	err := inNetns(req.Netns, func() error {
		var lc net.ListenConfig
		ln, err := lc.Listen(ctx, "tcp", ":"+strconv.Itoa(int(req.Port)))
		if err != nil {
			return err
		}
		s.tcp = ln
		s.Port = uint16(ln.Addr().(*net.TCPAddr).Port)
		s.udp, err = lc.ListenPacket(ctx, "udp", ":"+strconv.Itoa(int(s.Port)))
		if err != nil {
			ln.Close()
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("serve %s on port %d in %s: %w", req.Name, req.Port, req.Netns, err)
	}
	s.wg.Add(2)
	go s.serveTCP()
	go s.serveUDP()
	s.stop = context.AfterFunc(ctx, func() { s.once.Do(s.shutdown) })
	return s, nil
}

// Close stops the server and waits for its goroutines; calling it again does nothing.
func (s *Server) Close() error {
	s.stop()
	s.once.Do(s.shutdown)
	return s.err
}

func (s *Server) shutdown() {
	s.err = errors.Join(s.tcp.Close(), s.udp.Close())
	s.wg.Wait()
}

func (s *Server) answer(client net.Addr) []byte {
	return []byte(s.Name + " " + client.String() + "\n")
}

func (s *Server) serveTCP() {
	defer s.wg.Done()
	for {
		c, err := s.tcp.Accept()
		if err != nil {
			return // closed
		}
		go func() {
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(serverIdle))
			// Reading the request first means closing never resets it (unread data would).
			if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
				return
			}
			_, _ = c.Write(s.answer(c.RemoteAddr()))
		}()
	}
}

func (s *Server) serveUDP() {
	defer s.wg.Done()
	buf := make([]byte, 2048)
	for {
		_, from, err := s.udp.ReadFrom(buf)
		if err != nil {
			return // closed
		}
		_, _ = s.udp.WriteTo(s.answer(from), from)
	}
}

// Addr is the server's address at ip (one of its namespace's addresses).
func (s *Server) Addr(ip netip.Addr) netip.AddrPort { return netip.AddrPortFrom(ip, s.Port) }
