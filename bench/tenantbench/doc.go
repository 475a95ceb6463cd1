// Command tenantbench measures edgeovn's tenant features (issue 28) on the real rig (OVN, OVS
// userspace datapath, kube-apiserver, edgeovn's controller and node roles) and prints two
// tables:
//
//   - a SecurityGroup rule change to effect, with -pods pods spread over -groups groups
//     (ovn.kubernetes.io/security_groups): an ingress allow rule added to and removed from one
//     group at a time, -rounds times each way, timed from the API write to the rule's ACL in
//     OVN northbound and to real traffic flipping (a TCP probe from a pod in no group to a
//     pod in every group getting through, or being dropped); p50, p95 and max;
//   - northbound rows, southbound logical flows and ovn-northd's CPU per 100 pods with the
//     pods spread over -vpcs custom VPCs (a Vpc and its Subnet each) against all in one, each
//     on a rig of its own; the CPU is ovn-northd's utime+stime (/proc/PID/stat) from the first
//     object created to northd settled.
//
// The third figure of the issue, CNI ADD in a custom VPC against the default, is cnibench -vpc.
//
//	go run ./bench/tenantbench -bin bin -pods 500 -groups 10 -vpcs 5 -rounds 40   (as root, after make build)
package main
