package main

import (
	"context"
	"fmt"
	"os/exec"
	"strings"

	"github.com/edgeovn/edgeovn/e2e/images"
)

// checkImageNames asks e2e.test for the images its framework uses (--list-images) and fails
// when one of the upstream images built here is not among them: a new e2e.test version
// moved an image's tag, and its pods would try to pull it.
func checkImageNames(ctx context.Context, e2eTest string) error {
	out, err := exec.CommandContext(ctx, e2eTest, "--list-images").Output()
	if err != nil {
		return fmt.Errorf("e2e.test --list-images: %w", err)
	}
	return missingImages(string(out), []string{images.Agnhost, images.JessieDNSUtils, images.BusyBox, images.UpstreamPause})
}

// missingImages reports the wanted names the list (one image a line) lacks.
func missingImages(list string, want []string) error {
	have := map[string]bool{}
	for _, l := range strings.Split(list, "\n") {
		have[strings.TrimSpace(l)] = true
	}
	var missing []string
	for _, w := range want {
		if !have[w] {
			missing = append(missing, w)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("e2e.test does not use the images built for it: %s (update e2e/images/upstream.go to its --list-images)", strings.Join(missing, ", "))
	}
	return nil
}
