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
