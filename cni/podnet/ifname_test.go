package podnet

import (
	"errors"
	"testing"
)

func TestValidateIfName(t *testing.T) {
	for name, ok := range map[string]bool{"eth0": true, "net1": true, "0123456789abcde": true,
		"": false, "0123456789abcdef": false, ".": false, "..": false, "a/b": false, "eth0:1": false, "eth 0": false, "eth0\n": false} {
		err := ValidateIfName(name)
		if (err == nil) != ok || (err != nil && !errors.Is(err, ErrInvalidRequest)) {
			t.Errorf("ValidateIfName(%q) = %v, want ok %v", name, err, ok)
		}
	}
}
