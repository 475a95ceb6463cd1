package ipam

import "sync"

// indexBulk indexes loaded allocations on the assumption that the store kept its invariants
// (one allocation per owner, one holder per address and per MAC), which its constraints
// guarantee. It checks the assumption by counts instead of a lookup before every insert, and
// fills the owner and MAC indexes on one core while the address indexes fill on another: at
// start-up these random map accesses are most of the time. It reports false if any record is
// inconsistent (or names an unknown subnet or a malformed MAC); the caller then starts over
// with the careful path, which names each bad record.
func (m *IPAM) indexBulk(as []Allocation) bool {
	for i := range as {
		if m.subnets[as[i].Subnet] == nil || validMAC(as[i].MAC) != nil {
			return false
		}
	}
	var wg sync.WaitGroup
	var ownersOK, addrsOK bool
	wg.Add(2)
	go func() {
		defer wg.Done()
		ownersOK = m.owners.putLoaded(as) && m.indexMACs(as)
	}()
	go func() {
		defer wg.Done()
		addrsOK = m.indexAddrs(as)
	}()
	wg.Wait()
	return ownersOK && addrsOK
}

// indexMACs fills m.macs.
func (m *IPAM) indexMACs(as []Allocation) bool {
	for i := range as {
		m.macs[keyOf(as[i].MAC)] = as[i].Owner
	}
	return len(m.macs) == len(as)
}

// indexAddrs fills each subnet's holders.
func (m *IPAM) indexAddrs(as []Allocation) bool {
	ips := 0
	var last *subnet
	for i := range as {
		a := &as[i]
		sn := last
		if sn == nil || sn.spec.Name != a.Subnet {
			sn = m.subnets[a.Subnet]
			last = sn
		}
		for _, ip := range a.IPs {
			sn.holders[ip] = a.Owner
			ips++
		}
	}
	held := 0
	for _, sn := range m.subnets {
		held += len(sn.holders)
	}
	return held == ips
}

// clearIndexes empties the owner, MAC and address indexes, keeping their capacity.
func (m *IPAM) clearIndexes() {
	m.owners.clear()
	clear(m.macs)
	for _, sn := range m.subnets {
		clear(sn.holders)
	}
}
