#!/usr/bin/env bash
# Writes the module file that pins one Kubernetes version's kube-apiserver,
# etcd and kubectl: go.mod for the default (newest) minor, v1.<minor>.mod for
# the others (hack/assets.sh builds them with `go build -modfile`).
#   hack/k8s/pin.sh v1.37.2           # rewrites go.mod
#   hack/k8s/pin.sh v1.35.4 v1.35.mod
# k8s.io/kubernetes requires its staging modules at v0.0.0 with replaces to
# ./staging; a module outside the repository needs each replaced by its
# published v0.<minor>.<patch>, and etcd at the version Kubernetes requires.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
version=$1
file=${2:-go.mod}
staging=v0.${version#v1.}
kmod=$(GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$version" | sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')
etcd=$(awk '$1 == "go.etcd.io/etcd/server/v3" {print $2; exit}' "$kmod")
{
  echo "module github.com/kroscope/kroscope/hack/k8s"
  echo
  echo "go 1.26"
  echo
  echo "require ("
  echo "	go.etcd.io/etcd/server/v3 $etcd"
  echo "	k8s.io/component-base $staging"
  echo "	k8s.io/kubectl $staging"
  echo "	k8s.io/kubernetes $version"
  echo ")"
  echo
  echo "replace ("
  awk '$2 == "v0.0.0" && $1 ~ /^k8s\.io\// {print $1}' "$kmod" | sort -u | while read -r m; do
    echo "	$m => $m $staging"
  done
  echo ")"
} > "$file.new"
mv "$file.new" "$file"
sum=${file%.mod}.sum
[[ $file == go.mod ]] && sum=go.sum
[[ $file == go.mod ]] || : > "$sum"
if [[ $file == go.mod ]]; then go mod tidy; else go mod tidy -modfile="$file"; fi
