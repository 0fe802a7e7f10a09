#!/usr/bin/env bash
# Builds kro's controller (github.com/kubernetes-sigs/kro/cmd/controller) at a
# pinned version into bin/kro/<version>/controller and prints that path (the
# KROSCOPE_KRO_CONTROLLER value the e2e tests read). Each version is a tiny
# module under hack/kro/<version>/ whose go.mod/go.sum pin kro and its
# dependencies, so the build only uses the Go module proxy and kro's own
# dependency versions. kro is used as a binary only: kroscope never imports it.
#
# Usage: hack/kro.sh [version]   (default: the version the tests pin)
# Idempotent: when the binary exists it only prints its path.
set -euo pipefail

KRO_VERSION=${1:-v0.9.4}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mod="$root/hack/kro/$KRO_VERSION"
out="$root/bin/kro/$KRO_VERSION"

if [[ ! -f "$mod/go.mod" ]]; then
  echo "hack/kro.sh: no module for kro $KRO_VERSION (have: $(ls "$root/hack/kro" | tr '\n' ' '))" >&2
  exit 1
fi
if [[ -x "$out/controller" ]]; then
  echo "$out/controller"
  exit 0
fi

mkdir -p "$out"
cd "$mod"
echo "building kro $KRO_VERSION controller into $out (first build: 4-7 minutes on 2 cores, seconds once cached)" >&2
# The version is stamped the way kro's release build does, so the
# kro.run/kro-version labels it writes read "$KRO_VERSION".
go build -trimpath -ldflags "-s -w -X sigs.k8s.io/release-utils/version.gitVersion=$KRO_VERSION" \
  -o "$out/controller.tmp" github.com/kubernetes-sigs/kro/cmd/controller
mv "$out/controller.tmp" "$out/controller"
echo "$out/controller"
