package harness

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
)

// ovsdbSpec is one ovsdb-server: its database, schema and file stem in the run directory.
type ovsdbSpec struct {
	name   string // process name, also the stem of its pid/ctl/log files
	stem   string // database and socket file stem
	schema string
}

var (
	nbDB      = ovsdbSpec{name: "ovsdb-nb", stem: "ovnnb_db", schema: nbSchema}
	sbDB      = ovsdbSpec{name: "ovsdb-sb", stem: "ovnsb_db", schema: sbSchema}
	vswitchDB = ovsdbSpec{name: "ovsdb-ovs", stem: "conf", schema: vswitchSchema}
)

// daemonFlags are the pid, control socket and logging flags every OVS/OVN daemon gets, so
// that none falls back to a system path.
func (r *Rig) daemonFlags(name string) []string {
	return []string{
		"--pidfile=" + r.path(name+".pid"),
		"--unixctl=" + r.path(name+".ctl"),
		"--log-file=" + r.path(name+".log"),
		"-vconsole:off", "-vsyslog:off",
	}
}

// startOVN brings up the OVN central, then the host's Open vSwitch and ovn-controller, all in
// the rig's one namespace.
func (r *Rig) startOVN(ctx context.Context) error {
	if err := r.startCentral(ctx, nil); err != nil {
		return err
	}
	return r.startHostOVS(ctx, nil)
}

// startCentral starts the NB and SB ovsdb-servers, each also listening on tcp (remotes, as
// "ptcp:6641:203.0.113.1", for the hosts of a Cluster), and ovn-northd.
func (r *Rig) startCentral(ctx context.Context, tcp map[ovsdbSpec]string) error {
	for _, db := range []ovsdbSpec{nbDB, sbDB} {
		if err := r.startOVSDB(ctx, db, tcp[db]); err != nil {
			return err
		}
	}
	northd := ProcessSpec{Name: "ovn-northd", Path: "ovn-northd", Args: append([]string{
		"--ovnnb-db=unix:" + r.path(nbDB.stem+".sock"), "--ovnsb-db=unix:" + r.path(sbDB.stem+".sock"),
	}, r.daemonFlags("ovn-northd")...)}
	_, err := r.spawn(ctx, northd, socketAccepts(r.path("ovn-northd.ctl")))
	return err
}

// startHostOVS starts the host's Open_vSwitch database, ovs-vswitchd and ovn-controller;
// uplink, if set, runs once ovs-vswitchd answers and before ovn-controller starts (a
// Cluster host's br-phy, which carries the underlay address).
func (r *Rig) startHostOVS(ctx context.Context, uplink func(context.Context) error) error {
	if err := r.startOVSDB(ctx, vswitchDB, ""); err != nil {
		return err
	}
	// The Open_vSwitch row must exist before ovs-vswitchd and ovn-controller read it; what goes
	// into it (system-id, ovn-remote, encap) is edgeovn's business.
	if _, err := r.Run(ctx, "ovs-vsctl", "--db="+r.OVSEndpoint, "--no-wait", "init"); err != nil {
		return fmt.Errorf("initialise Open_vSwitch db: %w", err)
	}
	vswitchd := ProcessSpec{Name: "ovs-vswitchd", Path: "ovs-vswitchd",
		Args: append([]string{r.OVSEndpoint}, r.daemonFlags("ovs-vswitchd")...)}
	if _, err := r.spawn(ctx, vswitchd, socketAccepts(r.path("ovs-vswitchd.ctl"))); err != nil {
		return err
	}
	r.uplink = uplink
	if uplink != nil {
		if err := uplink(ctx); err != nil {
			return err
		}
	}
	return r.startController(ctx)
}

// startOVSDB creates the database file and serves it on a unix socket in the run directory
// and, when tcp is set, on that remote too.
func (r *Rig) startOVSDB(ctx context.Context, db ovsdbSpec, tcp string) error {
	file := r.path(db.stem + ".db")
	if out, err := exec.CommandContext(ctx, "ovsdb-tool", "create", file, db.schema).CombinedOutput(); err != nil {
		return fmt.Errorf("create %s from %s: %w: %s", file, db.schema, err, out)
	}
	sock := r.path(db.stem + ".sock")
	args := []string{file, "--remote=punix:" + sock}
	if tcp != "" {
		args = append(args, "--remote="+tcp)
	}
	spec := ProcessSpec{Name: db.name, Path: "ovsdb-server", Args: append(args, r.daemonFlags(db.name)...)}
	_, err := r.spawn(ctx, spec, socketAccepts(sock))
	return err
}

// startController starts ovn-controller. Version 23.03 has no --unixctl flag: its control
// socket is $OVN_RUNDIR/ovn-controller.<pid>.ctl, which is also its readiness signal.
func (r *Rig) startController(ctx context.Context) error {
	spec := ProcessSpec{Name: "ovn-controller", Path: "ovn-controller", Args: []string{
		r.OVSEndpoint,
		"--pidfile=" + r.path("ovn-controller.pid"),
		"--log-file=" + r.path("ovn-controller.log"),
		"-vconsole:off", "-vsyslog:off",
	}}
	p, err := r.startChild(spec)
	if err != nil {
		return err
	}
	ctl := filepath.Join(r.Dir, fmt.Sprintf("ovn-controller.%d.ctl", p.PID))
	return waitReady(ctx, p, daemonReadyTimeout, socketAccepts(ctl))
}
