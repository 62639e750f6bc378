#!/bin/sh
# svg.sh - every chart the project ships or writes renders, and its text
# stays inside the canvas without overlapping (issue 24, item 19).
#
# The charts: reports/*.svg (what `make run` writes and the repository
# ships) and the charts the tests write, made fresh here: compare --svg
# with short and with long (--setting) labels, predict --timeline-svg
# under DDP, FSDP hybrid and ZeRO-2 with offload, pod --svg.  For each:
#   1. rsvg-convert (Debian librsvg2-bin) renders it to PNG;
#   2. every <text> is measured from the SVG itself: its font size (its
#      own, else the root's), position, text-anchor and rotation, and its
#      width from DejaVu Sans's advances (the font rsvg-convert uses for
#      sans-serif here; thousandths of an em, the table of src/out/svg.c)
#      with the font's ascent 0.928 em and descent 0.236 em.  Every corner
#      of every text box must lie inside the canvas, and no two unrotated
#      text boxes (legend labels, ticks, titles, lane labels) may overlap,
#      nor a legend label its neighbour's colour swatch;
#   3. with python3 (optional: CI images may lack it, and it is said so),
#      the rendered outermost rows and columns must be blank: ink there
#      means something was cut at the edge, whatever the measurement says.
# The PNGs are kept in $SVG_PNG_DIR when that is set, to be looked at.
#
# Environment: BIN (default ./coarse-plan).
set -u
BIN=${BIN:-./coarse-plan}
LC_ALL=C
export LC_ALL
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }

if ! command -v rsvg-convert >/dev/null 2>&1; then
    bad "rsvg-convert missing (Debian librsvg2-bin; make deps installs it)"
    exit 1
fi

# --- the charts the tests write ------------------------------------------
emu=topologies/dgx1-v100-emu.json,topologies/dgx1-p100-emu.json
"$BIN" compare -m models/resnet50.json,models/gpt2.json -t topologies/dgx1-v100.json -s ring,tree \
    -o "$tmp/c.csv" --svg "$tmp/compare.svg" || bad "compare --svg"
"$BIN" compare -m models/resnet50.json,models/bert-large.json \
    --setting "a-paper-emu-vs-mpi:mpi,coarse-mpi:$emu" --setting "b-emu-vs-nccl:ring,coarse:$emu" \
    -o "$tmp/s.csv" --svg "$tmp/compare-settings.svg" || bad "compare --setting --svg"
"$BIN" predict -m models/gpt2.json -t topologies/dgx1-v100.json --compute-ms 100 -s ring,tree \
    --timeline-svg "$tmp/timeline-ddp.svg" >/dev/null || bad "predict --timeline-svg"
"$BIN" predict -m models/gpt2.json -t topologies/dgx1-v100.json --compute-ms 100 -s ring \
    --framework zero2 --offload --timeline-svg "$tmp/timeline-offload.svg" >/dev/null ||
    bad "predict --timeline-svg --offload"
"$BIN" predict $(cat tests/cases/predict-fsdp-hybrid/cmd | sed 's/^predict //') \
    --timeline-svg "$tmp/timeline-fsdp.svg" >/dev/null || bad "predict --timeline-svg fsdp"
"$BIN" pod -m models/gpt2.json -t topologies/hgx-h100-pod.json --hosts 2,4 -o "$tmp/pod.csv" \
    --svg "$tmp/pod.svg" || bad "pod --svg"

# --- 2. text extents, measured from the SVG --------------------------------
# check_text FILE: prints one line per text outside the canvas or per pair
# of overlapping boxes; nothing when the chart is clean.
check_text() {
    awk '
    BEGIN {
        split("318 401 460 838 636 950 780 275 390 390 500 838 318 361 318 337 " \
              "636 636 636 636 636 636 636 636 636 636 337 337 838 838 838 531 " \
              "1000 684 686 698 770 632 575 775 752 295 295 656 557 863 748 787 " \
              "603 787 695 635 611 732 684 989 685 611 685 390 337 390 838 500 " \
              "500 613 635 550 635 615 352 635 634 278 278 579 278 974 634 612 " \
              "635 635 411 521 392 634 592 818 592 592 525 636 337 636 838", em, " ")
        for (i = 32; i < 127; i++) code[sprintf("%c", i)] = i
        n = 0; ns = 0
    }
    function attr(s, name,   m) {
        if (match(s, " " name "=\"[^\"]*\"")) {
            m = substr(s, RSTART + length(name) + 3, RLENGTH - length(name) - 4)
            return m
        }
        return ""
    }
    function width(t, size,   i, c, w) {
        gsub(/&amp;/, "\\&", t); gsub(/&lt;/, "<", t); gsub(/&gt;/, ">", t); gsub(/&quot;/, "\"", t)
        w = 0
        for (i = 1; i <= length(t); i++) {
            c = substr(t, i, 1)
            w += (c in code) ? em[code[c] - 31] : 1000
        }
        return w / 1000 * size
    }
    # a corner (lx, ly) of the text box, in the canvas
    function corner(lx, ly, name,   x, y) {
        x = tx + lx * cs - ly * sn; y = ty + lx * sn + ly * cs
        if (x < -0.01 || x > W + 0.01 || y < -0.01 || y > H + 0.01)
            printf "outside the %dx%d canvas: %s corner at (%.1f, %.1f) of \"%s\"\n", W, H, name, x, y, txt
    }
    /<svg / { W = attr($0, "width") + 0; H = attr($0, "height") + 0; root = attr($0, "font-size") + 0 }
    {
        line = $0
        while (match(line, /<rect [^>]*\/>/)) { # legend swatches: self-closing, no <title>
            r = substr(line, RSTART, RLENGTH); line = substr(line, RSTART + RLENGTH)
            if (attr(r, "x") != "") {
                ns++; sx0[ns] = attr(r, "x") + 0; sy0[ns] = attr(r, "y") + 0
                sx1[ns] = sx0[ns] + attr(r, "width"); sy1[ns] = sy0[ns] + attr(r, "height")
            }
        }
        line = $0
        while (match(line, /<text[^>]*>[^<]*<\/text>/)) {
            el = substr(line, RSTART, RLENGTH); line = substr(line, RSTART + RLENGTH)
            txt = el; sub(/^<text[^>]*>/, "", txt); sub(/<\/text>$/, "", txt)
            tag = el; sub(/>.*/, "", tag)
            size = attr(tag, "font-size"); size = size == "" ? root : size + 0
            w = width(txt, size); asc = 0.928 * size; desc = 0.236 * size
            anchor = attr(tag, "text-anchor")
            x0 = anchor == "end" ? -w : anchor == "middle" ? -w / 2 : 0
            tx = attr(tag, "x") + 0; ty = attr(tag, "y") + 0; a = 0
            tr = attr(tag, "transform")
            if (tr != "") {
                split(tr, p, /[(), ]+/)   # translate X Y rotate A
                tx = p[2] + 0; ty = p[3] + 0; a = (p[4] == "rotate") ? p[5] + 0 : 0
            }
            cs = cos(a * 3.14159265358979 / 180); sn = sin(a * 3.14159265358979 / 180)
            corner(x0, -asc, "top left"); corner(x0 + w, -asc, "top right")
            corner(x0, desc, "bottom left"); corner(x0 + w, desc, "bottom right")
            if (a == 0) { n++; bx0[n] = tx + x0; bx1[n] = tx + x0 + w; by0[n] = ty - asc
                          by1[n] = ty + desc; bt[n] = txt }
        }
    }
    END {
        for (i = 1; i <= n; i++) {
            for (j = i + 1; j <= n; j++)
                if (bx0[i] < bx1[j] - 0.5 && bx0[j] < bx1[i] - 0.5 &&
                    by0[i] < by1[j] - 0.5 && by0[j] < by1[i] - 0.5)
                    printf "overlap: \"%s\" and \"%s\"\n", bt[i], bt[j]
            for (k = 1; k <= ns; k++)
                if (bx0[i] < sx1[k] - 0.5 && sx0[k] < bx1[i] - 0.5 &&
                    by0[i] < sy1[k] - 0.5 && sy0[k] < by1[i] - 0.5)
                    printf "overlap: \"%s\" and the legend swatch at x=%g\n", bt[i], sx0[k]
        }
    }' "$1"
}

# --- 3. the rendered PNG's border ------------------------------------------
# border_ink FILE.svg W H: renders the chart's outermost pixel rows and
# columns (the chart nested in a 1-px-wide viewBox on each edge, so each
# render is a strip and decoding stays cheap) and prints how many of their
# pixels are not white: 0 for a clean chart.  Exits 3 without python3.
border_ink() {
    command -v python3 >/dev/null 2>&1 || return 3
    rm -f "$tmp"/strip-*.png
    k=0
    for box in "0 0 $2 1" "0 $(($3 - 1)) $2 1" "0 0 1 $3" "$(($2 - 1)) 0 1 $3"; do
        k=$((k + 1))
        # shellcheck disable=SC2086
        set -- "$1" "$2" "$3" $box
        { printf '<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="%s %s %s %s">\n' \
            "$6" "$7" "$4" "$5" "$6" "$7"; cat "$1"; echo '</svg>'; } >"$tmp/strip.svg"
        rsvg-convert "$tmp/strip.svg" -o "$tmp/strip-$k.png" || return 1
        set -- "$1" "$2" "$3"
    done
    python3 - "$tmp"/strip-*.png <<'EOF'
import struct, sys, zlib
def pixels(path):
    data, pos, idat = open(path, "rb").read(), 8, b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), "8-bit RGB or RGBA expected"
            bpp = 4 if ctype == 6 else 3
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride, prev, out = zlib.decompress(idat), w * bpp, bytearray(w * bpp), []
    for y in range(h):  # undo the PNG filters, row by row
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        out += [line[x * bpp:x * bpp + 3] for x in range(w)]
        prev = line
    return out
# ink: not white (anti-aliased text is far darker than 230)
print(sum(min(px) < 230 for path in sys.argv[1:] for px in pixels(path)))
EOF
}

for f in reports/*.svg "$tmp"/*.svg; do
    name=$(basename "$f")
    png="$tmp/${name%.svg}.png"
    if ! rsvg-convert "$f" -o "$png" 2>"$tmp/err"; then
        bad "$name: rsvg-convert: $(cat "$tmp/err")"; continue
    fi
    [ -n "${SVG_PNG_DIR:-}" ] && cp "$png" "$SVG_PNG_DIR/"
    problems=$(check_text "$f")
    if [ -z "$problems" ]; then ok "$name: renders; every text inside the canvas, none overlapping"
    else bad "$name:"; echo "$problems" | head -10 | sed 's/^/  /'; fi
    n=$(border_ink "$f" "$(sed -n '1s/.* width="\([0-9]*\)".*/\1/p' "$f")" \
        "$(sed -n '1s/.* height="\([0-9]*\)".*/\1/p' "$f")")
    case $? in
    0) [ "$n" = 0 ] && ok "$name: the rendered border is blank" ||
        bad "$name: $n pixels of ink on the rendered border (something is cut at the edge)" ;;
    3) echo "skip $name: border of the PNG (python3 not installed)" ;;
    *) bad "$name: could not read the PNG" ;;
    esac
done

# the timeline's legend lists only what it draws: DDP has no reduce-scatter,
# all-gather or earlier micro-batches; offload's host copies are "other"
if ! grep -q 'reduce-scatter\|all-gather\|earlier micro-batches\|other transfers' \
    "$tmp/timeline-ddp.svg" && grep -q '>all-reduce<' "$tmp/timeline-ddp.svg"; then
    ok "timeline legend (DDP): all-reduce listed, the four categories it does not draw left out"
else bad "timeline legend (DDP) lists categories it does not draw"; fi
# pod.svg says why FSDP has no LP split bar
if grep -q 'No LP split bar for FSDP' "$tmp/pod.svg" &&
    grep -q 'No LP split bar for FSDP' reports/pod.svg; then
    ok "pod.svg says why FSDP has no LP split bar"
else bad "pod.svg does not say why FSDP has no LP split bar"; fi

[ "$fail" = 0 ] && echo "svg: all passed"
exit "$fail"
