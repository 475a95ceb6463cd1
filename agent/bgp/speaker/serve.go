package speaker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"time"

	api "github.com/osrg/gobgp/v3/api"

	"github.com/edgeovn/edgeovn/agent/bgp/speakerproto"
)

// statusEvery refreshes the status (peer states, why a session is down) besides the peers'
// events.
var statusEvery = 5 * time.Second

// Serve is the speaker process's work: it reads speakerproto.Desired values from in, keeps
// a GoBGP speaker with the last one's options announcing its prefixes, and writes a
// speakerproto.Report to out after each value, at each peer event and every statusEvery.
// It ends when in ends (nil) or ctx is done, stopping the speaker as edgeovn stops (with
// graceful restart the peers keep the routes); a speaker that cannot start is reported
// (Report.Error) and returned.
func Serve(ctx context.Context, in io.Reader, out io.Writer, log *slog.Logger) error {
	desired, readErr := readDesired(ctx, in)
	enc := json.NewEncoder(out)
	s := &serving{log: log, peerEvents: make(chan struct{}, 1)}
	defer s.stop()
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	tick := time.NewTicker(statusEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-readErr:
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("read the desired state: %w", err)
		case want := <-desired:
			if err := s.configure(ctx, want.Options); err != nil {
				_ = enc.Encode(speakerproto.Report{Error: err.Error()})
				return err
			}
			s.want = want.Prefixes
			if !s.set(ctx) {
				retry.Reset(time.Second)
			}
		case <-retry.C:
			if !s.set(ctx) {
				retry.Reset(time.Second)
			}
		case <-s.peerEvents:
		case <-tick.C:
		}
		if s.sp == nil {
			continue
		}
		st := s.sp.Status(ctx, s.diag)
		if err := enc.Encode(speakerproto.Report{Status: &st}); err != nil {
			return fmt.Errorf("write the status: %w", err)
		}
	}
}

// readDesired decodes in's values onto a channel; the decoder's error (io.EOF at the end)
// goes to the other.
func readDesired(ctx context.Context, in io.Reader) (<-chan speakerproto.Desired, <-chan error) {
	desired := make(chan speakerproto.Desired)
	errc := make(chan error, 1)
	go func() {
		dec := json.NewDecoder(in)
		for {
			var d speakerproto.Desired
			if err := dec.Decode(&d); err != nil {
				errc <- err
				return
			}
			select {
			case desired <- d:
			case <-ctx.Done():
				return
			}
		}
	}()
	return desired, errc
}

// serving is Serve's speaker and what it was asked for.
type serving struct {
	log        *slog.Logger
	sp         *Speaker
	diag       *diagnosis
	cancel     context.CancelFunc // ends the peer event watch of sp
	want       []netip.Prefix
	peerEvents chan struct{}
}

// configure starts the speaker, or starts it again when its options changed (closing the
// old sessions with a Cease: a new neighbour list or AS is a new speaker).
func (s *serving) configure(ctx context.Context, o speakerproto.Options) error {
	if s.sp != nil && s.sp.cfg.Options.Equal(o) {
		return nil
	}
	if s.sp != nil {
		s.log.Info("bgp speaker options changed, starting it again")
		s.cancel()
		s.sp.Stop(false)
		s.sp = nil
	}
	sp, err := Start(ctx, Request{Options: o, Log: s.log})
	if err != nil {
		return err
	}
	s.log.Info("bgp speaker started", "router_id", o.RouterID.String(), "as", o.ClusterAS, "neighbors", fmt.Sprint(o.Neighbors),
		"neighbor_as", o.NeighborAS, "graceful_restart", o.GracefulRestart)
	wctx, cancel := context.WithCancel(ctx)
	go func() {
		_ = sp.srv.WatchEvent(wctx, &api.WatchEventRequest{Peer: &api.WatchEventRequest_Peer{}},
			func(*api.WatchEventResponse) { poke(s.peerEvents) })
	}()
	s.sp, s.cancel, s.diag = sp, cancel, newDiagnosis(o.AuthPassword != "")
	return nil
}

// set announces what is wanted; false: some prefix failed (retried).
func (s *serving) set(ctx context.Context) bool {
	if s.sp == nil {
		return true
	}
	if err := s.sp.Set(ctx, s.want); err != nil {
		s.log.Warn("bgp announcement incomplete, retrying", "err", err)
		return false
	}
	return true
}

// stop ends the speaker as edgeovn stops: with graceful restart it sends nothing.
func (s *serving) stop() {
	if s.sp != nil {
		s.cancel()
		s.sp.Stop(true)
	}
}

func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
