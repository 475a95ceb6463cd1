package annotation

import (
	"encoding/json"
	"fmt"
	"maps"
)

// Patch is the merge patch that sets want on an object annotated current, or nil when
// current already carries all of want.
func Patch(current, want map[string]string) ([]byte, error) {
	merged := maps.Clone(current)
	if merged == nil {
		merged = map[string]string{}
	}
	maps.Copy(merged, want)
	if maps.Equal(merged, current) {
		return nil, nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": want}})
	if err != nil {
		return nil, fmt.Errorf("encode annotations: %w", err)
	}
	return patch, nil
}
