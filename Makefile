# edgeovn: `make help` lists the targets.
SHELL := /bin/bash
GO ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
CACHE := $(CURDIR)/.cache
export EDGEOVN_KUBE_APISERVER ?= $(CACHE)/bin/kube-apiserver
export EDGEOVN_KUBE_CONTROLLER_MANAGER ?= $(CACHE)/bin/kube-controller-manager
export EDGEOVN_KUBE_PROXY ?= $(CACHE)/bin/kube-proxy
export EDGEOVN_COREDNS ?= $(CACHE)/bin/coredns
export EDGEOVN_KUBELET ?= $(CACHE)/bin/kubelet
export EDGEOVN_CONTAINERD ?= $(CACHE)/bin/containerd
export EDGEOVN_CONTAINERD_SHIM ?= $(CACHE)/bin/containerd-shim-runc-v2
export EDGEOVN_CTR ?= $(CACHE)/bin/ctr
export EDGEOVN_PKGROOT ?= $(CACHE)/pkgroot

.PHONY: help build package test unit e2e deps vet bench generate verify-generate demo demo-down clean

help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

PLUGINS := github.com/containernetworking/plugins/plugins/main/loopback github.com/containernetworking/plugins/plugins/meta/portmap

build: ## build bin/edgeovn, bin/edgeovn-cni and the loopback and portmap plugins it ships (static)
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/edgeovn .
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/edgeovn-cni ./cni/cmd/edgeovn-cni
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w" -o bin/ $(PLUGINS)

# Debian and RPM versions must start with a digit; nfpm is run from the module proxy at a
# version whose dependencies the proxy serves, and never enters go.mod.
PKG_VERSION ?= 0.1.0~g$(shell git rev-parse --short HEAD 2>/dev/null || echo dev)
NFPM := github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.44.0

package: build ## build dist/edgeovn_<version>_amd64.deb and the .rpm (nfpm.yaml)
	rm -rf dist && mkdir -p dist
	for p in deb rpm; do VERSION=$(PKG_VERSION) GOARCH=$$($(GO) env GOARCH) $(GO) run $(NFPM) pkg --config nfpm.yaml --packager $$p --target dist/ || exit 1; done

deps: ## install what the tests need (Debian packages; kube-apiserver, controller-manager, kube-proxy, kubelet, containerd, CoreDNS builds cached in .cache/)
	./e2e/scripts/install-deps.sh $(CACHE)

vet: ## gofmt and go vet
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet ./...

unit: ## unit and component tests (real ovsdb-server and namespaces where root)
	$(GO) test -count=1 $$($(GO) list ./... | grep -v /e2e$$)

e2e: package ## the end-to-end suite on real OVN, OVS, etcd and kube-apiserver, and the .deb under systemd (root)
	$(GO) test -count=1 -v -timeout 20m ./e2e/

test: deps vet verify-generate build unit e2e ## the whole suite: installs what it needs, then vet, unit and e2e tests

bench: deps build ## print the README's figures: CNI latency, IPAM, OVN layer, NetworkPolicy, pods through a real node
	$(GO) run ./e2e/cmd/cnibench -bin bin -pods 20
	$(GO) run ./e2e/cmd/cnibench -bin bin -pods 20 -after-ovn0
	$(GO) run ./ipam/cmd/ipambench
	$(GO) run ./ovn/cmd/ovnbench
	$(GO) run ./e2e/cmd/netpolbench -bin bin -policies 100 -pods 500
	$(GO) run ./e2e/cmd/podbench -bin bin -pods 50

generate: ## regenerate the libovsdb models from ovn/schema
	$(GO) generate ./ovn/...

verify-generate: generate ## fail if the checked-in models differ from the schema's
	git diff --exit-code -- ovn/nbdb ovn/vswitchdb

demo: deps build ## bring up OVN, an API server and edgeovn on this host; two pods ping
	$(GO) run ./e2e/cmd/demo -dir $(CACHE)/demo -bin bin up

demo-down: ## tear the demo down
	$(GO) run ./e2e/cmd/demo -dir $(CACHE)/demo down

clean: ## remove build output (keeps the .cache of Kubernetes and CoreDNS builds)
	rm -rf bin dist
