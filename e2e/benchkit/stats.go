package benchkit

import (
	"fmt"
	"slices"
	"time"
)

// Pct is the p-th percentile of d (0 when d is empty); d is left as it is.
func Pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	d = slices.Sorted(slices.Values(d))
	return d[min(len(d)-1, (len(d)*p)/100)]
}

// Ms formats d in milliseconds with one decimal.
func Ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
