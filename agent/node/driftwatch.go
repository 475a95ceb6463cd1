package node

import (
	"context"
	"os"

	"github.com/google/nftables"
	"golang.org/x/sys/unix"
)

// watchHost calls poke on each event that may mean drift: netlink changes of ovn0 or br-int,
// of addresses and of routes (the role's hostEvents); any change in nftables; any change in
// the CNI directories. A watch that cannot start is logged and left to the timer. The
// returned stop ends them.
func (r *Role) watchHost(ctx context.Context, poke func()) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	unwatch := r.events.watch(&hostWatch{kinds: linkEvents | addrEvents | routeEvents,
		links: []string{HostInterface, Bridge}, poke: poke})
	for name, watch := range map[string]func(context.Context, func()) error{
		"nftables": watchNftables,
		"cni directories": func(ctx context.Context, poke func()) error {
			return watchDirs(ctx, poke, r.req.CNIConfDir, r.req.CNIBinDir)
		},
	} {
		if err := watch(ctx, poke); err != nil {
			r.log.Warn("drift: cannot watch, checking on the timer only", "watch", name, "err", err)
		}
	}
	return func() { unwatch(); cancel() }
}

// watchNftables follows nftables changes until ctx ends. All of them: google/nftables v0.3.0's
// deletions-only monitor (WithMonitorAction(MonitorActionDel)) receives nothing, not even
// `nft flush ruleset`; an event for a change that is right costs one check that writes nothing.
func watchNftables(ctx context.Context, poke func()) error {
	conn, err := nftables.New()
	if err != nil {
		return err
	}
	mon := nftables.NewMonitor(nftables.WithMonitorEventBuffer(64))
	events, err := conn.AddMonitor(mon)
	if err != nil {
		return err
	}
	go func() {
		<-ctx.Done()
		_ = mon.Close()
	}()
	go func() {
		for range events {
			poke()
		}
	}()
	return nil
}

// watchDirs follows creations, removals, renames and writes in dirs (inotify) until ctx ends.
// A directory that does not exist yet is not watched (the timer finds it).
func watchDirs(ctx context.Context, poke func(), dirs ...string) error {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), "inotify") // non-blocking: Close ends a Read
	const mask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
		unix.IN_CLOSE_WRITE | unix.IN_ATTRIB | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF
	watched := 0
	for _, d := range dirs {
		if _, err := unix.InotifyAddWatch(fd, d, mask); err == nil {
			watched++
		}
	}
	if watched == 0 {
		f.Close()
		return nil
	}
	go func() {
		<-ctx.Done()
		f.Close()
	}()
	go func() {
		buf := make([]byte, 4096)
		for {
			if _, err := f.Read(buf); err != nil {
				return
			}
			poke()
		}
	}()
	return nil
}
