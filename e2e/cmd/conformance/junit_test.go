package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"
)

const sampleReport = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="5" disabled="0" errors="0" failures="1" time="100">
  <testsuite name="Kubernetes e2e suite" package="/" tests="5">
    <testcase name="[sig-network] Services should serve a basic endpoint from pods  [Conformance]" classname="Kubernetes e2e suite" status="passed" time="12.5"></testcase>
    <testcase name="[It] [sig-network] DNS should provide DNS for services  [Conformance]" classname="Kubernetes e2e suite" status="failed" time="300">
      <failure message="

Timed out after 300s: dig never answered" type="failed">long description</failure>
    </testcase>
    <testcase name="[It] [sig-network] Proxy version v1 should proxy through a service and a pod [Conformance]" classname="Kubernetes e2e suite" status="failed" time="7.8">
      <failure message="" type="failed">[FAILED] 0 (503; 21ms): path /api/v1/namespaces/proxy-8701/pods/https:proxy-service:460/proxy/ gave status error&#xA;second line</failure>
    </testcase>
    <testcase name="[sig-network] Netpol NetworkPolicy between server and client should support a 'default-deny-ingress' policy [Feature:NetworkPolicy]" classname="Kubernetes e2e suite" status="skipped" time="0">
      <skipped message="skipped - Requires at least 2 nodes (not 1)"></skipped>
    </testcase>
    <testcase name="[sig-network] Netpol [Feature:SCTPConnectivity] should enforce policy based on Ports [Feature:NetworkPolicy]" classname="Kubernetes e2e suite" status="skipped" time="0">
      <skipped message="skipped"></skipped>
    </testcase>
    <testcase name="[sig-storage] Volumes should store data" classname="Kubernetes e2e suite" status="skipped" time="0"><skipped message="skipped"></skipped></testcase>
  </testsuite>
</testsuites>`

// TestReportOutcomes: selected specs only, each with its outcome; a skip says the
// framework's reason or the rule's, a failure the first line of its message.
func TestReportOutcomes(t *testing.T) {
	got, err := parseJUnit(strings.NewReader(sampleReport), singleStack)
	if err != nil {
		t.Fatal(err)
	}
	want := []result{
		{Name: "[sig-network] Services should serve a basic endpoint from pods  [Conformance]", Outcome: "pass", Seconds: 12.5},
		{Name: "[sig-network] DNS should provide DNS for services  [Conformance]", Outcome: "fail", Reason: "Timed out after 300s: dig never answered", Seconds: 300},
		{Name: "[sig-network] Proxy version v1 should proxy through a service and a pod [Conformance]", Outcome: "fail", Reason: "0 (503; 21ms): path /api/v1/namespaces/proxy-8701/pods/https:proxy-service:460/proxy/ gave status error", Seconds: 7.8},
		{Name: "[sig-network] Netpol NetworkPolicy between server and client should support a 'default-deny-ingress' policy [Feature:NetworkPolicy]", Outcome: "skip", Reason: "Requires at least 2 nodes (not 1)"},
		{Name: "[sig-network] Netpol [Feature:SCTPConnectivity] should enforce policy based on Ports [Feature:NetworkPolicy]", Outcome: "skip", Reason: skipRules[1].reason},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d results %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("result %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestNotRunIsNoSkip: a selected spec skipped with no reason (outside -focus, or an interrupt
// came first) says "not run", not "skip".
func TestNotRunIsNoSkip(t *testing.T) {
	name := "[sig-network] Netpol NetworkPolicy between server and client should support allow-all policy [Feature:NetworkPolicy]"
	c := junitCase{Name: name, Status: "skipped", Skipped: &struct {
		Message string `xml:"message,attr"`
	}{Message: "skipped"}}
	if got := outcome(name, c); got.Outcome != notRun || got.Reason == "" {
		t.Errorf("got %+v, want outcome %q with its reason", got, notRun)
	}
}

// TestReportRefusesGarbage: a report that is not JUnit XML is an error, not an empty table.
func TestReportRefusesGarbage(t *testing.T) {
	if _, err := parseJUnit(strings.NewReader("Ran 0 of 7000 specs"), singleStack); err == nil {
		t.Fatal("parsed text that is not XML")
	}
	if _, err := readReport(t.TempDir(), singleStack); err == nil || !strings.Contains(err.Error(), "no JUnit report") {
		t.Fatalf("empty report dir: %v, want an error naming the missing report", err)
	}
}

// TestTableRows: one row per spec across the runs, a dash where a run lacks it, totals.
func TestTableRows(t *testing.T) {
	runs := []modeRun{
		{mode: allModes["kube-proxy"], setup: 40 * time.Second, specs: time.Minute, results: []result{{Name: "[sig-network] A", Outcome: "pass"}, {Name: "[sig-network] B", Outcome: "fail", Reason: "x|y"}}},
		{mode: allModes["edgeovn"], results: []result{{Name: "[sig-network] A", Outcome: "pass"}}},
	}
	var b bytes.Buffer
	printTable(&b, runs)
	out := b.String()
	for _, want := range []string{
		"| test | with kube-proxy (iptables) | without kube-proxy (edgeovn) | reason (skip) or failure |",
		"| A | pass | pass |  |",
		`| B | fail | - | x\|y |`,
		"with kube-proxy (iptables): 1 pass, 1 fail, 0 skip, 0 not run; cluster up in 40s, specs 1m0s",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// TestFocus: the selected specs are the sig-network Conformance and NetworkPolicy ones and the
// Services specs of external IPs and traffic policies (not the cloud LoadBalancer ones); -focus
// replaces the expression e2e.test gets.
func TestFocus(t *testing.T) {
	for name, want := range map[string]bool{
		"[sig-network] DNS should provide DNS for services  [Conformance]":                                                                         true,
		"[sig-network] Netpol NetworkPolicy between server and client should deny [Feature:NetworkPolicy]":                                         true,
		"[sig-network] NetworkPolicy API should support creating NetworkPolicy API operations":                                                     true,
		"[sig-network] Services should be rejected when no endpoints exist":                                                                        false,
		"[sig-network] Services should be possible to connect to a service via ExternalIP when the external IP is not assigned to a node":          true,
		"[sig-network] Services should respect internalTrafficPolicy=Local Pod to Pod":                                                             true,
		"[sig-network] Services should fallback to local terminating endpoints when there are no ready endpoints with externalTrafficPolicy=Local": true,
		"[sig-network] Services should serve endpoints on same port and different protocol for internal traffic on Type LoadBalancer ":             true,
		"[sig-network] Services should implement NodePort and HealthCheckNodePort correctly when ExternalTrafficPolicy changes":                    true,
		"[sig-network] LoadBalancers should only allow access from service loadbalancer source ranges [Feature:LoadBalancer] [Slow]":               false,
		"[sig-apps] Deployment should run [Conformance]":                                                                                           false,
	} {
		if got := regexpMatch(t, narrowed(singleStack, ""), name); got != want || selected(singleStack, name) != want {
			t.Errorf("focus on %q = %v (selected %v), want %v", name, got, selected(singleStack, name), want)
		}
	}
	if narrowed(singleStack, "DNS") != "DNS" {
		t.Errorf("-focus DNS gave %q", narrowed(singleStack, "DNS"))
	}
}

func regexpMatch(t *testing.T, expr, s string) bool {
	t.Helper()
	re, err := regexp.Compile(expr)
	if err != nil {
		t.Fatal(err)
	}
	return re.MatchString(s)
}

// TestImageNamesChecked: a framework image list lacking one built here is an error naming it.
func TestImageNamesChecked(t *testing.T) {
	list := "registry.k8s.io/e2e-test-images/agnhost:2.56\nregistry.k8s.io/pause:3.10.1\n"
	if err := missingImages(list, []string{"registry.k8s.io/pause:3.10.1"}); err != nil {
		t.Fatal(err)
	}
	err := missingImages(list, []string{"registry.k8s.io/e2e-test-images/agnhost:2.55"})
	if err == nil || !strings.Contains(err.Error(), "agnhost:2.55") {
		t.Fatalf("got %v, want an error naming agnhost:2.55", err)
	}
}
