package annotation

import (
	"encoding/json"
	"fmt"
)

// NetworkErrorKey carries, on a pod whose networks the controller cannot allocate (a bad
// attachment selection or default-network: a missing NAD, a NAD no Subnet serves, malformed
// JSON, two attachments on one interface, a pinned address outside its Subnet), the reason,
// as its AttachmentFailed Event says it. The node's CNI ADD for a network of the pod not yet
// allocated fails at once with it instead of waiting out its timeout. The controller removes
// it once the pod's networks are allocated.
const NetworkErrorKey = "edgeovn.io/network-error"

// RemovePatch is the merge patch that removes key from an object's annotations, or nil when
// current does not carry it.
func RemovePatch(current map[string]string, key string) ([]byte, error) {
	if _, ok := current[key]; !ok {
		return nil, nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{key: nil}}})
	if err != nil {
		return nil, fmt.Errorf("encode removal of annotation %s: %w", key, err)
	}
	return patch, nil
}
