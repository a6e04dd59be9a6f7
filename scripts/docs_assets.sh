#!/usr/bin/env bash
# Third-party assets of the documentation site, fetched from the npm registry at a fixed
# version into docs/assets/ (git-ignored), so that the built site needs no CDN.
#   MathJax 3.2.2 (Apache-2.0), https://www.npmjs.com/package/mathjax: the es5 bundle and fonts.
set -euo pipefail
MATHJAX_VERSION=3.2.2
dest=docs/assets/mathjax
if [ -f "$dest/.version" ] && [ "$(cat "$dest/.version")" = "$MATHJAX_VERSION" ]; then
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "mathjax@$MATHJAX_VERSION" >/dev/null && tar -xzf "mathjax-$MATHJAX_VERSION.tgz")
rm -rf "$dest"
mkdir -p "$dest"
cp -r "$tmp/package/es5/." "$dest/"
cp "$tmp/package/LICENSE" "$dest/LICENSE"
echo "$MATHJAX_VERSION" > "$dest/.version"
echo "MathJax $MATHJAX_VERSION copied into $dest"
