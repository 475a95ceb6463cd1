package main

import (
	"errors"
	"testing"
	"time"
)

// TestPathOfAlternates: every client alternates between the two paths request by request,
// and neighbouring clients start on different paths, so at any moment both paths are being
// measured (measured in blocks one after the other, the paths' p50s followed the machine's
// drift between the blocks).
func TestPathOfAlternates(t *testing.T) {
	for w := range 4 {
		count := [2]int{}
		for i := w; i < w+100; i++ {
			if pathOf(i) == pathOf(i+1) {
				t.Fatalf("client %d: requests %d and %d both on path %d", w, i, i+1, pathOf(i))
			}
			count[pathOf(i)]++
		}
		if count[0] != count[1] {
			t.Errorf("client %d: %v requests per path over 100, want equal", w, count)
		}
		if w > 0 && pathOf(w) == pathOf(w-1) {
			t.Errorf("clients %d and %d both start on path %d", w-1, w, pathOf(w))
		}
	}
}

// TestLoadRates: a path's rate is over the clients' time in that path's own requests, a lost
// request's 2 s stall counted against the path that lost it only.
func TestLoadRates(t *testing.T) {
	var lb, np load
	for range 1000 {
		lb.add(time.Millisecond, nil)
		np.add(time.Millisecond, nil)
	}
	np.add(2*time.Second, errors.New("timed out"))
	lb.workers, np.workers = 4, 4
	if got, want := lb.rate(), 4000.0; got != want {
		t.Errorf("LoadBalancer IP rate %.0f, want %.0f", got, want)
	}
	if got, want := np.rate(), 1000*4/3.0; got < want-0.5 || got > want+0.5 {
		t.Errorf("NodePort rate %.1f with one lost request, want %.1f (1,000 answered over 3 s of the clients' time / 4)", got, want)
	}
	if got, want := np.servingRate(), 4000.0; got != want {
		t.Errorf("NodePort rate without the stall %.0f, want %.0f", got, want)
	}
	if np.failed != 1 || np.firstErr != "(timed out)" || len(np.lat) != 1000 {
		t.Errorf("NodePort failed %d (%q), %d answered; want 1 (timed out), 1000", np.failed, np.firstErr, len(np.lat))
	}
}
