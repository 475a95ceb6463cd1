package speaker

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/agent/bgp/speakerproto"
)

// TestServe: the speaker process's loop announces each full state it reads and reports it,
// the same state again changes nothing, new options start a new speaker, the end of its
// input ends it, and a line that is not a state is an error naming it.
func TestServe(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, inR, outW, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	enc := json.NewEncoder(inW)
	reports := make(chan speakerproto.Report, 100)
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			var r speakerproto.Report
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Errorf("report %q: %v", sc.Text(), err)
			}
			reports <- r
		}
	}()
	// send writes d and returns the first status that announces what it asks.
	send := func(d speakerproto.Desired) speakerproto.Status {
		t.Helper()
		if err := enc.Encode(d); err != nil {
			t.Fatal(err)
		}
		var last speakerproto.Status
		for {
			select {
			case r := <-reports:
				if r.Status == nil {
					t.Fatalf("report without status: %+v", r)
				}
				if last = *r.Status; slices.Equal(last.Announced, d.Prefixes) {
					return last
				}
			case <-time.After(10 * time.Second):
				return last
			}
		}
	}
	o := testOptions()
	want := pfx("10.61.0.0/24", "10.61.0.2/32")
	for range 2 {
		if st := send(speakerproto.Desired{Options: o, Prefixes: want}); !slices.Equal(st.Announced, want) {
			t.Errorf("announced %v, want %v", st.Announced, want)
		}
	}
	o.ClusterAS = 65010
	if st := send(speakerproto.Desired{Options: o, Prefixes: want[:1]}); !slices.Equal(st.Announced, want[:1]) {
		t.Errorf("after new options: announced %v, want %v", st.Announced, want[:1])
	}
	inW.Close()
	go io.Copy(io.Discard, outR)
	if err := <-done; err != nil {
		t.Errorf("Serve at the end of its input: %v, want nil", err)
	}

	inR, inW = io.Pipe()
	go func() { done <- Serve(ctx, inR, io.Discard, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	go io.WriteString(inW, "{\"Options\": 7}\n")
	if err := <-done; err == nil || !strings.Contains(err.Error(), "read the desired state") {
		t.Errorf("Serve given a bad line: %v", err)
	}
}
