package kubeapi

import (
	"os/exec"
	"strings"
	"testing"
)

// The point of the package: none of client-go's all-groups packages is linked through it.
func TestImportsNoAllGroupsPackages(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"k8s.io/client-go/kubernetes", "k8s.io/client-go/informers", "k8s.io/client-go/tools/leaderelection"} {
			if dep == banned || strings.HasPrefix(dep, banned+"/") {
				t.Errorf("kubeapi links %s", dep)
			}
		}
	}
}
