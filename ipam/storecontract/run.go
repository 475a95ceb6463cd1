package storecontract

import (
	"context"
	"testing"

	"github.com/edgeovn/edgeovn/ipam"
)

// Open returns an empty store for one test case; the caller's cleanup closes it.
type Open func(t *testing.T) ipam.Store

// Run runs every case of the contract, each on a fresh store from open.
func Run(t *testing.T, open Open) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.run(t, &fixture{t: t, ctx: context.Background(), st: open(t)})
		})
	}
}

type testCase struct {
	name string
	run  func(t *testing.T, f *fixture)
}

var cases = []testCase{
	{"EmptyLoadsEmpty", emptyLoadsEmpty},
	{"PutSubnetVisibleAndReplaced", putSubnetVisibleAndReplaced},
	{"DeleteSubnetDropsItsReleased", deleteSubnetDropsItsReleased},
	{"PutAllocationLoadsAsWritten", putAllocationLoadsAsWritten},
	{"PutAllocationReplacesOwners", putAllocationReplacesOwners},
	{"PutAllocationUnreleases", putAllocationUnreleases},
	{"ReleaseRecordsAddresses", releaseRecordsAddresses},
	{"PutReleasedCreatesOrReplaces", putReleasedCreatesOrReplaces},
	{"AddressOfAnotherOwnerConflicts", addressOfAnotherOwnerConflicts},
	{"AddressInAnotherSubnetIsFree", addressInAnotherSubnetIsFree},
	{"MACOfAnotherOwnerConflicts", macOfAnotherOwnerConflicts},
	{"BatchAppliesInOrder", batchAppliesInOrder},
	{"FailedBatchLeavesNothing", failedBatchLeavesNothing},
	{"EmptyChangeInvalid", emptyChangeInvalid},
	{"LoadedStateIsTheCallers", loadedStateIsTheCallers},
}
