// Command testserver is the workload of the e2e suite's real node (run as a container, pod
// name as its hostname). It answers on one port, TCP and UDP alike, with one line
// "<hostname> <client address:port>" (podsim's protocol, so podsim.Send talks to it), and
// serves HTTP for the kubelet and the tests:
//
//	GET /healthz                      200 "ok": the readiness probe
//	GET /dial?proto=tcp|udp&addr=A:P[&bytes=N]
//	                                  one exchange from this pod with a testserver at A:P; with
//	                                  bytes, N bytes each way over TCP first; 200 with the answer
//	GET /stream?proto=tcp|udp&addr=A:P
//	                                  starts (once) an exchange with A:P every 100 ms
//	GET /stats?proto=tcp|udp&addr=A:P JSON {"ok":N,"failed":M,"last_error":"..."} of that stream
//
// It exits on SIGTERM.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
)

func main() {
	port := flag.Int("port", 8080, "TCP and UDP port of the answering service")
	httpPort := flag.Int("http-port", 8081, "HTTP port (healthz, dial, stream, stats)")
	flag.Parse()
	name, err := os.Hostname()
	if err != nil {
		log.Fatalf("testserver: hostname: %v", err)
	}
	s := &server{name: name, streams: map[streamKey]*stream{}}
	if err := s.listen(*port); err != nil {
		log.Fatalf("testserver: %v", err)
	}
	go func() {
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
		<-sigs
		os.Exit(0)
	}()
	log.Printf("testserver %s: answering on %d (tcp, udp), http on %d", name, *port, *httpPort)
	log.Fatal(http.ListenAndServe(":"+strconv.Itoa(*httpPort), s.mux()))
}

func (s *server) listen(port int) error {
	tcp, err := net.Listen("tcp", ":"+strconv.Itoa(port))
	if err != nil {
		return fmt.Errorf("listen tcp %d: %w", port, err)
	}
	udp, err := net.ListenPacket("udp", ":"+strconv.Itoa(port))
	if err != nil {
		return fmt.Errorf("listen udp %d: %w", port, err)
	}
	go s.serveTCP(tcp)
	go s.serveUDP(udp)
	return nil
}
