# kroscope build and test entry points. `make test` is what CI runs.
GO        ?= go
# Every package's tests run with the race detector: the reconciler, the
# engine and the TUI all run work off their own goroutines.
GOTEST_FLAGS ?= -count=1 -timeout 40m
# The kro version the tests build and run beside (hack/kro/VERSION is the one
# place it is written); `make test KRO_VERSION=v0.9.3` tests another one.
KRO_VERSION ?= $(shell cat hack/kro/VERSION)
# Recipes run in bash with pipefail, so `go test -json | testjson` fails when
# go test does.
SHELL := bash
.SHELLFLAGS := -o pipefail -c

.PHONY: all build test test-server test-prereqs unit assets lint demo dev-cluster bench validate-tape image clean builtin-schemas

all: build

# Without cgo: a static binary, as the image builds it and as
# docs/performance.md measures it (with cgo, net and os/user link libc and
# the binary is dynamically linked).
build:
	CGO_ENABLED=0 $(GO) build -o bin/kroscope ./cmd/kroscope

# Builds kube-apiserver, etcd and kubectl from Go modules into
# bin/k8s/<version>/ (K8S_VERSION's), and kro's controller into bin/kro/<version>/ with kro's
# CRDs, examples and chainsaw tests from the same module beside it (minutes
# the first time, a no-op afterwards).
assets:
	@bash hack/assets.sh
	@bash hack/kro.sh $(KRO_VERSION)

# Unit and end-to-end tests. Outside CI the API server binaries and kro are
# built first when missing, so this is all a fresh clone needs; with CI=true
# nothing is built here (.ci/run runs `make assets` first), so a missing
# binary or data folder fails, named, instead of being quietly rebuilt.
# hack/testjson prints what go test would, then every skip with its reason;
# with CI=true a skip that hack/testjson/skips.txt does not allow fails the
# run. hack/celparity (its own module: it requires kro) runs in the same
# stream.
# The Kubernetes version the tests run against: hack/k8s/go.mod's
# k8s.io/kubernetes (kind's default minor) is the one place it is written;
# `make test K8S_VERSION=1.35` runs another minor, the one
# hack/k8s/v1.35.mod pins. hack/assets.sh resolves it and names the folder
# (--dir builds nothing); the tests read K8S_VERSION too.
K8S_VERSION ?=
export K8S_VERSION
K8S_DIR     := $(shell K8S_VERSION=$(K8S_VERSION) bash hack/assets.sh --dir)
ifeq ($(K8S_DIR),)
$(error K8S_VERSION=$(K8S_VERSION): hack/k8s pins no such version (see hack/k8s/*.mod))
endif
KRO_DIR     := $(CURDIR)/bin/kro/$(KRO_VERSION)
TEST_ENV = KUBEBUILDER_ASSETS="$(K8S_DIR)" KROSCOPE_KRO_DIR="$(KRO_DIR)"
test: $(if $(filter true,$(CI)),test-prereqs,assets)
	{ $(TEST_ENV) $(GO) test $(GOTEST_FLAGS) -race -json ./...; s=$$?; \
	  cd hack/celparity && $(GO) test $(GOTEST_FLAGS) -race -json ./... || s=1; exit $$s; } | $(GO) run ./hack/testjson

# The suites whose outcome depends on the API server's behaviour (watches,
# apply, admission, CRD validation, OpenAPI): CI also runs them on the
# oldest minor the README says kroscope supports
# (`make test-server K8S_VERSION=1.35`).
SERVER_SUITES ?= ./test/e2e/... ./test/kro/... ./test/plan/... ./test/deploy/... ./reconciler/client/... ./reconciler/graph/builtinschemas/ ./engine/...
test-server: $(if $(filter true,$(CI)),test-prereqs,assets)
	$(TEST_ENV) $(GO) test $(GOTEST_FLAGS) -race -json $(SERVER_SUITES) | $(GO) run ./hack/testjson

# What the tests need from `make assets`, checked before a CI run starts.
test-prereqs:
	@missing=0; for f in $(K8S_DIR)/kube-apiserver $(K8S_DIR)/etcd $(K8S_DIR)/kubectl $(KRO_DIR)/controller \
	    $(KRO_DIR)/crds $(KRO_DIR)/examples $(KRO_DIR)/chainsaw; do \
	  [ -e "$$f" ] || { echo "missing prerequisite: $$f (run \`make assets\`; KRO_VERSION=$(KRO_VERSION))"; missing=1; }; \
	done; exit $$missing

# Fast tests only: no API server.
unit:
	$(GO) test -count=1 -short ./...

lint:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

demo:
	$(GO) run ./cmd/kroscope demo

# Writes reconciler/graph/builtinschemas/schemas/<minor>.json.gz (the
# built-in kinds' OpenAPI schemas `kroscope validate --kube-version` types
# templates with), one per minor hack/k8s pins, from the OpenAPI documents
# each k8s.io/kubernetes release publishes (no API server is built); run it
# when a version in hack/k8s changes. TestEmbeddedMatchesServer checks them
# against the test API server.
builtin-schemas:
	$(GO) test -count=1 -tags generate -run TestGenerate ./reconciler/graph/builtinschemas/

# A real kube-apiserver + etcd with kro's CRDs, for trying kroscope by hand:
# prints the KUBECONFIG to export; ctrl-C stops it.
dev-cluster: assets
	KUBEBUILDER_ASSETS="$$(bash hack/assets.sh)" $(GO) run ./hack/devcluster

# Benchmarks, not part of `make test`: the engine on the test API server
# (N=100, 500 and 2,000 instances of a three-ConfigMap chain, beside the
# server's raw write rate, and the 2,000/500 time ratio), the restart row
# (2,000 and 10,000 converged instances, kroscope restarted, and kro's
# controller restarted over its own 2,000: writes, Events, transitions and
# API server CPU in the 60 s after, and the time until every instance is
# verified), the server's CPU per request kind, the demo (1,000 fanout
# instances: peak RSS, and key -> frame under the real UI), graph building,
# and TUI frames (1,000 and 10,000 instances); and the engine started on
# 10,000 ACTIVE instances (time to its first full snapshot, peak RSS;
# BENCH_STARTUP_N picks another count).
bench: assets
	KUBEBUILDER_ASSETS="$$(bash hack/assets.sh)" KROSCOPE_KRO_DIR="$(KRO_DIR)" $(GO) test -tags bench -run '^$$' -bench . -benchtime 1x -timeout 60m ./test/bench/
	$(GO) test -run '^$$' -bench . -benchmem ./reconciler/graph/ ./tui/

# Checks demo.tape's syntax with VHS (no browser or ttyd needed); vhs is
# built from the Go module proxy into bin/tools once.
VHS := bin/tools/vhs
$(VHS):
	GOBIN="$(CURDIR)/bin/tools" $(GO) install github.com/charmbracelet/vhs@v0.10.0

validate-tape: $(VHS)
	$(VHS) validate demo.tape

# The in-cluster image (Dockerfile: golang build stage, distroless/static
# nonroot). With docker or podman it is built as $(IMAGE); without either,
# ko builds it from .ko.yaml and pushes it to $(KO_DOCKER_REPO) (kind.local
# loads it into the current kind cluster). Nothing is pushed otherwise:
# see docs/in-cluster.md.
IMAGE          ?= kroscope:dev
VERSION        ?= $(shell git describe --tags --always --dirty 2>/dev/null)
KO_DOCKER_REPO ?= kind.local
image:
	@if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then \
		echo "docker build -t $(IMAGE)"; docker build --build-arg VERSION=$(VERSION) -t $(IMAGE) . ; \
	elif command -v podman >/dev/null 2>&1; then \
		echo "podman build -t $(IMAGE)"; podman build --build-arg VERSION=$(VERSION) -t $(IMAGE) . ; \
	elif command -v ko >/dev/null 2>&1; then \
		echo "ko build (KO_DOCKER_REPO=$(KO_DOCKER_REPO))"; VERSION=$(VERSION) KO_DOCKER_REPO=$(KO_DOCKER_REPO) ko build --bare ./cmd/kroscope ; \
	else \
		echo "make image needs a running docker or podman, or ko (go install github.com/google/ko@latest)"; exit 1; \
	fi

clean:
	rm -rf bin/kroscope

# kro's CEL, proven by behaviour (docs/cel-parity.md): hack/celparity is its
# own module, requiring kro, so kroscope's go.mod never does. cel-parity
# evaluates samples of every kro function with kro's CEL and kroscope's;
# kro-overloads regenerates the overload list kroscope's tests read.
.PHONY: cel-parity kro-overloads
cel-parity:
	cd hack/celparity && $(GO) test -count=1 ./...

kro-overloads:
	cd hack/celparity && $(GO) run ./cmd/overloads > ../../reconciler/graph/testdata/kro-cel-functions.txt
