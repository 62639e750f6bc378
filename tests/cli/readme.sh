#!/bin/sh
# readme.sh - the README's examples are real: every "$ ./coarse-plan ..."
# and "$ mpirun ..." line of README.md (with its "\" continuation lines) is
# run, and the indented lines after it, when there are any, must be exactly
# its standard output (but for search's wall-clock seconds).  A command
# shown without output must still succeed.
# Commands run in a temporary directory that sees the shipped models/,
# topologies/ and tests/ (the published Hugging Face configs), so the
# files they write (gpt2.plan.json) land there.
#
# The executor (issue 24, item 17): every mpirun command the README shows
# must work on one machine as written: `--oversubscribe` (a plan needs more
# ranks than most machines have cores) and `./coarse-run`, where `make`
# puts it.  Run as root, "--allow-run-as-root" is added after "mpirun", as
# the README tells root to.  Without Open MPI (no mpirun, or coarse-run not
# built) the mpirun examples are skipped, saying so.
#
# Environment: BIN (the binary, default ./coarse-plan), RUN (coarse-run,
# default ./coarse-run).
set -u
BIN=${BIN:-./coarse-plan}
case "$BIN" in /*) ;; *) BIN="$(pwd)/$BIN" ;; esac
RUN=${RUN:-./coarse-run}
case "$RUN" in /*) ;; *) RUN="$(pwd)/$RUN" ;; esac
# containers (CI) often refuse the shared-memory transport's single-copy
# path; copying through the shared segment always works (tests/run/run.sh)
OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
export OMPI_MCA_btl_vader_single_copy_mechanism
LC_ALL=C
export LC_ALL
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/run"
ln -s "$root/models" "$tmp/run/models"
ln -s "$root/topologies" "$tmp/run/topologies"
ln -s "$root/tests" "$tmp/run/tests"    # the published Hugging Face configs

# Split the examples into $tmp/cmd.N (the command, one line) and
# $tmp/out.N (the output shown, possibly empty).
awk -v dir="$tmp" '
    function flush() { if (n) close(dir "/out." n) }
    /^    \$ (\.\/coarse-plan|mpirun) / {
        flush(); n++; cont = 0
        line = substr($0, 7)
        sub(/  +# .*$/, "", line)              # a comment after the command
        while (line ~ /\\$/ && (getline nxt) > 0) {
            sub(/\\$/, "", line); sub(/^ +/, "", nxt); line = line nxt
        }
        print line > (dir "/cmd." n); close(dir "/cmd." n)
        printf "" > (dir "/out." n); inout = 1; next
    }
    inout && /^    / { print substr($0, 5) > (dir "/out." n); next }
    { inout = 0 }
    END { flush(); print n > (dir "/count") }' README.md

n=$(cat "$tmp/count")
fail=0
# every mpirun line of the README, examples and the command table alike
if awk '/mpirun/ && (!/--oversubscribe/ || !/\.\/coarse-run/) { print NR ": " $0; bad = 1 }
        END { exit !bad }' README.md; then
    echo "FAIL README: the mpirun command above lacks --oversubscribe or ./coarse-run (make builds ./coarse-run)"
    fail=1
fi
# search's header says how long it took: the one figure that differs run to run
clock='s/ in [0-9][0-9.]* s$/ in (seconds) s/'
nmpi=0
i=1
while [ "$i" -le "$n" ]; do
    cmd=$(sed -e 's|^\./coarse-plan |"$BIN" |' -e 's|\./coarse-run|"$RUN"|g' "$tmp/cmd.$i")
    case "$cmd" in
    mpirun*)
        nmpi=$((nmpi + 1))
        if ! command -v mpirun >/dev/null 2>&1 || [ ! -x "$RUN" ]; then
            echo "skip README example $i: no mpirun or no $RUN (Open MPI is not installed)"
            i=$((i + 1))
            continue
        fi
        [ "$(id -u)" -eq 0 ] && cmd="mpirun --allow-run-as-root${cmd#mpirun}" ;;
    esac
    (cd "$tmp/run" && eval "$cmd") >"$tmp/got.$i" 2>"$tmp/err.$i"
    status=$?
    if [ "$status" -ne 0 ]; then
        echo "FAIL README example $i exits $status: $(cat "$tmp/cmd.$i")"
        sed 's/^/  /' "$tmp/err.$i" | head -5
        fail=1
    elif [ -s "$tmp/out.$i" ] && ! { sed "$clock" "$tmp/out.$i" >"$tmp/o.$i" &&
                                    sed "$clock" "$tmp/got.$i" >"$tmp/g.$i" &&
                                    cmp -s "$tmp/o.$i" "$tmp/g.$i"; }; then
        echo "FAIL README example $i prints otherwise: $(cat "$tmp/cmd.$i")"
        diff "$tmp/out.$i" "$tmp/got.$i" | head -10 | sed 's/^/  /'
        fail=1
    fi
    i=$((i + 1))
done
[ "$n" -ge 3 ] || { echo "FAIL README: $n examples found (3 expected at least)"; fail=1; }
[ "$nmpi" -ge 1 ] || { echo "FAIL README: no \"\$ mpirun\" example of the executor"; fail=1; }
[ "$fail" -eq 0 ] && echo "readme: all $n examples run, their output as shown"
[ "$fail" -eq 0 ]
