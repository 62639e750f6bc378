#!/bin/sh
# doc-sources.sh - the docs cite public sources, not ../shared (issue 24,
# item 18): a reader of README.md and docs/ has no ../shared folder, so no
# page may cite a file under ../shared/data/ (a path after the slash);
# docs/sources.md alone names those files, beside the public original of
# each.  Saying that the tests read ../shared/data when present is allowed.
#
# Usage: sh tests/tools/doc-sources.sh   (repository root; run by `make test`)
set -u
if grep -n '\.\./shared/data/[A-Za-z]' README.md docs/*.md | grep -v '^docs/sources\.md:'; then
    echo "FAIL docs: the lines above cite ../shared/data/...; cite the public source (docs/sources.md)"
    exit 1
fi
for f in $(sed -n 's/.*(\([a-z-]*\.md\)#*[a-z-]*).*/\1/p' docs/sources.md); do
    [ -f "docs/$f" ] || { echo "FAIL docs/sources.md links to docs/$f, which does not exist"; exit 1; }
done
echo "doc-sources: no page cites ../shared/data; docs/sources.md lists the public sources"
