package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// apiCalls is kube-apiserver's request count by verb and resource (apiserver_request_total,
// every client summed), read from its /metrics. Unlike the burst's timings, the requests a burst
// costs do not move with the machine's load, so two builds compare on them directly.
type apiCalls map[string]float64

// readAPICalls reads the API server's request counters.
func (b *bench) readAPICalls(ctx context.Context) (apiCalls, error) {
	raw, err := b.cl.Kube.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("read kube-apiserver's /metrics: %w", err)
	}
	return parseAPICalls(raw), nil
}

// terminated is the key prefix of the watchers kube-apiserver closed because their client did
// not read its events fast enough (apiserver_terminated_watchers_total, by resource): such a
// client re-watches, and relists when its resource version has left the watch cache.
const terminated = "TERMINATED watchers of "

// parseAPICalls sums apiserver_request_total's samples by "VERB resource[/subresource]", and
// apiserver_terminated_watchers_total's by resource under terminated.
func parseAPICalls(raw []byte) apiCalls {
	out := apiCalls{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		metric, rest, ok := strings.Cut(line, "{")
		if !ok || (metric != "apiserver_request_total" && metric != "apiserver_terminated_watchers_total") {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		out[callKey(metric, labels)] += v
	}
	return out
}

// callKey names a sample: "VERB resource[/subresource]", or terminated+resource.
func callKey(metric, labels string) string {
	if metric == "apiserver_terminated_watchers_total" {
		return terminated + label(labels, "resource")
	}
	key := label(labels, "verb") + " " + label(labels, "resource")
	if sub := label(labels, "subresource"); sub != "" {
		key += "/" + sub
	}
	return key
}

// label is one label's value in a sample's label list, "" if absent.
func label(labels, name string) string {
	_, rest, ok := strings.Cut(","+labels, ","+name+`="`)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, `"`)
	return v
}

// since is the requests made from c0 to c, most first, as "n VERB resource" parts; per says
// how many pods they were for.
func (c apiCalls) since(c0 apiCalls, per int) string {
	type part struct {
		key string
		n   float64
	}
	var parts []part
	for k, v := range c {
		if d := v - c0[k]; d > 0 {
			parts = append(parts, part{k, d})
		}
	}
	slices.SortFunc(parts, func(a, b part) int { return cmp.Or(cmp.Compare(b.n, a.n), strings.Compare(a.key, b.key)) })
	var total float64
	out := make([]string, 0, len(parts))
	var closed []string
	for _, p := range parts {
		if r, ok := strings.CutPrefix(p.key, terminated); ok {
			closed = append(closed, fmt.Sprintf("%s %.0f", r, p.n))
			continue
		}
		total += p.n
		out = append(out, fmt.Sprintf("%s %.0f", p.key, p.n))
	}
	s := fmt.Sprintf("API requests over the burst (every client): %.0f, %.2f a pod: %s", total, total/float64(per), strings.Join(out, ", "))
	if len(closed) > 0 {
		s += "; watchers closed by kube-apiserver for not keeping up: " + strings.Join(closed, ", ")
	}
	return s
}
