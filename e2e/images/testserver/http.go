package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// exchangeTimeout bounds one exchange of /dial and of a stream.
const exchangeTimeout = 3 * time.Second

func (s *server) mux() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	m.HandleFunc("GET /dial", s.dial)
	m.HandleFunc("GET /stream", s.startStream)
	m.HandleFunc("GET /stats", s.stats)
	return m
}

func (s *server) dial(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var n int64
	if b := q.Get("bytes"); b != "" {
		var err error
		if n, err = strconv.ParseInt(b, 10, 64); err != nil || n < 0 || n > maxBulk {
			http.Error(w, fmt.Sprintf("bytes %q: want 0 to %d", b, maxBulk), http.StatusBadRequest)
			return
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), exchangeTimeout)
	defer cancel()
	line, err := exchange(ctx, q.Get("proto"), q.Get("addr"), n)
	if err != nil {
		http.Error(w, fmt.Sprintf("%s to %s: %v", q.Get("proto"), q.Get("addr"), err), http.StatusBadGateway)
		return
	}
	fmt.Fprint(w, line)
}

type streamKey struct{ proto, addr string }

// stream exchanges with one target every 100 ms from its start on, counting the outcomes.
type stream struct {
	mu      sync.Mutex
	ok      int
	failed  int
	lastErr string
}

func (s *server) startStream(w http.ResponseWriter, r *http.Request) {
	k := streamKey{r.URL.Query().Get("proto"), r.URL.Query().Get("addr")}
	if k.proto != "tcp" && k.proto != "udp" || k.addr == "" {
		http.Error(w, fmt.Sprintf("stream %q to %q: want proto tcp or udp and addr", k.proto, k.addr), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	if s.streams[k] == nil {
		st := &stream{}
		s.streams[k] = st
		go st.run(k)
	}
	s.mu.Unlock()
	fmt.Fprintln(w, "streaming")
}

func (st *stream) run(k streamKey) {
	for {
		ctx, cancel := context.WithTimeout(context.Background(), exchangeTimeout)
		_, err := exchange(ctx, k.proto, k.addr, 0)
		cancel()
		st.mu.Lock()
		if err != nil {
			st.failed++
			st.lastErr = err.Error()
		} else {
			st.ok++
		}
		st.mu.Unlock()
		time.Sleep(100 * time.Millisecond)
	}
}

func (s *server) stats(w http.ResponseWriter, r *http.Request) {
	k := streamKey{r.URL.Query().Get("proto"), r.URL.Query().Get("addr")}
	s.mu.Lock()
	st := s.streams[k]
	s.mu.Unlock()
	if st == nil {
		http.Error(w, fmt.Sprintf("no stream %s to %s", k.proto, k.addr), http.StatusNotFound)
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	_ = json.NewEncoder(w).Encode(map[string]any{"ok": st.ok, "failed": st.failed, "last_error": st.lastErr})
}
