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

// parseAPICalls sums apiserver_request_total's samples by "VERB resource[/subresource]".
func parseAPICalls(raw []byte) apiCalls {
	out := apiCalls{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		labels, value, ok := strings.Cut(strings.TrimPrefix(line, "apiserver_request_total{"), "} ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		key := label(labels, "verb") + " " + label(labels, "resource")
		if sub := label(labels, "subresource"); sub != "" {
			key += "/" + sub
		}
		out[key] += v
	}
	return out
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
	for _, p := range parts {
		total += p.n
		out = append(out, fmt.Sprintf("%s %.0f", p.key, p.n))
	}
	return fmt.Sprintf("API requests over the burst (every client): %.0f, %.2f a pod: %s", total, total/float64(per), strings.Join(out, ", "))
}
