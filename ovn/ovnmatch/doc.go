// Package ovnmatch checks the syntax of an OVN match expression (ovn-sb(5) "Logical_Flow
// match"), so a policy a user wrote is refused before it reaches northbound: ovsdb-server
// stores any string, and northd and ovn-controller drop a flow whose match does not parse
// with only a log line, which leaves the router without the rule its owner asked for.
//
// Check accepts what OVN's expression parser accepts for the common subset: fields and
// symbols (dotted identifiers, optionally subscripted: reg0[0..3]), relational operators
// (== != < <= > >=) against constants (decimal and hex integers, IPv4/IPv6 addresses and
// prefixes, address/mask, MACs, quoted strings, $address_set, @port_group) or sets of them in
// braces, !, parentheses, && and ||, and OVN's rule that && and || do not mix without
// parentheses. It does not check that a field name exists in OVN's symbol table beyond its
// form, nor prerequisites. Pure logic, no I/O.
package ovnmatch
