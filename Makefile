# coarse-plan - plain Makefile.  `make help` lists the targets.
#
# Layout: sources in src/<stage>/, one public header in include/, unit tests
# in tests/unit/ (cmocka), command-line cases in tests/cases/.  Objects go to
# $(BUILD); the sanitizer build uses its own directory so both can coexist.

CC       ?= cc
BUILD    ?= build
OPT      ?= -O2
SAN      ?=
CSTD     := -std=c11 -D_DEFAULT_SOURCE
WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
            -Wno-missing-field-initializers
# -ffp-contract=off: no fused multiply-add, so -O0 and -O2 print the same digits.
CFLAGS   ?=
ALLCFLAGS = $(CSTD) $(OPT) -g $(WARN) -ffp-contract=off $(SAN) $(CFLAGS)
CPPFLAGS += -Isrc -Iinclude
LDLIBS   := -lglpk -ljansson -lexpat -lhwloc -lm -lpthread

SRC      := $(shell find src -name '*.c' ! -name main.c ! -path 'src/run/*' ! -path 'src/mpisearch/*' | LC_ALL=C sort)
OBJ      := $(SRC:%.c=$(BUILD)/%.o)
LIB      := $(BUILD)/libcoarse.a
BIN      := $(BUILD)/coarse-plan
# coarse-run (src/run/, its own rules below): only where Open MPI's mpicc is.
MPICC    ?= mpicc
HAVE_MPI := $(shell command -v $(MPICC) >/dev/null 2>&1 && echo yes)
RUN_SRC  := $(sort $(wildcard src/run/*.c))
RUN_BIN  := $(BUILD)/coarse-run
RUN_ALL  := $(if $(HAVE_MPI),coarse-run coarse-search)
SEARCH_BIN := $(BUILD)/coarse-search

UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

MODELS   := $(sort $(wildcard models/*.json))
TOPOS    := $(sort $(wildcard topologies/*.json))

.PHONY: all deps run test test-one unit cli run-tests asan clean help models topologies calibration bench \
        install uninstall test-install cli-doc

all: coarse-plan libcoarseplan.a examples/plan_reader $(RUN_ALL)

help:
	@echo "make            build ./coarse-plan"
	@echo "make deps       install GLPK, jansson, cmocka from Debian when missing"
	@echo "make run        set up, build, and run the main job on the shipped data"
	@echo "make test       every unit suite and CLI case, plain and under ASan+UBSan,"
	@echo "                then replay, mutation smoke, determinism and fuzz smoke"
	@echo "make run-tests  coarse-run (Open MPI) on plans of the shipped data"
	@echo "make lint       include circles, cppcheck and clang-tidy (tools/lint.sh)"
	@echo "make install    PREFIX=/usr/local DESTDIR=: binary, runtime library, header,"
	@echo "                pkg-config file, man page (make uninstall removes them)"
	@echo "make cli-doc    rewrite the option reference in docs/cli.md from --help"
	@echo "make valgrind   memcheck over the main commands"
	@echo "make robust     mutation test, 400 mutants (docs/hardening.md)"
	@echo "make fuzz       libFuzzer on every loader; FUZZ_SECONDS=N per target"
	@echo "make bench      speed and peak memory of the main operations"
	@echo "make models     regenerate models/*.json from ../shared/data/models/*.csv"
	@echo "make topologies regenerate topologies/*.json (tools/topogen.py)"
	@echo "make calibration  refit the calibration to the reference nccl-tests tables"
	@echo "make clean      remove build products"

deps:
	@./tools/deps.sh

# copy then rename: replacing a binary another process is running must not fail
coarse-plan: $(BIN)
	cp $(BIN) $@.tmp && mv -f $@.tmp $@

$(BIN): $(BUILD)/src/main.o $(LIB)
	$(CC) $(ALLCFLAGS) -o $@ $^ $(LDLIBS)

$(LIB): $(OBJ)
	rm -f $@
	ar rcs $@ $^

# The plan loader for runtimes (include/coarse_plan.h): no GLPK, no planner.
RT_OBJ := $(addprefix $(BUILD)/src/,runtime/planfile.o plan/deadlock.o core/err.o \
            core/jsondoc.o core/fileio.o core/strmap.o)
$(BUILD)/libcoarseplan.a: $(RT_OBJ)
	rm -f $@
	ar rcs $@ $^

libcoarseplan.a: $(BUILD)/libcoarseplan.a
	cp $< $@.tmp && mv -f $@.tmp $@

# ---------------------------------------------------------------- coarse-run
# The Open MPI executor of plans (src/run/, docs/runtime.md): built only when
# mpicc is present, with libcoarseplan.a and MPI alone (no GLPK, no planner).
$(RUN_BIN): $(RUN_SRC) $(wildcard src/run/*.h) include/coarse_plan.h $(BUILD)/libcoarseplan.a
	@mkdir -p $(dir $@)
	OMPI_CC=$(CC) $(MPICC) $(ALLCFLAGS) -Isrc -Iinclude -o $@ $(RUN_SRC) $(BUILD)/libcoarseplan.a \
	    -ljansson

coarse-run: $(RUN_BIN)
	cp $(RUN_BIN) $@.tmp && mv -f $@.tmp $@

# coarse-search: `search` split over Open MPI ranks (src/mpisearch/), on the
# whole library (the search, the collective model, GLPK).
$(SEARCH_BIN): src/mpisearch/coarse_search.c src/cli/search_split.h $(LIB)
	@mkdir -p $(dir $@)
	OMPI_CC=$(CC) $(MPICC) $(ALLCFLAGS) $(CPPFLAGS) -o $@ $< $(LIB) $(LDLIBS)

coarse-search: $(SEARCH_BIN)
	cp $(SEARCH_BIN) $@.tmp && mv -f $@.tmp $@

# The example reader uses the public header and the library alone.
examples/plan_reader: examples/plan_reader.c include/coarse_plan.h $(BUILD)/libcoarseplan.a
	$(CC) $(ALLCFLAGS) -Iinclude -o $@ $< $(BUILD)/libcoarseplan.a -ljansson

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) $(CPPFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/tests/%: tests/unit/%.c tests/unit/testutil.h tests/unit/testtopo.h tests/unit/llm_rows.h \
                  $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) $(CPPFLAGS) -Itests/unit -o $@ $< $(LIB) $(LDLIBS) -lcmocka

# ---------------------------------------------------------------- main job
# The main job: validate and describe the shipped data, then write the
# comparison reports (docs/paper-reproduction.md explains them).
HF           := tests/data/good/hf
PAPER_MODELS := models/resnet50.json,models/vgg16.json,models/bert-large.json,models/gpt2.json
PAPER_TOPOS  := topologies/aws-p3.16xlarge-cxl.json,topologies/dgx1-v100-cxl.json,topologies/dgx1-p100-cxl.json,topologies/pcie-t4-cxl.json
# The three settings of reports/paper-reproduction.csv (docs/paper-reproduction.md):
# (a) the paper's experiment, GPUs emulating the memory devices, COARSE with MPI on
# the GPU side against MPI AllReduce; (b) the same machines against NCCL's ring;
# (c) real CXL cards on PCIe against NCCL's ring.
PAPER_EMU    := topologies/dgx1-v100-emu.json,topologies/dgx1-p100-emu.json,topologies/pcie-t4-emu.json
PAPER_A      := a-paper-emu-vs-mpi:mpi,coarse-mpi:$(PAPER_EMU)
PAPER_B      := b-emu-vs-nccl:ring,coarse:$(PAPER_EMU)
PAPER_C      := c-cxl-vs-nccl:ring,coarse:topologies/dgx1-v100-cxl.json,topologies/dgx1-p100-cxl.json,topologies/pcie-t4-cxl.json
comma := ,
empty :=
space := $(empty) $(empty)
run: deps all
	./coarse-plan check $(MODELS) $(TOPOS)
	@for m in $(MODELS); do ./coarse-plan info -m $$m || exit $$?; done
	@for t in $(TOPOS); do ./coarse-plan info -t $$t || exit $$?; done
	./coarse-plan compare -m $(subst $(space),$(comma),$(MODELS)) -t $(subst $(space),$(comma),$(TOPOS)) \
	    -o reports/compare.csv
	./coarse-plan compare -m $(PAPER_MODELS) --setting $(PAPER_A) --setting $(PAPER_B) \
	    --setting $(PAPER_C) -o reports/paper-reproduction.csv --svg reports/paper-reproduction.svg
	./coarse-plan compare -m $(PAPER_MODELS) -t $(PAPER_TOPOS) -s ring,tree,ps,proxy,coarse \
	    --compute-scale 0.25 --grad-dtype fp16 -o reports/paper-reproduction-amp.csv \
	    --svg reports/paper-reproduction-amp.svg
	./coarse-plan compare -m models/bert-large.json,models/gpt2.json -t $(PAPER_TOPOS) \
	    -s ring,proxy,coarse --compute-scale 0.25 --grad-dtype fp16 \
	    --memdev-gbs 6,12,24,48,96 --memdev-reduce-gbs 6,12,24,48,96 -o reports/memdev-sweep.csv
	./coarse-plan predict -m models/bert-large.json -t topologies/aws-p3dn.json --hosts 2 \
	    --compute-ms 300 -s ring,auto,hier --timeline-svg reports/timeline-bert-large-p3dn.svg
	@# the CXL pool reports (docs/pool.md, "Reports"): Llama-3-8B from its published config
	./coarse-plan import hf-config tests/data/good/hf/llama-3-8b.json --dtype bf16 \
	    --seq-len 8192 -o $(BUILD)/llama-3-8b.json
	./coarse-plan pod -m models/bert-large.json,models/gpt2-medium.json,$(BUILD)/llama-3-8b.json \
	    -t topologies/hgx-h100-pod.json -o reports/pod.csv --svg reports/pod.svg
	./coarse-plan pod --collectives -t topologies/cccl-pod.json -o reports/cccl-pod.csv
	@# where a pool pays at large-model scale (docs/pool.md): the best layout with and
	@# without the pod's pool and its twice-as-fast what-if, five published configs,
	@# 8 and 64 hosts, the shipped 400 Gb/s NICs and 24 Gb/s ones
	./coarse-plan search -m $(HF)/llama-3-8b.json,$(HF)/llama-3-70b.json,$(HF)/llama-3.1-405b.json,$(HF)/gpt3-175b.json,$(HF)/qwen3-30b-a3b.json \
	    -t topologies/hgx-h100-pod.json,topologies/hgx-h100-pod-2x.json --gbs 256,512,1024,1024,512 \
	    --seq 8192 --hosts 8,64 --net-gbs 50,3 --csv reports/pool-pays.csv --svg reports/pool-pays.svg
	@echo "make run: reports written to reports/"

# ---------------------------------------------------------------- tests
# test-one: one build flavour (plain or sanitized, chosen by BUILD/SAN).
# Each suite's output is kept to count what cmocka reports SKIPPED (tests
# that need ../shared/data: tests/unit/testutil.h's SHARED_DATA, which
# CFLAGS=-DSHARED_DATA='"/elsewhere"' moves), printed at the end.
unit: $(UNIT_BIN)
	@set -e; skipped=0; log=$(BUILD)/tests/unit.log; \
	for t in $(UNIT_BIN); do echo "== $$t"; \
	    if $$t >$$log 2>&1; then cat $$log; else cat $$log; exit 1; fi; \
	    n=$$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test(s), listed below:$$/\1/p' $$log); \
	    skipped=$$((skipped + $${n:-0})); done; \
	echo "make unit: all suites passed; $$skipped test(s) SKIPPED"

cli: $(BIN) examples/plan_reader
	@BIN=$(BIN) sh tests/cli/run.sh
	@BIN=$(BIN) sh tests/cli/flows.sh
	@BIN=$(BIN) sh tests/cli/hwloc.sh
	@BIN=$(BIN) sh tests/cli/progress.sh
	@BIN=$(BIN) sh tests/cli/clidoc.sh --check
	@BIN=$(BIN) sh tests/cli/readme.sh
	@BIN=$(BIN) sh tests/cli/svg.sh
	@BIN=$(BIN) sh tests/cli/devfull.sh
	@BIN=$(BIN) sh tests/cli/trust.sh

# coarse-run on plans the script writes (skips, saying so, without Open MPI)
run-tests: $(BIN) $(if $(HAVE_MPI),$(RUN_BIN) $(SEARCH_BIN))
	@BIN=$(BIN) RUN=$(RUN_BIN) sh tests/run/run.sh
	@BIN=$(BIN) SEARCH=$(SEARCH_BIN) sh tests/run/search.sh

test-one: unit cli run-tests

# the libraries compile on every core first; the suites then run one at a time
NPROC := $(shell getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
ASAN_SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

asan:
	$(MAKE) -j$(NPROC) BUILD=build/asan OPT=-O1 SAN="$(ASAN_SAN)" build/asan/libcoarse.a
	$(MAKE) test-one BUILD=build/asan OPT=-O1 SAN="$(ASAN_SAN)"

test: deps
	$(MAKE) -j$(NPROC) all
	$(MAKE) test-one
	@sh tests/tools/include-cycles.sh
	@sh tests/tools/make-models.sh
	@sh tests/tools/doc-sources.sh
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 $(MAKE) asan
	$(MAKE) test-hardening
	$(MAKE) test-install
	@echo "make test: all suites passed (plain and ASan+UBSan)"

# ---------------------------------------------------------------- install
# make install PREFIX=/usr/local DESTDIR=: the binary, the runtime library
# with its header and pkg-config file (a runtime builds with
# `pkg-config --cflags --libs coarse-plan`), and the man page.  The version
# in the .pc file and the man page is src/core/version.h's CP_VERSION, the
# one --version prints and plan files carry.  tests/cli/install.sh checks it.
PREFIX  ?= /usr/local
DESTDIR ?=
VERSION := $(shell sed -n 's/^\#define CP_VERSION "\(.*\)"$$/\1/p' src/core/version.h)
INSTALL_FILES := bin/coarse-plan lib/libcoarseplan.a include/coarse_plan.h \
                 lib/pkgconfig/coarse-plan.pc share/man/man1/coarse-plan.1
# coarse-run too, where it was built (Open MPI's mpicc present)
RUN_INSTALL   := $(if $(HAVE_MPI),bin/coarse-run bin/coarse-search)

$(BUILD)/coarse-plan.pc: tools/coarse-plan.pc.in src/core/version.h FORCE
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' $< >$@.tmp && mv -f $@.tmp $@

$(BUILD)/coarse-plan.1: docs/coarse-plan.1.in src/core/version.h
	@mkdir -p $(dir $@)
	sed -e 's|^\.ds Vn .*|.ds Vn $(VERSION)|' $< >$@.tmp && mv -f $@.tmp $@

install: coarse-plan libcoarseplan.a $(BUILD)/coarse-plan.pc $(BUILD)/coarse-plan.1 $(RUN_ALL)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig \
	    $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 coarse-plan $(DESTDIR)$(PREFIX)/bin/coarse-plan
	install -m 644 libcoarseplan.a $(DESTDIR)$(PREFIX)/lib/libcoarseplan.a
	install -m 644 include/coarse_plan.h $(DESTDIR)$(PREFIX)/include/coarse_plan.h
	install -m 644 $(BUILD)/coarse-plan.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/coarse-plan.pc
	install -m 644 $(BUILD)/coarse-plan.1 $(DESTDIR)$(PREFIX)/share/man/man1/coarse-plan.1
	$(if $(HAVE_MPI),install -m 755 coarse-run $(DESTDIR)$(PREFIX)/bin/coarse-run)
	$(if $(HAVE_MPI),install -m 755 coarse-search $(DESTDIR)$(PREFIX)/bin/coarse-search)

uninstall:
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/,$(INSTALL_FILES) $(RUN_INSTALL))

# install and uninstall into temporary prefixes, build examples/plan_reader.c
# against the installed copy with pkg-config alone, render the man page
test-install: coarse-plan
	@MAKE=$(MAKE) sh tests/cli/install.sh

# the option reference of docs/cli.md, rewritten from every command's --help
# (tests/cli/clidoc.sh --check, run by `make cli`, fails when they differ)
cli-doc: $(BIN)
	@BIN=$(BIN) sh tests/cli/clidoc.sh --write

.PHONY: FORCE
FORCE:

# ---------------------------------------------------------------- bench
# Speed and memory, measured (not asserted): figures go to docs/performance.md.
$(BUILD)/bench: tests/bench/bench.c $(LIB)
	$(CC) $(ALLCFLAGS) $(CPPFLAGS) -o $@ $< $(LIB) $(LDLIBS)

bench: deps $(BUILD)/bench
	$(BUILD)/bench

# ---------------------------------------------------------------- data
NCCL_TABLES := ../shared/data/nccl-tests
calibration: all $(BUILD)/fit-llm $(BUILD)/fit-net
	./coarse-plan calibrate $(NCCL_TABLES)/v100-sxm2-8gpu-hybridcubemesh_konnase.txt \
	    -t topologies/dgx1-v100.json
	./coarse-plan calibrate $(NCCL_TABLES)/aws-p3dn-2node-16xV100_efa.txt \
	    -t topologies/aws-p3dn.json --hosts 2
	@echo "copy the fitted numbers into tools/topogen.py (CAL_LAUNCH_US, CAL_NVLINK) and src/topo/fabrics.c (efa-2019), then make topologies"
	$(BUILD)/fit-net $(NCCL_TABLES)/p5-48xlarge_awsome.csv
	@echo "copy nvls_eff into tools/topogen.py (CAL_NVLS), then make topologies; efa-2024 into src/topo/fabrics.c"
	$(BUILD)/fit-llm
	@echo "copy the fitted constants into src/llm/gpu.c's calibs[] (docs/calibration.md)"

# The large-model compute fit (docs/calibration.md, "Large-model compute"):
# the published runs of ../shared/data/llm read in place.
$(BUILD)/fit-llm: tools/fit-llm.c tests/unit/llm_rows.h $(LIB)
	$(CC) $(ALLCFLAGS) $(CPPFLAGS) -Itests/unit -o $@ $< $(LIB) $(LDLIBS)

# nvls_eff and the efa-2024 fabric (docs/calibration.md): the p5 rows read in place.
$(BUILD)/fit-net: tools/fit-net.c $(LIB)
	$(CC) $(ALLCFLAGS) $(CPPFLAGS) -o $@ $< $(LIB) $(LDLIBS)

topologies:
	python3 tools/topogen.py

# MODELS_SRC, MODELS_OUT: tests/tools/make-models.sh points them elsewhere
MODELS_SRC ?= ../shared/data/models
MODELS_OUT ?= models
models:
	python3 tools/csv2model.py $(MODELS_SRC) $(MODELS_OUT)

clean:
	rm -rf build coarse-plan coarse-run coarse-search libcoarseplan.a examples/plan_reader

-include $(OBJ:.o=.d) $(BUILD)/src/main.d

# ---------------------------------------------------------------- hardening (tests/fuzz, tests/robust, lint)
# Quality gates beyond the unit and CLI tests; docs/hardening.md says what
# each checks and how to read a failure.
#   make fuzz [FUZZ_SECONDS=60]  every libFuzzer target (tests/fuzz/) for N s
#   make robust      400 mutants of a shipped model and topology, ASan binary
#   make valgrind    memcheck on the plain binary: no errors, no definite leaks
#   make lint        no include circles in src/, cppcheck and clang-tidy over src/
#                    (and the test C files)
#   make determinism -O0 and -O2 binaries print the same bytes
#   make replay      tests/data/{good,bad}: expected exit codes, no sanitizer report
#   make test-hardening  the fast versions, run by `make test`
# The fuzz build is clang with libFuzzer + ASan + UBSan in build/fuzz; the
# ASan binary is the one `make asan` builds (build/asan, same flags).
FUZZ_SECONDS       ?= 60
FUZZ_SMOKE_SECONDS ?= 4
ROBUST_MUTANTS     ?= 400
ROBUST_SMOKE       ?= 100
HARD_FUZZ_CC       := clang
HARD_FUZZ_DIR      := build/fuzz
HARD_FUZZ_SAN      := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all \
                      -fno-omit-frame-pointer
HARD_FUZZ_BIN      := $(patsubst %,$(HARD_FUZZ_DIR)/fuzz_%,model topo nccl plan ncclxml smi hf hwloc)
HARD_ASAN_SAN      := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
HARD_ASAN_ENV      := ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1
HARD_MUTATE        := build/robust/mutate
HARD_LINT_C        := $(shell find src tests/fuzz tests/robust -name '*.c' \
                        $(if $(HAVE_MPI),,! -path 'src/run/*' ! -path 'src/mpisearch/*') | LC_ALL=C sort)

.PHONY: deps-fuzz fuzz-build fuzz fuzz-smoke hard-asan-bin robust robust-smoke replay \
        determinism valgrind lint test-hardening oom

deps-fuzz:
	@./tools/deps.sh --fuzz

# The project's objects, compiled by clang with the fuzzer's coverage hooks
# and the sanitizers, in their own build directory; then one binary per target.
# Warnings do not stop this build: clang's are errors in `make lint`.
fuzz-build: deps-fuzz
	@$(MAKE) --no-print-directory -j$(NPROC) BUILD=$(HARD_FUZZ_DIR) CC=$(HARD_FUZZ_CC) OPT=-O1 \
	    SAN="$(HARD_FUZZ_SAN)" CFLAGS=-Wno-error $(HARD_FUZZ_DIR)/libcoarse.a
	@$(MAKE) --no-print-directory $(HARD_FUZZ_BIN)

$(HARD_FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h tests/fuzz/fuzz_import.h \
    $(HARD_FUZZ_DIR)/libcoarse.a
	$(HARD_FUZZ_CC) $(CSTD) -O1 -g $(WARN) -fsanitize=fuzzer,address,undefined \
	    -fno-sanitize-recover=all -fno-omit-frame-pointer $(CPPFLAGS) -Itests/fuzz \
	    -o $@ $< $(HARD_FUZZ_DIR)/libcoarse.a $(LDLIBS)

# $(BIN) writes the plan target's seeds (plans of the shipped inputs).
fuzz: fuzz-build $(BIN)
	@BIN=$(BIN) sh tests/fuzz/run.sh $(FUZZ_SECONDS)

fuzz-smoke: fuzz-build $(BIN)
	@BIN=$(BIN) sh tests/fuzz/run.sh --smoke $(FUZZ_SMOKE_SECONDS)

hard-asan-bin:
	@$(MAKE) --no-print-directory BUILD=build/asan OPT=-O1 SAN="$(HARD_ASAN_SAN)" \
	    build/asan/coarse-plan

$(HARD_MUTATE): tests/robust/mutate.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) -O2 $(WARN) -o $@ $<

robust: hard-asan-bin $(HARD_MUTATE)
	@$(HARD_ASAN_ENV) sh tests/robust/mutate.sh -n $(ROBUST_MUTANTS)

robust-smoke: hard-asan-bin $(HARD_MUTATE)
	@$(HARD_ASAN_ENV) sh tests/robust/mutate.sh -n $(ROBUST_SMOKE)

replay: hard-asan-bin
	@$(HARD_ASAN_ENV) BIN=build/asan/coarse-plan sh tests/robust/replay.sh

determinism: $(BIN)
	@$(MAKE) --no-print-directory BUILD=build/o0 OPT=-O0 build/o0/coarse-plan
	@sh tests/robust/determinism.sh $(BIN) build/o0/coarse-plan

valgrind: $(BIN)
	@BIN=$(BIN) sh tests/robust/valgrind.sh

# tools/lint.sh: cppcheck, then clang-tidy (.clang-tidy) on 2 processes;
# excused findings are listed, with reasons, in tools/cppcheck-suppressions.txt
# (false positives) and tools/lint-baseline.txt (open, reported).
lint:
	@sh tools/lint.sh $(HARD_LINT_C)

# out of memory: the allocation-failure shim on the plain binary only
# (tests/hardening/oom.sh; ASan replaces the allocator)
oom: $(BIN)
	@BIN=$(BIN) sh tests/hardening/oom.sh

test-hardening:
	@$(MAKE) --no-print-directory oom
	@$(MAKE) --no-print-directory replay
	@$(MAKE) --no-print-directory robust-smoke
	@$(MAKE) --no-print-directory determinism
	@$(MAKE) --no-print-directory fuzz-smoke
