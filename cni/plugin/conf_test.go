package plugin

import (
	"errors"
	"testing"

	"github.com/containernetworking/cni/pkg/types"
	"github.com/edgeovn/edgeovn/cni/protocol"
)

func cniCode(t *testing.T, err error) uint {
	t.Helper()
	var e *types.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *types.Error", err, err)
	}
	return e.Code
}

func TestLoadNetConf(t *testing.T) {
	tests := []struct {
		name       string
		conf       string
		wantSocket string
		wantCode   uint // 0: no error
	}{
		{"defaults", `{"cniVersion":"1.1.0","name":"edgeovn","type":"edgeovn"}`, protocol.DefaultSocket, 0},
		{"socket and timeout", `{"cniVersion":"1.0.0","name":"n","type":"edgeovn","serverSocket":"/tmp/x.sock","timeout":"5s"}`, "/tmp/x.sock", 0},
		{"bad timeout", `{"cniVersion":"1.0.0","name":"n","type":"edgeovn","timeout":"soon"}`, "", types.ErrInvalidNetworkConfig},
		{"negative timeout", `{"cniVersion":"1.0.0","name":"n","type":"edgeovn","timeout":"-1s"}`, "", types.ErrInvalidNetworkConfig},
		{"not json", `{`, "", types.ErrDecodingFailure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conf, err := LoadNetConf([]byte(tt.conf))
			if tt.wantCode != 0 {
				if got := cniCode(t, err); got != tt.wantCode {
					t.Fatalf("code = %d, want %d (%v)", got, tt.wantCode, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if conf.ServerSocket != tt.wantSocket || conf.timeout <= 0 {
				t.Errorf("conf = socket %q timeout %v", conf.ServerSocket, conf.timeout)
			}
		})
	}
}

func TestLoadPodArgs(t *testing.T) {
	tests := []struct {
		name       string
		args       string
		requirePod bool
		wantErr    bool
	}{
		{"containerd args", "IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=web;K8S_POD_INFRA_CONTAINER_ID=abc;K8S_POD_UID=u1", true, false},
		{"unknown keys without IgnoreUnknown", "K8S_POD_NAMESPACE=default;K8S_POD_NAME=web;FOO=bar", true, false},
		{"missing name", "K8S_POD_NAMESPACE=default", true, true},
		{"missing name allowed for DEL", "K8S_POD_NAMESPACE=default", false, false},
		{"malformed", "K8S_POD_NAME", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := LoadPodArgs(tt.args, tt.requirePod)
			if tt.wantErr {
				if got := cniCode(t, err); got != types.ErrInvalidEnvironmentVariables {
					t.Fatalf("code = %d, want %d", got, types.ErrInvalidEnvironmentVariables)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.requirePod && (a.K8S_POD_NAME != "web" || a.K8S_POD_NAMESPACE != "default") {
				t.Errorf("args = %+v", a)
			}
		})
	}
}
