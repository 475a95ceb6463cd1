package benchkit

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
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

// Median is the middle value of v, the upper one of an even count (0 when v is empty); v is
// left as it is.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(v))
	return s[len(s)/2]
}

// Rounds lists v's values, rounded to whole numbers, comma separated: each round of a figure.
func Rounds(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strings.Join(parts, ", ")
}
