// Package health decides whether this host's datapath can take pods, and keeps deciding:
// a list of named checks (the Open_vSwitch database answering, br-int present, ovs-vswitchd
// and ovn-controller answering on their control sockets, ovn0 bound by OVN) is evaluated
// live, all checks at once, on every CNI STATUS and ADD, on the events that change what they
// look at (Trigger: the node role's link and Open_vSwitch watches) and on a timer (every
// Interval while ready, every RetryInterval while not), and each change of the verdict is
// reported (to systemd as STATUS=, and READY=1 the first time).
//
// Invariants: the first evaluation is Attach's caller's, made once the verdict can be yes
// (Triggers before it are ignored), so a healthy start says ready once and nothing before it
// claims so; a check never says yes on a state it could not observe (a timeout, an
// unreadable pid file or a closed socket is "not ready"); every evaluation runs every check,
// so the reason lists everything that is wrong; a check marked Liveness also withholds the
// systemd watchdog, because restarting edgeovn is what can fix it, while a dead ovs-vswitchd
// only makes the node not ready.
//
// Concurrency: a Monitor is safe for concurrent use; one evaluation runs at a time (its
// checks run at once, so it lasts as long as the slowest), and callers that arrive meanwhile
// (concurrent ADDs, STATUS while the timer runs) share its verdict, except Recheck's, which
// come from a caller that has just changed what the checks see and wait for the next one;
// OnChange is called with the Monitor's lock released, one call at a time, in order.
package health
