package server

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder is an Observer that keeps "VERB code" per request.
type recorder struct {
	mu  sync.Mutex
	got []string
}

var _ Observer = (*recorder)(nil)

func (r *recorder) ObserveCNI(verb string, code uint, took time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if took <= 0 {
		r.got = append(r.got, fmt.Sprintf("%s took %v", verb, took))
		return
	}
	r.got = append(r.got, fmt.Sprintf("%s %d", verb, code))
}

// lockedBuffer collects the server's log lines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestObserverAndLogKeys: every request reaches the Observer with its verb and the code it
// answered; the log lines of a request carry verb, pod and namespace, ADD's the subnet too,
// and a failed request is logged with its code.
func TestObserverAndLogKeys(t *testing.T) {
	rec, logs := &recorder{}, &lockedBuffer{}
	r := newRig(t, func(c *Config) {
		c.Observer = rec
		c.Log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	})
	ctx := context.Background()
	list := r.confList("1.1.0")
	podNS := newPodNS(t)
	cid := containerID(40)
	rt := r.runtimeConf(cid, podNS.Path(), "shop", "cart")
	r.pods.set("shop", "cart", testNetwork(40, "shop", "cart"))

	r.ready.Store(false)
	_ = r.cni.GetStatusNetworkList(ctx, list)
	if _, err := r.cni.AddNetworkList(ctx, list, rt); err == nil {
		t.Fatal("ADD while not ready succeeded")
	}
	r.ready.Store(true)
	if _, err := r.cni.AddNetworkList(ctx, list, rt); err != nil {
		t.Fatalf("ADD: %v", err)
	}
	if err := r.cni.DelNetworkList(ctx, list, rt); err != nil {
		t.Fatalf("DEL: %v", err)
	}
	rec.mu.Lock()
	got := strings.Join(rec.got, ", ")
	rec.mu.Unlock()
	// libcni runs the chain's plugins: the fake conflist has edgeovn only, so one request per call.
	if want := "STATUS 50, ADD 11, ADD 0, DEL 0"; got != want {
		t.Errorf("observed %q, want %q", got, want)
	}
	l := logs.String()
	for _, want := range []string{
		`msg="cni request failed" verb=ADD pod=cart namespace=shop`, "code=11",
		`msg="pod network added" verb=ADD pod=cart namespace=shop netns=` + podNS.Path() + ` subnet=ovn-default lsp=cart.shop`,
		`msg="pod network deleted" verb=DEL pod=cart namespace=shop`,
	} {
		if !strings.Contains(l, want) {
			t.Errorf("log lacks %q:\n%s", want, l)
		}
	}
	if strings.Contains(l, "verb=STATUS") {
		t.Errorf("a failed STATUS was logged (the health monitor logs changes):\n%s", l)
	}
}
