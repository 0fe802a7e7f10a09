#!/usr/bin/env bash
# Builds the kube-apiserver and etcd binaries that envtest needs, and the
# kubectl the deploy/ tests run, into bin/k8s/<version>/ and prints that
# folder (the KUBEBUILDER_ASSETS value).
# All come from Go modules (k8s.io/kubernetes and go.etcd.io/etcd, pinned in
# hack/k8s/go.mod, or hack/k8s/v1.<minor>.mod for $K8S_VERSION), so nothing
# is downloaded from outside the Go module proxy.
# Idempotent: when both binaries exist it only prints the folder.
# --dir only prints the folder, building nothing (the Makefile asks it).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Each version is written once: the k8s.io/kubernetes requirement of
# hack/k8s/go.mod (the default: kind's default minor) or of
# hack/k8s/v1.<minor>.mod for another minor, chosen by $K8S_VERSION ("1.35",
# "v1.35" or the full "v1.35.4"). test/prereq resolves it the same way.
modfile=go.mod
if [[ -n "${K8S_VERSION:-}" ]]; then
  want=${K8S_VERSION#v}
  minor=$(echo "$want" | cut -d. -f1,2)
  if [[ -f "$root/hack/k8s/v$minor.mod" ]]; then
    modfile=v$minor.mod
  fi
fi
K8S_VERSION_PINNED=$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ {print $2; exit}' "$root/hack/k8s/$modfile")
if [[ -n "${K8S_VERSION:-}" ]] && { [[ "v$minor" != "${K8S_VERSION_PINNED%.*}" ]] ||
    [[ "$want" == *.*.* && "v$want" != "$K8S_VERSION_PINNED" ]]; }; then
  pinned=$(awk '$1 == "k8s.io/kubernetes" {print $2}' "$root"/hack/k8s/go.mod "$root"/hack/k8s/v*.mod | sort -V | tr '\n' ' ')
  echo "K8S_VERSION=$K8S_VERSION: hack/k8s pins ${pinned}(add a minor with hack/k8s/pin.sh)" >&2
  exit 1
fi
K8S_VERSION=$K8S_VERSION_PINNED
K8S_MINOR=$(echo "$K8S_VERSION" | cut -d. -f2)
out="$root/bin/k8s/$K8S_VERSION"
if [[ "${1:-}" == "--dir" ]]; then
  echo "$out"
  exit 0
fi

if [[ -x "$out/kube-apiserver" && -x "$out/etcd" && -x "$out/kubectl" ]]; then
  echo "$out"
  exit 0
fi

mkdir -p "$out"
cd "$root/hack/k8s"
# The Go build cache makes rebuilds fast; the first build takes several
# minutes on a 2-core machine.
pkg=k8s.io/component-base/version
ldflags="-s -w -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$K8S_MINOR -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
if [[ ! -x "$out/etcd" ]]; then
  echo "building etcd into $out (first build takes a few minutes)" >&2
  go build -modfile="$modfile" -trimpath -ldflags "-s -w" -o "$out/etcd.tmp" ./etcd
  mv "$out/etcd.tmp" "$out/etcd"
fi
if [[ ! -x "$out/kube-apiserver" ]]; then
  echo "building kube-apiserver $K8S_VERSION into $out (first build takes ~6 minutes on 2 cores)" >&2
  go build -modfile="$modfile" -trimpath -ldflags "$ldflags" -o "$out/kube-apiserver.tmp" ./kube-apiserver
  mv "$out/kube-apiserver.tmp" "$out/kube-apiserver"
fi
if [[ ! -x "$out/kubectl" ]]; then
  echo "building kubectl $K8S_VERSION into $out (first build takes a few minutes)" >&2
  go build -modfile="$modfile" -trimpath -ldflags "$ldflags" -o "$out/kubectl.tmp" ./kubectl
  mv "$out/kubectl.tmp" "$out/kubectl"
fi
echo "$out"
