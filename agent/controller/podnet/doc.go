// Package podnet says which pods the controller role wires, in words the core and its
// features (subnets, policies) share: a pod wants a network when it is scheduled and not on
// the host's network, holds one until it completes, and may hold an address in any subnet but
// join, whose addresses are the nodes'. It is pure: API types only.
package podnet
