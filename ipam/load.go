package ipam

import "sync"

// indexBulk indexes loaded allocations on the assumption that the store kept its invariants
// (one allocation per owner, one holder per address and per MAC), which its constraints
// guarantee. It checks the assumption by map sizes instead of a lookup before every insert,
// and fills the owner and pod indexes on one core while the MAC and address indexes fill on
// another: at start-up these random map accesses are most of the time. It reports false if
// any record is inconsistent (or names an unknown subnet or a malformed MAC); the caller
// then starts over with the careful path, which names each bad record.
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
		ownersOK = m.indexOwners(as)
	}()
	go func() {
		defer wg.Done()
		addrsOK = m.indexAddrs(as)
	}()
	wg.Wait()
	return ownersOK && addrsOK
}

// indexOwners fills m.owners and m.pods. The pods' interface lists share one backing array:
// most pods have one interface; capacity 1 per pod makes a second interface reallocate rather
// than overwrite a neighbour.
func (m *IPAM) indexOwners(as []Allocation) bool {
	ifaces := make([]string, len(as))
	for i := range as {
		a := &as[i]
		m.owners[a.Owner] = a
		ifaces[i] = a.Owner.Interface
		if cur, ok := m.pods[a.Owner.Pod]; ok {
			m.pods[a.Owner.Pod] = append(cur, a.Owner.Interface)
		} else {
			m.pods[a.Owner.Pod] = ifaces[i : i+1 : i+1]
		}
	}
	return len(m.owners) == len(as)
}

// indexAddrs fills m.macs and each subnet's holders.
func (m *IPAM) indexAddrs(as []Allocation) bool {
	ips := 0
	var last *subnet
	for i := range as {
		a := &as[i]
		m.macs[keyOf(a.MAC)] = a.Owner
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
	return len(m.macs) == len(as) && held == ips
}

// clearIndexes empties the owner, pod, MAC and address indexes, keeping their capacity.
func (m *IPAM) clearIndexes() {
	clear(m.owners)
	clear(m.pods)
	clear(m.macs)
	for _, sn := range m.subnets {
		clear(sn.holders)
	}
}
