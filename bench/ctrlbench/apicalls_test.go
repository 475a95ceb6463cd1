package main

import (
	"strings"
	"testing"
)

func TestParseAPICalls(t *testing.T) {
	raw := `# HELP apiserver_request_total x
apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1"} 10
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="PATCH",version="v1"} 7
apiserver_request_total{code="409",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="PATCH",version="v1"} 1
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="status",verb="PATCH",version="v1"} 2
apiserver_request_duration_seconds_count{verb="PATCH"} 99
apiserver_terminated_watchers_total{group="",resource="pods"} 3
`
	got := parseAPICalls([]byte(raw))
	want := apiCalls{"POST pods": 10, "PATCH pods": 8, "PATCH pods/status": 2, terminated + "pods": 3}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %v, want %v", k, got[k], v)
		}
	}
	s := got.since(apiCalls{"POST pods": 4}, 6)
	if !strings.Contains(s, ": 16, 2.67 a pod: PATCH pods 8, POST pods 6, PATCH pods/status 2; watchers closed by kube-apiserver for not keeping up: pods 3") {
		t.Errorf("since: %s", s)
	}
}
