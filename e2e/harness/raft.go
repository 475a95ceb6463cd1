package harness

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os/exec"
	"strings"
	"time"
)

// DBLayout says where a Cluster's OVN databases run.
type DBLayout int

const (
	// CentralDBs: one NB and one SB ovsdb-server and ovn-northd on the central (the default).
	CentralDBs DBLayout = iota
	// RaftDBs: NB and SB each an ovsdb-server raft cluster over the first RaftMembers hosts
	// (one server per database per member, on the member's underlay address), and ovn-northd
	// on every member, active/standby through the SB lock. The central runs only etcd and
	// kube-apiserver.
	RaftDBs
)

// raftDB is one clustered OVN database: its server, its name in the schema, the port clients
// use and the port the members talk raft on (ovn-ctl's defaults).
type raftDB struct {
	ovsdbSpec
	dbName     string
	clientPort uint16
	raftPort   uint16
}

var (
	raftNB = raftDB{ovsdbSpec: nbDB, dbName: "OVN_Northbound", clientPort: nbTCPPort, raftPort: 6643}
	raftSB = raftDB{ovsdbSpec: sbDB, dbName: "OVN_Southbound", clientPort: sbTCPPort, raftPort: 6644}
)

// DB names a clustered OVN database for the Cluster's raft methods.
type DB string

// The two clustered databases.
const (
	NB DB = "nb"
	SB DB = "sb"
)

func (d DB) raft() (raftDB, error) {
	switch d {
	case NB:
		return raftNB, nil
	case SB:
		return raftSB, nil
	}
	return raftDB{}, fmt.Errorf("database %q: want nb or sb", string(d))
}

// defaultRaftMembers is the usual raft cluster size: it survives one member's loss.
const defaultRaftMembers = 3

// raftMembers is how many hosts carry the databases in o's layout (0 with CentralDBs).
func (o ClusterOptions) raftMembers() int {
	if o.Databases != RaftDBs {
		return 0
	}
	if o.RaftMembers > 0 {
		return o.RaftMembers
	}
	return min(defaultRaftMembers, o.Hosts)
}

// validateLayout reports a layout the cluster cannot have.
func (o ClusterOptions) validateLayout() error {
	switch o.Databases {
	case CentralDBs:
		if o.RaftMembers != 0 {
			return fmt.Errorf("start cluster: RaftMembers %d with the central layout: set Databases to RaftDBs", o.RaftMembers)
		}
	case RaftDBs:
		if n := o.raftMembers(); n < 1 || n > o.Hosts {
			return fmt.Errorf("start cluster: %d raft members on %d hosts: want 1..%d", n, o.Hosts, o.Hosts)
		}
	default:
		return fmt.Errorf("start cluster: unknown database layout %d", int(o.Databases))
	}
	return nil
}

// raftEndpoints is the comma-separated client endpoint list of db over the members, the form
// ovn-nbctl --db and ovn-controller's ovn-remote take.
func raftEndpoints(db raftDB, members int) string {
	eps := make([]string, members)
	for i := range members {
		eps[i] = "tcp:" + netip.AddrPortFrom(hostIP(i), db.clientPort).String()
	}
	return strings.Join(eps, ",")
}

// SplitEndpoints splits a rig's endpoint (one, or a raft cluster's comma-separated members)
// into the list edgeovn's repeated --ovn-nb / --ovn-sb flags and libovsdb take.
func SplitEndpoints(ep string) []string { return strings.Split(ep, ",") }

// startRaft creates and starts both clustered databases on the first n hosts (the first
// creates the cluster, the others join it through the first), waits until every member has
// joined, then starts ovn-northd on each member.
func (c *Cluster) startRaft(ctx context.Context, n int) error {
	for _, db := range []raftDB{raftNB, raftSB} {
		for i, h := range c.Hosts[:n] {
			if err := h.createRaftFile(ctx, db, i == 0); err != nil {
				return err
			}
			if _, err := h.startRaftServer(ctx, db); err != nil {
				return err
			}
		}
		for _, h := range c.Hosts[:n] {
			if err := h.waitRaftMember(ctx, db); err != nil {
				return err
			}
		}
	}
	for _, h := range c.Hosts[:n] {
		if err := h.startRaftNorthd(ctx); err != nil {
			return err
		}
	}
	c.opts.logger().Info("OVN databases up as raft clusters", "members", n, "nb", raftEndpoints(raftNB, n), "sb", raftEndpoints(raftSB, n))
	return nil
}

func (r *Rig) raftLocal(db raftDB) string {
	return "tcp:" + netip.AddrPortFrom(r.NodeIP, db.raftPort).String()
}

// createRaftFile writes the member's database file: a new cluster on the first member, a
// join request through the first member's raft address on the others.
func (r *Rig) createRaftFile(ctx context.Context, db raftDB, first bool) error {
	file := r.path(db.stem + ".db")
	args := []string{"create-cluster", file, db.schema, r.raftLocal(db)}
	if !first {
		args = []string{"join-cluster", file, db.dbName, r.raftLocal(db), "tcp:" + netip.AddrPortFrom(hostIP(0), db.raftPort).String()}
	}
	if out, err := exec.CommandContext(ctx, "ovsdb-tool", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("ovsdb-tool %s for %s: %w: %s", args[0], file, err, strings.TrimSpace(string(out)))
	}
	r.raftMember = true
	return nil
}

// startRaftServer serves the member's clustered database file on the run directory's unix
// socket and on the client port of the member's underlay address. A member restarted after
// a kill reads its file again and rejoins by itself.
func (r *Rig) startRaftServer(ctx context.Context, db raftDB) (*Process, error) {
	sock := r.path(db.stem + ".sock")
	args := []string{r.path(db.stem + ".db"), "--remote=punix:" + sock,
		"--remote=ptcp:" + fmt.Sprint(db.clientPort) + ":" + r.NodeIP.String()}
	spec := ProcessSpec{Name: db.name, Path: "ovsdb-server", Args: append(args, r.daemonFlags(db.name)...)}
	return r.spawn(ctx, spec, socketAccepts(sock))
}

// startRaftNorthd starts ovn-northd on a member, pointed at both clusters' member lists.
func (r *Rig) startRaftNorthd(ctx context.Context) error {
	n := strings.Count(r.NBEndpoint, ",") + 1
	northd := ProcessSpec{Name: "ovn-northd", Path: "ovn-northd", Args: append([]string{
		"--ovnnb-db=" + raftEndpoints(raftNB, n), "--ovnsb-db=" + raftEndpoints(raftSB, n),
	}, r.daemonFlags("ovn-northd")...)}
	_, err := r.spawn(ctx, northd, socketAccepts(r.path("ovn-northd.ctl")))
	return err
}

// raftJoinTimeout bounds a member's join (it takes a few election timeouts at worst).
const raftJoinTimeout = 30 * time.Second

// waitRaftMember waits until the member's server says it is a cluster member.
func (r *Rig) waitRaftMember(ctx context.Context, db raftDB) error {
	ctx, cancel := context.WithTimeout(ctx, raftJoinTimeout)
	defer cancel()
	var last string
	for {
		st, err := r.raftStatus(ctx, db)
		if err == nil && strings.Contains(st, "Status: cluster member") {
			return nil
		}
		last = st
		if err != nil {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s on %s: not a cluster member after %v: %s", db.dbName, r.NodeIP, raftJoinTimeout, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// raftStatus is the member's `cluster/status` report for db.
func (r *Rig) raftStatus(ctx context.Context, db raftDB) (string, error) {
	out, err := r.Run(ctx, "ovs-appctl", "-t", r.path(db.name+".ctl"), "cluster/status", db.dbName)
	return string(out), err
}

// RaftStatus is host's `ovs-appctl cluster/status` report for db (nb or sb).
func (r *Rig) RaftStatus(ctx context.Context, db DB) (string, error) {
	d, err := db.raft()
	if err != nil {
		return "", err
	}
	if !r.raftMember {
		return "", fmt.Errorf("raft status: host %s carries no %s member", r.NodeIP, d.dbName)
	}
	return r.raftStatus(ctx, d)
}

// RaftMembers are the hosts that carry the clustered databases (none in the central layout).
func (c *Cluster) RaftMembers() []*Rig { return c.Hosts[:c.opts.raftMembers()] }

// RaftLeader returns the member whose server reports itself leader of db. Right after an
// election, or with a member down, it asks every member still answering.
func (c *Cluster) RaftLeader(ctx context.Context, db DB) (*Rig, error) {
	members := c.RaftMembers()
	if len(members) == 0 {
		return nil, errors.New("raft leader: the cluster's databases are not clustered (central layout)")
	}
	var errs []error
	for _, h := range members {
		st, err := h.RaftStatus(ctx, db)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if strings.Contains(st, "Role: leader") {
			return h, nil
		}
	}
	return nil, fmt.Errorf("raft leader of %s: no member reports itself leader: %w", db, errors.Join(errs...))
}

// DBServerName is the process name of db's ovsdb-server in a member's rig (for Daemon and
// RestartDaemon).
func DBServerName(db DB) string {
	d, err := db.raft()
	if err != nil {
		return ""
	}
	return d.name
}
