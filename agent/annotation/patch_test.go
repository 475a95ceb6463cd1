package annotation

import (
	"encoding/json"
	"testing"
)

func TestPatch(t *testing.T) {
	want := map[string]string{"ovn.kubernetes.io/allocated": "true", "ovn.kubernetes.io/ip_address": "10.42.0.2"}
	tests := []struct {
		name    string
		current map[string]string
		patch   bool
	}{
		{"no annotations", nil, true},
		{"others only", map[string]string{"team": "edge"}, true},
		{"one differs", map[string]string{"ovn.kubernetes.io/allocated": "true", "ovn.kubernetes.io/ip_address": "10.42.0.9"}, true},
		{"all there, and others", map[string]string{"team": "edge", "ovn.kubernetes.io/allocated": "true", "ovn.kubernetes.io/ip_address": "10.42.0.2"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Patch(tt.current, want)
			if err != nil {
				t.Fatal(err)
			}
			if (p != nil) != tt.patch {
				t.Fatalf("patch = %s, want one: %v", p, tt.patch)
			}
			if p == nil {
				return
			}
			var got struct {
				Metadata struct {
					Annotations map[string]string `json:"annotations"`
				} `json:"metadata"`
			}
			if err := json.Unmarshal(p, &got); err != nil {
				t.Fatal(err)
			}
			// A merge patch of our keys only: the others' annotations are never rewritten.
			if len(got.Metadata.Annotations) != len(want) || got.Metadata.Annotations["ovn.kubernetes.io/ip_address"] != "10.42.0.2" {
				t.Fatalf("patch %s", p)
			}
		})
	}
}
