#!/usr/bin/env bash
# Builds kro's controller (github.com/kubernetes-sigs/kro/cmd/controller) at
# a pinned version into bin/kro/<version>/controller, and puts beside it, from
# the same module, the data the tests read: kro's CRDs (helm/crds -> crds/),
# its example graphs (examples/ -> examples/) and its chainsaw end-to-end
# tests (test/e2e/chainsaw/ -> chainsaw/), read-only and never committed.
# Prints the folder bin/kro/<version> (the KROSCOPE_KRO_DIR tests read).
#
# Each version is a tiny module under hack/kro/<version>/ whose go.mod/go.sum
# pin kro and its dependencies, so everything comes from the Go module proxy.
# kro is used as a binary and as data only: kroscope never imports it.
#
# Usage: hack/kro.sh [version]   (default: $KRO_VERSION, else hack/kro/VERSION,
# the one place the tested kro version is written)
# Idempotent: when everything is there it only prints the folder.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KRO_VERSION=${1:-${KRO_VERSION:-$(cat "$root/hack/kro/VERSION")}}
mod="$root/hack/kro/$KRO_VERSION"
out="$root/bin/kro/$KRO_VERSION"

if [[ ! -f "$mod/go.mod" ]]; then
  echo "hack/kro.sh: no module for kro $KRO_VERSION (have: $(ls -d "$root"/hack/kro/v* | xargs -n1 basename | tr '\n' ' '))" >&2
  exit 1
fi
if [[ -x "$out/controller" && -f "$out/.data-complete" ]]; then
  echo "$out"
  exit 0
fi

mkdir -p "$out"
cd "$mod"
if [[ ! -x "$out/controller" ]]; then
  echo "building kro $KRO_VERSION controller into $out (first build: 4-7 minutes on 2 cores, seconds once cached)" >&2
  # The version is stamped the way kro's release build does, so the
  # kro.run/kro-version labels it writes read "$KRO_VERSION".
  go build -trimpath -ldflags "-s -w -X sigs.k8s.io/release-utils/version.gitVersion=$KRO_VERSION" \
    -o "$out/controller.tmp" github.com/kubernetes-sigs/kro/cmd/controller
  mv "$out/controller.tmp" "$out/controller"
fi

# The data comes from the module the controller was built from (go.sum
# checks it), so CRDs, examples and controller are always one version.
src=$(go list -m -f '{{.Dir}}' github.com/kubernetes-sigs/kro)
if [[ -z "$src" || ! -d "$src/helm/crds" ]]; then
  echo "hack/kro.sh: kro's module source not found (go list -m gave '$src')" >&2
  exit 1
fi
for pair in helm/crds:crds examples:examples test/e2e/chainsaw:chainsaw; do
  from=${pair%%:*} to=${pair##*:}
  if [[ -d "$out/$to" ]]; then chmod -R u+w "$out/$to"; rm -rf "$out/$to"; fi
  cp -R "$src/$from" "$out/$to"
  chmod -R a-w "$out/$to"
done
touch "$out/.data-complete"
echo "kro $KRO_VERSION: CRDs, examples and chainsaw tests copied into $out" >&2
echo "$out"
