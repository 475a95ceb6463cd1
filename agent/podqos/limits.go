package podqos

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Kube-OVN's pod annotations, unchanged. Rates are Mbit/s (1 Mbit = 1,000,000 bit), bursts
// Mbit, from the pod's point of view: ingress is what the pod receives, egress what it sends.
const (
	IngressRate  = "ovn.kubernetes.io/ingress_rate"
	EgressRate   = "ovn.kubernetes.io/egress_rate"
	IngressBurst = "ovn.kubernetes.io/ingress_burst"
	EgressBurst  = "ovn.kubernetes.io/egress_burst"
	// netem: latency and jitter in ms, limit in packets, loss in percent.
	Latency = "ovn.kubernetes.io/latency"
	Jitter  = "ovn.kubernetes.io/jitter"
	Limit   = "ovn.kubernetes.io/limit"
	Loss    = "ovn.kubernetes.io/loss"
)

// DefaultMaxRateMbit is the ceiling of a rate when the host's link speed is unknown.
const DefaultMaxRateMbit = 100_000

// Default burst of a shaper without a burst annotation: rate x defaultBurstTime, at least
// minBurstBytes (a shaper's bucket must hold a whole packet, and a few for TCP's sake).
const (
	defaultBurstTime = 20 * time.Millisecond
	minBurstBytes    = 16 << 10
	minRateMbit      = 0.01
)

// Rate is one direction's shaping; the zero value is none.
type Rate struct {
	BitsPerSec uint64
	BurstBytes uint32
}

// On reports whether the direction is limited.
func (r Rate) On() bool { return r.BitsPerSec > 0 }

// Netem is emulated delay and loss on what the pod sends; the zero value is none.
type Netem struct {
	Latency, Jitter time.Duration
	Limit           uint32  // packets queued, 0: netem's default
	LossPercent     float64 // 0-100
}

// On reports whether any netem setting is asked for.
func (n Netem) On() bool { return n != Netem{} }

// Limits is what a pod's annotations ask for.
type Limits struct {
	Ingress, Egress Rate
	Netem           Netem
}

// AnnotationError is one annotation that cannot be applied: its key, its value and why.
type AnnotationError struct {
	Key, Value, Reason string
}

func (e *AnnotationError) Error() string {
	return fmt.Sprintf("annotation %s=%q: %s", e.Key, e.Value, e.Reason)
}

// Parse reads the QoS annotations. maxMbit is the largest rate that makes sense here (the
// host's link speed); a rate above it is refused. Every bad annotation is reported (joined
// *AnnotationError); with any, the Limits are not to be applied.
func Parse(annotations map[string]string, maxMbit float64) (Limits, error) {
	p := parser{a: annotations, max: maxMbit}
	var l Limits
	l.Ingress = p.rate(IngressRate, IngressBurst)
	l.Egress = p.rate(EgressRate, EgressBurst)
	l.Netem = p.netem()
	return l, errors.Join(p.errs...)
}

type parser struct {
	a    map[string]string
	max  float64
	errs []error
}

func (p *parser) fail(key, reason string) {
	p.errs = append(p.errs, &AnnotationError{Key: key, Value: p.a[key], Reason: reason})
}

// number parses a non-negative finite number; ok is false when the annotation is absent or
// bad (reported).
func (p *parser) number(key string) (float64, bool) {
	s, present := p.a[key]
	if !present {
		return 0, false
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	switch {
	case err != nil || math.IsNaN(v) || math.IsInf(v, 0):
		p.fail(key, "not a number")
		return 0, false
	case v < 0:
		p.fail(key, "negative")
		return 0, false
	}
	return v, true
}

func (p *parser) rate(rateKey, burstKey string) Rate {
	_, rateSet := p.a[rateKey]
	mbit, rateOK := p.number(rateKey)
	burst, burstOK := p.number(burstKey)
	switch {
	case burstOK && (!rateSet || (rateOK && mbit == 0)):
		p.fail(burstKey, "a burst without a rate ("+rateKey+")")
		return Rate{}
	case !rateOK || mbit == 0:
		return Rate{}
	case mbit > p.max:
		p.fail(rateKey, fmt.Sprintf("above this host's link speed of %g Mbit/s", p.max))
		return Rate{}
	case mbit < minRateMbit:
		p.fail(rateKey, fmt.Sprintf("below %g Mbit/s, the smallest rate shaped", minRateMbit))
		return Rate{}
	}
	r := Rate{BitsPerSec: uint64(mbit * 1e6)}
	r.BurstBytes = defaultBurst(r.BitsPerSec)
	if burstOK && burst > 0 {
		b := burst * 1e6 / 8
		if b > math.MaxUint32 {
			p.fail(burstKey, fmt.Sprintf("above %d Mbit", uint64(math.MaxUint32)*8/1_000_000))
			return Rate{}
		}
		r.BurstBytes = max(uint32(b), minBurstBytes)
	}
	return r
}

func defaultBurst(bitsPerSec uint64) uint32 {
	b := float64(bitsPerSec) / 8 * defaultBurstTime.Seconds()
	return uint32(min(max(b, minBurstBytes), math.MaxUint32))
}

func (p *parser) netem() Netem {
	var n Netem
	if ms, ok := p.number(Latency); ok {
		n.Latency = p.millis(Latency, ms)
	}
	if ms, ok := p.number(Jitter); ok {
		n.Jitter = p.millis(Jitter, ms)
		if n.Jitter > 0 && n.Latency == 0 {
			p.fail(Jitter, "a jitter without a latency ("+Latency+")")
		}
	}
	if v, ok := p.number(Limit); ok {
		if v != math.Trunc(v) || v > math.MaxUint32 {
			p.fail(Limit, "not a whole number of packets")
		} else {
			n.Limit = uint32(v)
		}
	}
	if v, ok := p.number(Loss); ok {
		if v > 100 {
			p.fail(Loss, "above 100 percent")
		} else {
			n.LossPercent = v
		}
	}
	return n
}

// millis converts ms to a Duration, refusing what netem cannot hold (its times are u32 µs).
func (p *parser) millis(key string, ms float64) time.Duration {
	if ms*1000 > math.MaxUint32 {
		p.fail(key, "above 4294 s")
		return 0
	}
	return time.Duration(ms * float64(time.Millisecond))
}
