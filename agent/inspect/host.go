package inspect

import (
	"context"
	"crypto/tls"
	"log/slog"
	"time"

	"github.com/edgeovn/edgeovn/agent/config"
	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/northbound"
	"github.com/edgeovn/edgeovn/ovn/southbound"
	"github.com/edgeovn/edgeovn/ovn/vswitch"
)

// Host is this host's edgeovn as its configuration describes it; the clients connect on
// first use and are kept for the next check.
type Host struct {
	Cfg config.Config
	Log *slog.Logger

	ovs  lazy[*vswitch.Client]
	nb   lazy[*northbound.Client]
	sb   lazy[*southbound.Client]
	kube lazy[*kubeapi.Client]
}

// lazy is one connection, made once; a failed attempt is remembered too, so a dead database
// costs one timeout, not one per check.
type lazy[T any] struct {
	done bool
	v    T
	err  error
}

func (l *lazy[T]) get(connect func() (T, error)) (T, error) {
	if !l.done {
		l.v, l.err = connect()
		l.done = true
	}
	return l.v, l.err
}

// NewHost returns a Host for cfg, which must have passed Validate.
func NewHost(cfg config.Config, log *slog.Logger) *Host {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Host{Cfg: cfg, Log: log}
}

// connectTimeout bounds a first connection: a database that is up answers in milliseconds,
// and one that is down should not cost a person more than this per database.
const connectTimeout = 5 * time.Second

func (h *Host) request(ctx context.Context, endpoints []string) (ovn.ConnectRequest, error) {
	var t *tls.Config
	var err error
	if t, err = h.Cfg.OVNTLS(); err != nil {
		return ovn.ConnectRequest{}, err
	}
	return ovn.ConnectRequest{Endpoints: endpoints, TLS: t, Log: h.Log}, nil
}

// OVS is the local Open_vSwitch database.
func (h *Host) OVS(ctx context.Context) (*vswitch.Client, error) {
	return h.ovs.get(func() (*vswitch.Client, error) {
		req, err := h.request(ctx, []string{h.Cfg.OVSEndpoint})
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(ctx, connectTimeout)
		defer cancel()
		return vswitch.Connect(ctx, req)
	})
}

// NB is the OVN northbound database.
func (h *Host) NB(ctx context.Context) (*northbound.Client, error) {
	return h.nb.get(func() (*northbound.Client, error) {
		req, err := h.request(ctx, h.Cfg.NBEndpoints)
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(ctx, connectTimeout)
		defer cancel()
		return northbound.Connect(ctx, req)
	})
}

// SB is the OVN southbound database, at the endpoint ovn-controller is told to use.
func (h *Host) SB(ctx context.Context) (*southbound.Client, error) {
	return h.sb.get(func() (*southbound.Client, error) {
		req, err := h.request(ctx, h.Cfg.SBEndpoints)
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(ctx, connectTimeout)
		defer cancel()
		return southbound.Connect(ctx, req)
	})
}

// Kube is the API client from the kubeconfig.
func (h *Host) Kube() (*kubeapi.Client, error) {
	return h.kube.get(func() (*kubeapi.Client, error) { return kubeapi.Load(h.Cfg.Kubeconfig) })
}

// Close disconnects what connected.
func (h *Host) Close() {
	if h.ovs.v != nil {
		h.ovs.v.Close()
	}
	if h.nb.v != nil {
		h.nb.v.Close()
	}
	if h.sb.v != nil {
		h.sb.v.Close()
	}
}
