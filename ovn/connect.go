package ovn

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/go-logr/logr"
	"github.com/ovn-org/libovsdb/client"
	"github.com/ovn-org/libovsdb/model"
)

// ConnectRequest says where an OVSDB server is and where the client logs.
type ConnectRequest struct {
	// Endpoints in OVSDB connection format: "unix:/run/ovn/ovnnb_db.sock",
	// "tcp:127.0.0.1:6641". The first that answers is used; on loss the client moves on.
	Endpoints []string
	// Log receives the client's own messages; libovsdb's are passed at Info and above only.
	Log *slog.Logger
	// EchoInterval and EchoTimeout tune the Echo watchdog run when any endpoint is TCP or
	// SSL (zero: DefaultEchoInterval, DefaultEchoTimeout).
	EchoInterval time.Duration
	EchoTimeout  time.Duration
	// SlowTransaction is the latency above which the database clients log a transaction
	// as slow (zero: DefaultSlowTransaction).
	SlowTransaction time.Duration
	// TLS is required for ssl: endpoints (the OVN CA, this client's certificate and key).
	TLS *tls.Config
	// Metrics records the client's write transactions; nil: counters of the client's own.
	// The daemon passes the same one to each new client, so its exported counts never reset.
	Metrics *Metrics
}

// Timing of the connection; variables so that tests could shorten them.
var (
	reconnectTimeout  = 10 * time.Second
	initialRetryFirst = 100 * time.Millisecond
	retryMax          = 5 * time.Second
)

// Validate reports a request that can never connect.
func (r ConnectRequest) Validate() error {
	if len(r.Endpoints) == 0 {
		return fmt.Errorf("%w: no ovsdb endpoints", ErrInvalid)
	}
	for _, ep := range r.Endpoints {
		scheme, rest, ok := strings.Cut(ep, ":")
		if !ok || rest == "" || (scheme != "unix" && scheme != "tcp" && scheme != "ssl") {
			return fmt.Errorf("%w: ovsdb endpoint %q: want unix:PATH, tcp:HOST:PORT or ssl:HOST:PORT", ErrInvalid, ep)
		}
		if scheme == "ssl" && r.TLS == nil {
			return fmt.Errorf("%w: ovsdb endpoint %q: ssl needs TLS settings (CA certificate, client certificate and key)", ErrInvalid, ep)
		}
	}
	return nil
}

// Connect dials one of req.Endpoints with dbModel, retrying until ctx ends, starts a single
// monitor of every table in the model and returns once the initial contents are in the
// cache. The returned client reconnects forever on its own and resumes its monitor. With
// several endpoints it stays on the raft leader; with TCP or SSL endpoints an Echo watchdog
// forces a reconnect when the server stops answering (Close stops it).
func Connect(ctx context.Context, req ConnectRequest, dbModel model.ClientDBModel) (client.Client, error) {
	return connect(ctx, req, dbModel, true)
}

// Dial is Connect without the monitor: the client has no cache and receives no updates, and
// is used for transactions only (selects that read a few columns of a few rows, where
// monitoring the table would copy all of it). It too reconnects on its own.
func Dial(ctx context.Context, req ConnectRequest, dbModel model.ClientDBModel) (client.Client, error) {
	return connect(ctx, req, dbModel, false)
}

func connect(ctx context.Context, req ConnectRequest, dbModel model.ClientDBModel, monitor bool) (client.Client, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	log := req.Log
	if log == nil {
		log = slog.Default()
	}
	// The members that answer first: libovsdb tries them in this order (see orderByAnswer).
	req.Endpoints = orderByAnswer(ctx, ProbeRequest{Endpoints: req.Endpoints, TLS: req.TLS, Database: dbModel.Name()})
	c, err := newClient(req, dbModel, log)
	if err != nil {
		return nil, err
	}
	if err := connectWithRetry(ctx, c, log, req.Endpoints); err != nil {
		c.Close()
		return nil, err
	}
	if monitor {
		if _, err := c.MonitorAll(ctx); err != nil {
			c.Close()
			return nil, fmt.Errorf("monitor %s at %s: %w", dbModel.Name(), c.CurrentEndpoint(), err)
		}
	}
	if !needsWatchdog(req.Endpoints) {
		return c, nil
	}
	interval, timeout := req.EchoInterval, req.EchoTimeout
	if interval <= 0 {
		interval = DefaultEchoInterval
	}
	if timeout <= 0 {
		timeout = DefaultEchoTimeout
	}
	stop := startWatchdog(c, interval, timeout, log.With("db", dbModel.Name()))
	return &watchedClient{Client: c, stop: stop}, nil
}

func newClient(req ConnectRequest, dbModel model.ClientDBModel, log *slog.Logger) (client.Client, error) {
	libLog := logr.FromSlogHandler(minLevel{Handler: log.Handler(), min: slog.LevelInfo}).
		WithValues("component", "libovsdb", "db", dbModel.Name())
	opts := []client.Option{
		client.WithLogger(&libLog),
		client.WithReconnect(reconnectTimeout, foreverBackoff()),
	}
	for _, ep := range req.Endpoints {
		opts = append(opts, client.WithEndpoint(ep))
	}
	if req.TLS != nil {
		opts = append(opts, client.WithTLSConfig(req.TLS))
	}
	if len(req.Endpoints) > 1 {
		// With several endpoints this is a raft cluster: stay on the leader, so that a
		// transaction's effect is in the cache when its reply arrives and the wait guards
		// are checked against what the cache showed.
		opts = append(opts, client.WithLeaderOnly(true))
	}
	c, err := client.NewOVSDBClient(dbModel, opts...)
	if err != nil {
		return nil, fmt.Errorf("create ovsdb client for %s: %w", dbModel.Name(), err)
	}
	return c, nil
}

// foreverBackoff never gives up: libovsdb panics when its reconnect backoff returns Stop.
func foreverBackoff() backoff.BackOff {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = initialRetryFirst
	b.MaxInterval = retryMax
	b.MaxElapsedTime = 0
	return b
}

// connectWithRetry covers the first connection, which libovsdb does not retry: at boot the
// database may come up after edgeovn.
func connectWithRetry(ctx context.Context, c client.Client, log *slog.Logger, endpoints []string) error {
	b := foreverBackoff()
	for attempt := 1; ; attempt++ {
		// Each attempt is bounded as libovsdb bounds its own reconnects: a dial to a member
		// whose host is gone otherwise waits out TCP's SYN retries (over a minute).
		actx, cancel := context.WithTimeout(ctx, reconnectTimeout)
		err := c.Connect(actx)
		cancel()
		if err == nil {
			return nil
		}
		wait := b.NextBackOff()
		if attempt == 1 || attempt%10 == 0 {
			log.Warn("ovsdb not reachable yet, retrying", "endpoints", endpoints, "attempt", attempt, "err", err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("connect to ovsdb %v: %w (last error: %v)", endpoints, ctx.Err(), err)
		case <-t.C:
		}
	}
}

// minLevel drops records below min, because libovsdb's debug output (every transaction and
// update) would otherwise flood a debug-level edgeovn log.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

// Handle downgrades libovsdb's reconnect failures from ERROR to WARN. The client logs every
// failed reconnect attempt with logr's Error, which has no level of its own and so arrives
// here as ERROR; but a failed attempt is expected while a server restarts or a raft leader
// changes, and the client keeps retrying forever (foreverBackoff), so it is not an error
// until it lasts, which the callers' own timeouts and the watchdog report.
func (h minLevel) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError && isExpectedReconnectFailure(r.Message) {
		r.Level = slog.LevelWarn
		if !h.Handler.Enabled(ctx, r.Level) {
			return nil
		}
	}
	return h.Handler.Handle(ctx, r)
}

// isExpectedReconnectFailure matches libovsdb's messages for one failed reconnect attempt
// and for the note that it stops logging them after five.
func isExpectedReconnectFailure(msg string) bool {
	return strings.HasPrefix(msg, "failed to reconnect") || strings.HasPrefix(msg, "reconnect has failed")
}

func (h minLevel) WithAttrs(attrs []slog.Attr) slog.Handler {
	return minLevel{Handler: h.Handler.WithAttrs(attrs), min: h.min}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{Handler: h.Handler.WithGroup(name), min: h.min}
}
