# edgeovn: `make help` lists the targets.
SHELL := /bin/bash
GO ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
CACHE := $(CURDIR)/.cache
export EDGEOVN_KUBE_APISERVER ?= $(CACHE)/bin/kube-apiserver
export EDGEOVN_KUBE_CONTROLLER_MANAGER ?= $(CACHE)/bin/kube-controller-manager
export EDGEOVN_KUBE_SCHEDULER ?= $(CACHE)/bin/kube-scheduler
export EDGEOVN_KUBE_PROXY ?= $(CACHE)/bin/kube-proxy
export EDGEOVN_COREDNS ?= $(CACHE)/bin/coredns
export EDGEOVN_KUBELET ?= $(CACHE)/bin/kubelet
export EDGEOVN_CONTAINERD ?= $(CACHE)/bin/containerd
export EDGEOVN_CONTAINERD_SHIM ?= $(CACHE)/bin/containerd-shim-runc-v2
export EDGEOVN_CTR ?= $(CACHE)/bin/ctr
export EDGEOVN_MULTUS ?= $(CACHE)/bin/multus
export EDGEOVN_METALLB_CONTROLLER ?= $(CACHE)/bin/metallb-controller
export EDGEOVN_METALLB_SPEAKER ?= $(CACHE)/bin/metallb-speaker
export EDGEOVN_METALLB_CRDS ?= $(CACHE)/bin/metallb-crds.yaml
export EDGEOVN_PKGROOT ?= $(CACHE)/pkgroot

.PHONY: help build binaries package test unit e2e deps vet bench conformance conformance-deps generate verify-generate demo demo-down clean

help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

PLUGINS := github.com/containernetworking/plugins/plugins/main/loopback github.com/containernetworking/plugins/plugins/main/macvlan

build: ## build bin/edgeovn, bin/edgeovn-cni, bin/edgeovn-bgp (the BGP speaker process) and the loopback and macvlan plugins it ships (static, this host's architecture)
	$(MAKE) --no-print-directory binaries OUT=bin GOARCH=$$($(GO) env GOARCH)

# binaries OUT=DIR GOARCH=ARCH: the shipped binaries for one architecture.
binaries:
	CGO_ENABLED=0 GOARCH=$(GOARCH) $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(OUT)/edgeovn .
	CGO_ENABLED=0 GOARCH=$(GOARCH) $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(OUT)/edgeovn-cni ./cni/cmd/edgeovn-cni
	CGO_ENABLED=0 GOARCH=$(GOARCH) $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(OUT)/edgeovn-bgp ./agent/bgp/cmd/edgeovn-bgp
	CGO_ENABLED=0 GOARCH=$(GOARCH) $(GO) build -trimpath -ldflags "-s -w" -o $(OUT)/ $(PLUGINS)

# Debian and RPM versions must start with a digit; nfpm is run from the module proxy at a
# version whose dependencies the proxy serves, and never enters go.mod.
PKG_VERSION ?= 0.1.0~g$(shell git rev-parse --short HEAD 2>/dev/null || echo dev)
NFPM := github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.44.0
PKG_ARCHES ?= amd64 arm64

package: build ## build the .deb and .rpm for amd64 and arm64 into dist/ (nfpm.yaml with each one's binaries from dist/bin-<arch>)
	rm -rf dist && mkdir -p dist
	for a in $(PKG_ARCHES); do \
		$(MAKE) --no-print-directory binaries OUT=dist/bin-$$a GOARCH=$$a || exit 1; \
		sed -e 's#src: bin/#src: dist/bin-'$$a'/#' -e 's#^arch: .*#arch: '$$a'#' nfpm.yaml > dist/nfpm-$$a.yaml; \
		for p in deb rpm; do VERSION=$(PKG_VERSION) $(GO) run $(NFPM) pkg --config dist/nfpm-$$a.yaml --packager $$p --target dist/ || exit 1; done; \
	done

deps: ## install what the tests need (Debian packages; kube-apiserver, controller-manager, scheduler, kube-proxy, kubelet, containerd, CoreDNS, Multus, MetalLB builds cached in .cache/)
	./e2e/scripts/install-deps.sh $(CACHE)

# Developer tools (staticcheck, deadcode) are pinned in tools.mod, a module file of their own,
# so their dependencies never raise the versions the shipped binaries are built with. Offline:
# `go mod download && go mod download -modfile=tools.mod` first.
TOOL := $(GO) tool -modfile=tools.mod
DEADFMT := {{range .Funcs}}{{$$.Path}}.{{.Name}}{{"\n"}}{{end}}

vet: ## gofmt, go vet, staticcheck, and deadcode: no function unreachable from the binaries (or, with tests, at all) but those in deadcode.allow
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet ./...
	$(TOOL) staticcheck ./...
	@set -e; dead=$$(mktemp); allow=$$(mktemp); trap 'rm -f $$dead $$allow' EXIT; \
	$(TOOL) deadcode -f '$(DEADFMT)' . ./cni/cmd/edgeovn-cni ./agent/bgp/cmd/edgeovn-bgp > $$dead; \
	$(TOOL) deadcode -test -f '$(DEADFMT)' ./... >> $$dead; \
	sort -u -o $$dead $$dead; sed -e 's/#.*//' -e 's/[[:space:]]*$$//' -e '/^$$/d' deadcode.allow > $$allow; \
	if grep -vxF -f $$allow $$dead; then echo "deadcode: the functions above are reached by no binary (or only by tests): remove them, or say in deadcode.allow why they stay"; exit 1; fi; \
	if grep -vxF -f $$dead $$allow; then echo "deadcode.allow: the lines above are no longer reported: remove them"; exit 1; fi; \
	echo "deadcode: nothing unreachable beyond deadcode.allow ($$(wc -l < $$allow) allowed)"

# Each tier's output is kept in .cache/<tier>.log and summed up (passed, failed, skipped); under
# CI=true (.ci/run) a test that cannot run for want of root, a tool or a build fails instead of
# skipping (e2e/skip).
unit: ## unit and component tests with the race detector (real ovsdb-server and namespaces where root)
	@mkdir -p $(CACHE)
	set -o pipefail; $(GO) test -race -count=1 -v $$($(GO) list ./... | grep -v /e2e$$) 2>&1 | tee $(CACHE)/unit.log; s=$$?; \
		./e2e/scripts/summary.sh unit $(CACHE)/unit.log; exit $$s

e2e: package ## the end-to-end suite on real OVN, OVS, etcd and kube-apiserver, and the .deb under systemd (root)
	@mkdir -p $(CACHE)
	set -o pipefail; $(GO) test -count=1 -v -timeout 50m ./e2e/ 2>&1 | tee $(CACHE)/e2e.log; s=$$?; \
		./e2e/scripts/summary.sh e2e $(CACHE)/e2e.log; exit $$s

test: deps vet verify-generate build unit e2e ## the whole suite: installs what it needs, then vet, unit and e2e tests

bench: deps build ## print the README's figures: CNI latency, IPAM, OVN layer, Services, LoadBalancer IPs, NetworkPolicy, security groups and VPCs, restarts and drift, controller failover, the controller's throughput, memory and restart, pods through a real node, same host against cross host
	$(GO) run ./bench/cnibench -bin bin -pods 20
	$(GO) run ./bench/cnibench -bin bin -pods 20 -after-ovn0
	$(GO) run ./bench/attachbench -bin bin -pods 30
	$(GO) run ./bench/ipambench
	$(GO) run ./bench/ovnbench
	$(GO) run ./bench/svcbench -bin bin -services 1000 -trace
	$(GO) run ./bench/lbbench -bin bin
	$(GO) run ./bench/netpolbench -bin bin -policies 100 -pods 500
	$(GO) run ./bench/tenantbench -bin bin
	$(GO) run ./bench/restartbench -bin bin -restarts 10
	$(GO) run ./bench/restartbench -bin bin -drift 5
	$(GO) run ./bench/failoverbench -bin bin -pods 200 -runs 3
	$(GO) run ./bench/ctrlbench -bin bin -pods 500 -restart-pods 1000 -idle 60s
	$(GO) run ./bench/podbench -bin bin -pods 50
	$(GO) run ./bench/hostbench -bin bin

# Not part of deps or test: e2e.test alone takes about 10 minutes to build cold, and the run
# itself longer than CI's budget leaves (README, Upstream conformance).
conformance-deps: deps ## build what make conformance needs besides make deps: kube-scheduler, kubectl, agnhost, e2e.test (v1.34, cached in .cache/bin)
	./e2e/scripts/build-kube.sh $(CACHE)/bin kube-scheduler kubectl agnhost e2e.test

# Both modes run at once, each in its own rig. FOCUS='regexp' runs only the specs it matches (while
# developing); MODES=kube-proxy or MODES=edgeovn runs one mode; STACK=dual runs a dual-stack cluster
# (k3s's dual-stack ranges) and adds the [Feature:IPv6DualStack] specs; NUM_NODES=2 runs on the one node
# the specs that skip only for want of a second (docs/conformance.md, Dual stack).
conformance: conformance-deps build ## run the upstream sig-network Conformance and NetworkPolicy e2e tests against edgeovn on a real node, with and without kube-proxy; print the table
	$(GO) run ./e2e/cmd/conformance -bin bin -cache $(CACHE)/bin -parallel $(if $(FOCUS),-focus '$(FOCUS)') $(if $(MODES),-modes $(MODES)) $(if $(STACK),-stack $(STACK)) $(if $(NUM_NODES),-num-nodes $(NUM_NODES))

generate: ## regenerate the libovsdb models from ovn/schema
	$(GO) generate ./ovn/...

verify-generate: generate ## fail if the checked-in models differ from the schema's
	git diff --exit-code -- ovn/nbdb ovn/vswitchdb ovn/sbdb

demo: deps build ## bring up OVN, an API server and edgeovn on this host; two pods ping
	$(GO) run ./e2e/cmd/demo -dir $(CACHE)/demo -bin bin up

demo-down: ## tear the demo down
	$(GO) run ./e2e/cmd/demo -dir $(CACHE)/demo down

clean: ## remove build output (keeps the .cache of Kubernetes and CoreDNS builds)
	rm -rf bin dist
