package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// goroutines reads go_goroutines from edgeovn's /metrics (in the rig's namespace).
func (b *bench) goroutines(ctx context.Context) string {
	client := &http.Client{Transport: &http.Transport{DialContext: b.rig.DialContext}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+metricsAddress+"/metrics", nil)
	if err != nil {
		return "?"
	}
	resp, err := client.Do(req)
	if err != nil {
		return "? (" + err.Error() + ")"
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	for line := range strings.Lines(string(raw)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "go_goroutines "); ok {
			return v
		}
	}
	return "?"
}

// kubeovnWatches is how many kubeovn.io watches kube-apiserver serves now (its
// apiserver_longrunning_requests gauge; only edgeovn watches kubeovn.io here), with the
// resources.
func (b *bench) kubeovnWatches(ctx context.Context) string {
	raw, err := b.cl.Kube.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return "? (" + err.Error() + ")"
	}
	total := 0.0
	var resources []string
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_longrunning_requests{") || !strings.Contains(line, `group="kubeovn.io"`) ||
			!strings.Contains(line, `verb="WATCH"`) {
			continue
		}
		_, v, _ := strings.Cut(line, "} ")
		n, _ := strconv.ParseFloat(v, 64)
		if n == 0 {
			continue
		}
		total += n
		if _, r, ok := strings.Cut(line, `resource="`); ok {
			r, _, _ = strings.Cut(r, `"`)
			resources = append(resources, r)
		}
	}
	slices.Sort(resources)
	return fmt.Sprintf("%g (%s)", total, strings.Join(resources, " "))
}
