#!/bin/sh
# hwloc.sh - `import hwloc` end to end: the DGX-2 file of
# ../shared/data/topologies/hwloc imports and predicts; this machine, read
# by `lstopo-no-graphics --of xml` (Debian hwloc-nox) and by --this-machine,
# gives the devices the XML lists; a machine without GPUs is written and
# then refused by predict with that reason; the binary links libexpat and
# libhwloc.
#
# Expected counts for this machine are read from lstopo's XML with grep
# (Packages; PCI devices of class 02xx; of class 03xx with vendor 10de), a
# count independent of the importer.  Environment: BIN (default
# ./coarse-plan).
set -u
BIN=${BIN:-./coarse-plan}
LC_ALL=C
export LC_ALL
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }

# kinds FILE KIND: nodes of that kind in a topology JSON (one node a line)
kinds() { grep -c "\"kind\": \"$2\"" "$1"; }

# 1. the DGX-2: 16 GPUs, the NVSwitch fabric, a collective and a prediction
dgx2=../shared/data/topologies/hwloc/nvidiaDGX2.xml
if [ -f "$dgx2" ]; then
    if "$BIN" import hwloc "$dgx2" --calibration topologies/dgx1-v100.json -o "$tmp/dgx2.json" \
        2>"$tmp/err" && [ ! -s "$tmp/err" ] && [ "$(kinds "$tmp/dgx2.json" gpu)" = 16 ] &&
        [ "$(kinds "$tmp/dgx2.json" nvswitch)" = 6 ]; then
        ok "import hwloc DGX-2: 16 GPUs, 6 NVSwitch nodes (12 chips)"
    else bad "import hwloc DGX-2"; fi
    if "$BIN" collective -t "$tmp/dgx2.json" -b 1G -e 1G >"$tmp/out" 2>"$tmp/err" &&
        grep -q ' ring \| nvls \| tree ' "$tmp/out"; then ok "collective on the DGX-2 import"
    else bad "collective on the DGX-2 import"; cat "$tmp/err"; fi
    if "$BIN" predict -m models/resnet50.json -t "$tmp/dgx2.json" >"$tmp/out" 2>"$tmp/err"; then
        ok "predict on the DGX-2 import"
    else bad "predict on the DGX-2 import"; cat "$tmp/err"; fi
else
    echo "skip DGX-2: ../shared/data absent"
fi

# 2. this machine: lstopo's XML, and --this-machine, agree with grep's count
if command -v lstopo-no-graphics >/dev/null 2>&1; then
    lstopo-no-graphics --of xml >"$tmp/this.xml" 2>/dev/null
    pkg=$(grep -c 'type="Package"' "$tmp/this.xml")
    [ "$pkg" = 0 ] && pkg=1 # no Package: one cpu node for the machine
    nic=$(grep -c 'type="PCIDev".*pci_type="02' "$tmp/this.xml")
    gpu=$(grep -c 'type="PCIDev".*pci_type="03[0-9a-f]* \[10de:' "$tmp/this.xml")
    for how in file this; do
        if [ $how = file ]; then
            "$BIN" import hwloc "$tmp/this.xml" -o "$tmp/this-$how.json" 2>"$tmp/err"
        else
            "$BIN" import hwloc --this-machine -o "$tmp/this-$how.json" 2>"$tmp/err"
        fi
        st=$?
        got="$(kinds "$tmp/this-$how.json" cpu) $(kinds "$tmp/this-$how.json" nic)"
        got="$got $(kinds "$tmp/this-$how.json" gpu)"
        if [ $st = 0 ] && [ "$got" = "$pkg $nic $gpu" ]; then
            ok "import hwloc ($how): $pkg sockets, $nic NICs, $gpu GPUs as lstopo lists"
        else bad "import hwloc ($how): got '$got' (status $st), lstopo lists '$pkg $nic $gpu'"; fi
    done
    if [ "$gpu" = 0 ]; then
        if grep -q 'no GPUs were found' "$tmp/this-this.json"; then
            ok "the note says no GPUs were found"
        else bad "the note says no GPUs were found"; fi
        "$BIN" predict -m models/resnet50.json -t "$tmp/this-this.json" >"$tmp/out" 2>"$tmp/err"
        if [ $? = 2 ] && grep -q 'has no GPU' "$tmp/err" && [ ! -s "$tmp/out" ]; then
            ok "predict refuses it: no GPU"
        else bad "predict refuses a topology without GPUs"; fi
    elif "$BIN" check "$tmp/this-this.json" >/dev/null 2>&1; then
        ok "this machine's topology is valid"
    else bad "this machine's topology is valid"; fi
else
    bad "lstopo-no-graphics missing (Debian hwloc-nox; make deps installs it)"
fi

# 3. the binary is linked with the two libraries it reads XML through
if ldd "$BIN" | grep -q 'libexpat' && ldd "$BIN" | grep -q 'libhwloc'; then
    ok "ldd: libexpat and libhwloc"
else bad "ldd: libexpat and libhwloc"; fi

[ "$fail" = 0 ] && echo "hwloc flows: all passed"
exit "$fail"
