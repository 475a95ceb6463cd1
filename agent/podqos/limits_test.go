package podqos

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		a    map[string]string
		want Limits
	}{
		{"none", nil, Limits{}},
		{"zero is no limit", map[string]string{IngressRate: "0", EgressRate: "0"}, Limits{}},
		// Mbit/s are 10^6 bit/s (Kube-OVN #4867 was off by 1000).
		{"ingress 10", map[string]string{IngressRate: "10"}, Limits{Ingress: Rate{BitsPerSec: 10_000_000, BurstBytes: 25_000}}},
		{"egress 5 is egress only", map[string]string{EgressRate: "5"}, Limits{Egress: Rate{BitsPerSec: 5_000_000, BurstBytes: minBurstBytes}}},
		{"fraction", map[string]string{EgressRate: " 0.5 "}, Limits{Egress: Rate{BitsPerSec: 500_000, BurstBytes: minBurstBytes}}},
		{"burst in Mbit", map[string]string{IngressRate: "100", IngressBurst: "8"}, Limits{Ingress: Rate{BitsPerSec: 100_000_000, BurstBytes: 1_000_000}}},
		{"burst floor", map[string]string{IngressRate: "100", IngressBurst: "0.001"}, Limits{Ingress: Rate{BitsPerSec: 100_000_000, BurstBytes: minBurstBytes}}},
		{"burst 0 is the default", map[string]string{IngressRate: "100", IngressBurst: "0"}, Limits{Ingress: Rate{BitsPerSec: 100_000_000, BurstBytes: 250_000}}},
		{"at the link speed", map[string]string{EgressRate: "1000"}, Limits{Egress: Rate{BitsPerSec: 1e9, BurstBytes: 2_500_000}}},
		{"netem", map[string]string{Latency: "50", Jitter: "5", Limit: "100", Loss: "2.5"},
			Limits{Netem: Netem{Latency: 50 * time.Millisecond, Jitter: 5 * time.Millisecond, Limit: 100, LossPercent: 2.5}}},
		{"other annotations ignored", map[string]string{"ovn.kubernetes.io/ip_address": "x"}, Limits{}},
	}
	for _, tt := range tests {
		got, err := Parse(tt.a, 1000)
		if err != nil || got != tt.want {
			t.Errorf("%s: Parse = %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
	}
}

func TestParseRefusesBadInput(t *testing.T) {
	tests := []struct {
		name string
		a    map[string]string
		keys []string // each must be named, with its value, in the error
	}{
		{"negative", map[string]string{IngressRate: "-5"}, []string{IngressRate + `="-5"`}},
		{"not a number", map[string]string{EgressRate: "ten"}, []string{EgressRate + `="ten"`}},
		{"unit suffix", map[string]string{EgressRate: "10M"}, []string{EgressRate + `="10M"`}},
		{"NaN", map[string]string{EgressRate: "NaN"}, []string{EgressRate}},
		{"Inf", map[string]string{IngressRate: "+Inf"}, []string{IngressRate}},
		{"above the link", map[string]string{IngressRate: "100000"}, []string{IngressRate + `="100000"`, "link speed of 1000"}},
		{"too small", map[string]string{IngressRate: "0.000001"}, []string{IngressRate}},
		{"burst without rate", map[string]string{EgressBurst: "2"}, []string{EgressBurst + `="2"`, "without a rate"}},
		{"burst with zero rate", map[string]string{IngressRate: "0", IngressBurst: "2"}, []string{IngressBurst}},
		{"bad burst", map[string]string{IngressRate: "10", IngressBurst: "-1"}, []string{IngressBurst}},
		{"huge burst", map[string]string{IngressRate: "10", IngressBurst: "1e9"}, []string{IngressBurst}},
		{"loss over 100", map[string]string{Loss: "101"}, []string{Loss}},
		{"jitter alone", map[string]string{Jitter: "5"}, []string{Jitter, "without a latency"}},
		{"limit fraction", map[string]string{Limit: "1.5"}, []string{Limit}},
		{"latency not a number", map[string]string{Latency: "10ms"}, []string{Latency + `="10ms"`}},
		{"two at once", map[string]string{IngressRate: "x", EgressRate: "-1"}, []string{IngressRate, EgressRate}},
	}
	for _, tt := range tests {
		_, err := Parse(tt.a, 1000)
		var ae *AnnotationError
		if !errors.As(err, &ae) {
			t.Errorf("%s: Parse error %v, want an *AnnotationError", tt.name, err)
			continue
		}
		for _, k := range tt.keys {
			if !strings.Contains(err.Error(), k) {
				t.Errorf("%s: error %q does not say %q", tt.name, err, k)
			}
		}
	}
}
