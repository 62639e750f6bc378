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
LDLIBS   := -lglpk -ljansson -lm

SRC      := $(shell find src -name '*.c' ! -name main.c | LC_ALL=C sort)
OBJ      := $(SRC:%.c=$(BUILD)/%.o)
LIB      := $(BUILD)/libcoarse.a
BIN      := $(BUILD)/coarse-plan

UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

MODELS   := $(sort $(wildcard models/*.json))
TOPOS    := $(sort $(wildcard topologies/*.json))

.PHONY: all deps run test test-one unit cli asan clean help models topologies calibration

all: coarse-plan

help:
	@echo "make            build ./coarse-plan"
	@echo "make deps       install GLPK, jansson, cmocka from Debian when missing"
	@echo "make run        set up, build, and run the main job on the shipped data"
	@echo "make test       every unit suite and CLI case, plain and under ASan+UBSan"
	@echo "make models     regenerate models/*.json from ../shared/data/models/*.csv"
	@echo "make topologies regenerate topologies/*.json (tools/topogen.py)"
	@echo "make calibration  refit the calibration to the reference nccl-tests tables"
	@echo "make clean      remove build products"

deps:
	@./tools/deps.sh

coarse-plan: $(BIN)
	cp $(BIN) $@

$(BIN): $(BUILD)/src/main.o $(LIB)
	$(CC) $(ALLCFLAGS) -o $@ $^ $(LDLIBS)

$(LIB): $(OBJ)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) $(CPPFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/tests/%: tests/unit/%.c tests/unit/testutil.h $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) $(CPPFLAGS) -Itests/unit -o $@ $< $(LIB) $(LDLIBS) -lcmocka

# ---------------------------------------------------------------- main job
run: deps all
	./coarse-plan check $(MODELS) $(TOPOS)
	@for m in $(MODELS); do ./coarse-plan info -m $$m || exit $$?; done
	@for t in $(TOPOS); do ./coarse-plan info -t $$t || exit $$?; done

# ---------------------------------------------------------------- tests
# test-one: one build flavour (plain or sanitized, chosen by BUILD/SAN).
unit: $(UNIT_BIN)
	@set -e; for t in $(UNIT_BIN); do echo "== $$t"; $$t; done

cli: $(BIN)
	@BIN=$(BIN) sh tests/cli/run.sh

test-one: unit cli

asan:
	$(MAKE) test-one BUILD=build/asan OPT=-O1 \
	    SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"

test: deps all
	$(MAKE) test-one
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 $(MAKE) asan
	@echo "make test: all suites passed (plain and ASan+UBSan)"

# ---------------------------------------------------------------- data
NCCL_TABLES := ../shared/data/nccl-tests
calibration: all
	./coarse-plan calibrate $(NCCL_TABLES)/v100-sxm2-8gpu-hybridcubemesh_konnase.txt \
	    -t topologies/dgx1-v100.json
	./coarse-plan calibrate $(NCCL_TABLES)/aws-p3dn-2node-16xV100_efa.txt \
	    -t topologies/aws-p3dn.json --hosts 2
	@echo "copy the fitted numbers into tools/topogen.py (CAL_*) and run make topologies"

topologies:
	python3 tools/topogen.py

models:
	python3 tools/csv2model.py ../shared/data/models models

clean:
	rm -rf build coarse-plan

-include $(OBJ:.o=.d) $(BUILD)/src/main.d
