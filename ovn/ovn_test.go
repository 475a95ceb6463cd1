package ovn_test

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

func TestOwnedBy(t *testing.T) {
	ids := ovn.OwnedBy(ovn.KindPod, "default/web")
	want := map[string]string{"vendor": "edgeovn", "owner-kind": "Pod", "owner": "default/web"}
	if len(ids) != len(want) || !ovn.HasAll(ids, want) {
		t.Fatalf("OwnedBy = %v, want %v", ids, want)
	}
	ids["extra"] = "x"
	if _, ok := ovn.OwnedBy(ovn.KindPod, "default/web")["extra"]; ok {
		t.Fatal("OwnedBy returned a shared map")
	}
	if !ovn.IsOwned(ids) || ovn.IsOwned(map[string]string{"vendor": "kube-ovn"}) || ovn.IsOwned(nil) {
		t.Fatal("IsOwned misjudges vendor tags")
	}
}

func TestConnectRequestValidate(t *testing.T) {
	tests := []struct {
		endpoints []string
		tls       *tls.Config
		ok        bool
	}{
		{[]string{"unix:/run/ovn/ovnnb_db.sock"}, nil, true},
		{[]string{"tcp:127.0.0.1:6641", "ssl:10.0.0.1:6641"}, &tls.Config{}, true},
		{[]string{"ssl:10.0.0.1:6641"}, nil, false}, // ssl without certificates never connects
		{nil, nil, false},
		{[]string{"/run/ovn/ovnnb_db.sock"}, nil, false},
		{[]string{"http://127.0.0.1:6641"}, nil, false},
		{[]string{"unix:"}, nil, false},
	}
	for _, tt := range tests {
		err := ovn.ConnectRequest{Endpoints: tt.endpoints, TLS: tt.tls}.Validate()
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ovn.ErrInvalid)) {
			t.Errorf("Validate(%v) = %v, want ok=%v", tt.endpoints, err, tt.ok)
		}
	}
}

func TestConnectGivesUpWithContext(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "missing.sock")
	dbModel, err := nbdb.FullDatabaseModel()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelError}))
	_, err = ovn.Connect(ctx, ovn.ConnectRequest{Endpoints: []string{"unix:" + sock}, Log: log}, dbModel)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), sock) {
		t.Fatalf("Connect = %v, want DeadlineExceeded naming %s", err, sock)
	}
}
