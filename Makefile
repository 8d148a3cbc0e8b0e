# kernel-ladder: make stepN, make all, make test, make clean.
#   make step7                 build ./step7 (steps/v7_*/...cu + common/ + common/ops/)
#   make step7 DEFS="-DBM=64"  build it with tile parameters overridden (sweeps); the
#                              next plain `make step7` rebuilds the default
#   make ARCH=sm_80 all        build for another GPU (default: GPU 0, else sm_90)
#   make NVCCFLAGS="-O3 -G"    other compiler flags (the include path, DEFS and the
#                              architecture are added outside them)
#   make test                  CPU tests always, GPU tests when a GPU is present (every
#                              step's checks; compute-sanitizer on the last step of each
#                              operation, and on every step named by TEST_STEPS)
#   make test-all              the same with compute-sanitizer on every step: run it
#                              before a change to any step's kernel lands
#   make test TEST_STEPS="0 7" only those steps' tests
#   make mutants               realistic bugs put in a scratch copy one at a time: does
#                              the suite catch them? (tests/mutants.sh; survivors listed)
#   tests/golden.sh --update   rewrite the golden tables and chart data that make test
#                              compares whole, after a deliberate change to an output
#   make read_floor            ./read_floor: the fastest one launch can read S bytes here
#   make build/libktrace.so    the kernel timeline's library: tools/timeline.sh OUT ./step44 ...
#   make regs STEP=7 | sass STEP=7 | profile STEP=7 | sanitize STEP=7 | diff A=6 B=7
#   make skipped               the steps `make all` leaves out for this ARCH, and why
#
# A step whose source holds the line `// build: sm_90a` uses Hopper-only
# instructions (wgmma, TMA, setmaxnreg): it is compiled for sm_90a whatever
# ARCH is, with -gencode (the -arch=sm_90a shorthand may add a plain sm_90
# pass that rejects wgmma).  A step whose source holds `// needs: sm_80 (why)`
# cannot be compiled for an older ARCH.  `make all` builds what ARCH can run
# and names the rest (tools/needs.awk); docs/adding_a_step.md has the details.

NVCC      ?= nvcc
CC        := gcc
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(shell command -v $(NVCC) 2>/dev/null))
# GPU 0's compute capability, "9.0" -> 90; anything else nvidia-smi may print
# ("No devices were found", an error) is no GPU.
GPU_CC    := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | grep -m1 -E '^ *[0-9]+\.[0-9]+ *$$' | tr -d ' .')
ARCH      ?= $(if $(GPU_CC),sm_$(GPU_CC),sm_90)
DEFS      ?=
# Where the step folders are (the tests point it at fixtures).
STEPS     ?= steps
# Yours to override; what the build needs is added below, outside them.
NVCCFLAGS ?= -O3 -lineinfo -std=c++17 -Xcompiler -Wall
CFLAGS    ?= -O2 -std=c11 -Wall -Wextra -fopenmp
LDLIBS    := -L$(CUDA_HOME)/lib64 -lcublas -lcublasLt -lcudart -lgomp -lm
comma     := ,
SM90A     := -gencode=arch=compute_90a$(comma)code=sm_90a
# The architecture flag of a source file: sm_90a if it asks for it, else ARCH.
arch_of    = $(if $(shell grep -l '^// build: sm_90a' $(1) 2>/dev/null),$(SM90A),-arch=$(ARCH))
# common/ is the harness, common/ops/ the operations and what only they use; a step
# includes either's headers by name ("kl.h", "quant.h", "ptx.h").
INCLUDES   = -Icommon -Icommon/ops
LIB_NVCC   = $(NVCCFLAGS) -arch=$(ARCH) $(INCLUDES)
LIB_CC     = $(CFLAGS) $(INCLUDES) -I$(CUDA_HOME)/include
# Everything a step binary is compiled with (its stamp below records it).
step_src   = $(wildcard $(STEPS)/v$(1)_*/*.cu)
step_flags = $(NVCCFLAGS) $(call arch_of,$(call step_src,$(1))) $(INCLUDES) $(DEFS)

STEP_SRCS := $(sort $(wildcard $(STEPS)/v*_*/*.cu))
STEP_NUMS := $(sort $(foreach d,$(wildcard $(STEPS)/v*_*),$(patsubst v%,%,$(firstword $(subst _, ,$(notdir $(d)))))))
STEP_BINS := $(addprefix step,$(STEP_NUMS))
# What each step needs (tools/needs.awk): "17:80 20:90a" for the steps ARCH
# cannot build or run; `make all` leaves them out and says why.
NEEDS      = awk -f tools/needs.awk -v arch='$(ARCH)'
STEP_SKIP := $(shell $(NEEDS) $(STEP_SRCS) /dev/null)
SKIP_NUMS := $(foreach x,$(STEP_SKIP),$(firstword $(subst :, ,$(x))))
BUILD_BINS := $(addprefix step,$(filter-out $(SKIP_NUMS),$(STEP_NUMS)))

# The library: common/X.c -> build/X.o, common/ops/X.c -> build/ops/X.o (.cu: X.cu.o).
LIB_C     := $(wildcard common/*.c common/ops/*.c)
LIB_CU    := $(wildcard common/*.cu common/ops/*.cu)
LIB_OBJS  := $(patsubst common/%.c,build/%.o,$(LIB_C)) $(patsubst common/%.cu,build/%.cu.o,$(LIB_CU))
LIB       := build/libkl.a
HEADERS   := $(wildcard common/*.h common/ops/*.h)
# libkl.a holds its objects by file name (ar drops the folder), and tests/cpu_harness.sh
# reads them back by name: two sources of one name would overwrite each other there.
LIB_DUPS  := $(strip $(foreach o,$(sort $(notdir $(LIB_OBJS))),\
                 $(if $(word 2,$(filter %/$(o),$(LIB_OBJS))),$(o))))
$(if $(LIB_DUPS),$(error two library sources make one object name, $(LIB_DUPS): rename one (libkl.a holds common/ and common/ops/ by file name)))

# `make stepN` for a step that ARCH cannot compile: one line, before anything is built.
$(foreach g,$(filter step%,$(MAKECMDGOALS)),$(if $(filter $(patsubst step%,%,$(g)):%,$(filter-out %a,$(STEP_SKIP))),\
    $(error $(shell $(NEEDS) -v mode=check $(call step_src,$(patsubst step%,%,$(g))) 2>&1))))

.PHONY: all test test-all mutants clean regs sass profile sanitize diff list skipped FORCE
.SECONDEXPANSION:

all: $(BUILD_BINS) read_floor
	@$(NEEDS) -v mode=why $(STEP_SRCS) /dev/null | sed 's/^\([0-9]*\)	/skipped step\1: /'

list:
	@echo $(STEP_BINS)
# One line per step `make all` leaves out: its number, a tab, why (run_all.sh reads it).
skipped:
	@$(NEEDS) -v mode=why $(STEP_SRCS) /dev/null

# Flag stamps: build/flags/X holds the flags X was last built with, and is
# rewritten only when they change.  A binary depends on its stamp, so a build
# with other DEFS (or NVCCFLAGS, ARCH) rebuilds, and so does the next plain
# build after it: a tuned binary never stays behind under the default's name.
stamp = @mkdir -p $(@D); printf '%s\n' '$(1)' | cmp -s - $@ || printf '%s\n' '$(1)' >$@
build/flags/lib: FORCE
	$(call stamp,$(NVCC) $(LIB_NVCC) | $(CC) $(LIB_CC))
build/flags/step%: FORCE
	$(call stamp,$(NVCC) $(call step_flags,$*))
build/flags/read_floor: FORCE
	$(call stamp,$(NVCC) $(LIB_NVCC))
FORCE:
.PRECIOUS: build/flags/step%

build/%.o: common/%.c $(HEADERS) build/flags/lib
	@mkdir -p $(@D)
	$(CC) $(LIB_CC) -c $< -o $@
build/%.cu.o: common/%.cu $(HEADERS) build/flags/lib
	@mkdir -p $(@D)
	$(NVCC) $(LIB_NVCC) -c $< -o $@
$(LIB): $(LIB_OBJS)
	rm -f $@
	ar rcs $@ $^

# The compiler's output is printed and kept in build/log/stepN.log: ptxas's notes there are
# checked by tests/cpu_ptxas.sh (a note that wgmmas were serialized fails the test).
step%: $$(call step_src,$$*) $(LIB) $(HEADERS) build/flags/step%
	@test -n "$(filter %.cu,$^)" || { echo "no step $*: $(STEPS)/v$*_*/ does not exist (have: $(STEP_NUMS))"; exit 2; }
	@$(NEEDS) -v mode=check $(filter %.cu,$^)
	tools/logged.sh build/log/$@.log $(NVCC) $(call step_flags,$*) -o $@ $(filter %.cu,$^) $(LIB) $(LDLIBS)

# The fastest one launch can read S bytes here (tools/read_floor.cu; run_all.sh runs it).
read_floor: tools/read_floor.cu $(LIB) $(HEADERS) build/flags/read_floor
	$(NVCC) $(LIB_NVCC) -o $@ tools/read_floor.cu $(LIB) $(LDLIBS)

# Every kernel's start and end on the GPU, nothing serialized (tools/ktrace.c, a CUPTI
# injection library; tools/timeline.sh runs a command with it and summarizes).
build/libktrace.so: tools/ktrace.c
	@mkdir -p $(@D)
	$(CC) -O2 -Wall -Wextra -shared -fPIC -I$(CUDA_HOME)/include -o $@ $< -L$(CUDA_HOME)/lib64 -lcupti -Wl,-rpath,$(CUDA_HOME)/lib64

# Builds each step itself, so one broken step is a failed test, not a stopped run.
test: $(LIB)
	@TEST_STEPS="$(TEST_STEPS)" tests/run_tests.sh
test-all: $(LIB)
	@TEST_STEPS="$(TEST_STEPS)" TEST_SANITIZE=all tests/run_tests.sh

# Each mutant rebuilds only its own object of this library, in the scratch copy.
mutants: $(LIB)
	@tests/mutants.sh

clean:
	rm -rf build $(STEP_BINS) read_floor tests/bin tests/tmp

# ---- inspection ---------------------------------------------------------
# Each fails with one line saying what to do: no such step, a compile error,
# a missing or failing tool.
STEP ?= 0
STEP_SRC = $(call step_src,$(STEP))
NCU_FLAGS ?= --clock-control none --set full
SAN_ARGS  ?= -m 67 -n 45 -k 33 --check-only
CUOBJDUMP ?= cuobjdump
NCU       ?= ncu
SANITIZER ?= compute-sanitizer
# The step a target inspects must exist (checked before anything is built).
ifneq ($(filter regs sass profile sanitize,$(MAKECMDGOALS)),)
ifeq ($(STEP_SRC),)
$(error no step $(STEP): $(STEPS)/v$(STEP)_*/ does not exist (have: $(STEP_NUMS)); use STEP=N)
endif
endif
ifneq ($(filter diff,$(MAKECMDGOALS)),)
ifeq ($(and $(A),$(B)),)
$(error make diff needs two steps: make diff A=6 B=7)
endif
$(foreach x,$(A) $(B),$(if $(call step_src,$(x)),,$(error no step $(x): $(STEPS)/v$(x)_*/ does not exist (have: $(STEP_NUMS)))))
endif
# tool_missing TOOL, TARGET: one line and exit 2 when TOOL is not on the PATH.
tool_missing = command -v $(1) >/dev/null || { echo "make $(2): $(1) not found: it ships with the CUDA toolkit; put its bin/ on the PATH or name it: make $(2) $(3)=/path/to/it"; exit 2; }

regs:
	@mkdir -p build
	@$(NEEDS) -v mode=check $(STEP_SRC)
	@$(NVCC) $(call step_flags,$(STEP)) -Xptxas -v -c $(STEP_SRC) -o /dev/null >build/regs.log 2>&1 || \
	{ grep -i -m5 error build/regs.log; echo "make regs: step$(STEP) did not compile$(if $(DEFS), with DEFS=$(DEFS)) (errors above): fix them$(if $(DEFS), or change DEFS)"; exit 1; }
	@grep -E "Compiling|registers|spill|smem" build/regs.log
sass: step$(STEP)
	@$(call tool_missing,$(CUOBJDUMP),sass,CUOBJDUMP)
	@$(CUOBJDUMP) -sass ./step$(STEP) >build/step$(STEP).sass 2>build/sass.err || \
	{ echo "make sass: '$(CUOBJDUMP) -sass ./step$(STEP)' failed (exit $$?)$$(head -n1 build/sass.err | sed 's/^/: /'); check that it is the CUDA toolkit's cuobjdump, then rebuild: make clean step$(STEP)"; exit 1; }
	@grep -v -E "^\s*$$" build/step$(STEP).sass | if command -v less >/dev/null; then less -FRX; else cat; fi
profile: step$(STEP)
	@$(call tool_missing,$(NCU),profile,NCU)
	$(NCU) $(NCU_FLAGS) --kernel-name regex:'^(?!kl_)' ./step$(STEP) --sizes 4096 --iters 1 --warmup 1 --check-only
sanitize: step$(STEP)
	@$(call tool_missing,$(SANITIZER),sanitize,SANITIZER)
	$(SANITIZER) --tool memcheck --error-exitcode 1 ./step$(STEP) $(SAN_ARGS) && \
	$(SANITIZER) --tool racecheck --error-exitcode 1 ./step$(STEP) $(SAN_ARGS)
# diff exits 1 when the files differ, which is the point; 2 is trouble.
diff:
	@diff -u $(call step_src,$(A)) $(call step_src,$(B)); test $$? -le 1
