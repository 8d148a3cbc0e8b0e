# kernel-ladder: make stepN, make all, make test, make clean.
#   make step7                 build ./step7 (steps/v7_*/...cu + common/)
#   make step7 DEFS="-DBM=64"  rebuild with tile parameters overridden (sweeps)
#   make ARCH=sm_80 all        build for another GPU (default: GPU 0, else sm_90)
#   make test                  CPU tests always, GPU tests when a GPU is present
#   make test TEST_STEPS="0 7" only those steps' tests
#   make read_floor            ./read_floor: the fastest one launch can read S bytes here
#   make regs STEP=7 | sass STEP=7 | profile STEP=7 | sanitize STEP=7 | diff A=6 B=7

NVCC      ?= nvcc
CC        := gcc
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(shell command -v $(NVCC) 2>/dev/null))
GPU_CC    := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1 | tr -d ' .')
ARCH      ?= $(if $(GPU_CC),sm_$(GPU_CC),sm_90)
DEFS      ?=
NVCCFLAGS ?= -O3 -lineinfo -std=c++17 -arch=$(ARCH) -Xcompiler -Wall
CFLAGS    ?= -O2 -std=c11 -Wall -Wextra -fopenmp
NVCCFLAGS += -Icommon $(DEFS)
CFLAGS    += -Icommon -I$(CUDA_HOME)/include
LDLIBS    := -L$(CUDA_HOME)/lib64 -lcublas -lcublasLt -lcudart -lgomp -lm

STEP_SRCS := $(sort $(wildcard steps/v*_*/*.cu))
STEP_NUMS := $(sort $(foreach d,$(wildcard steps/v*_*),$(patsubst v%,%,$(firstword $(subst _, ,$(notdir $(d)))))))
STEP_BINS := $(addprefix step,$(STEP_NUMS))

LIB_C     := $(wildcard common/*.c)
LIB_CU    := $(wildcard common/*.cu)
LIB_OBJS  := $(patsubst common/%.c,build/%.o,$(LIB_C)) $(patsubst common/%.cu,build/%.cu.o,$(LIB_CU))
LIB       := build/libkl.a
HEADERS   := $(wildcard common/*.h)

.PHONY: all test clean regs sass profile sanitize diff list FORCE
.SECONDEXPANSION:

all: $(STEP_BINS) read_floor

list:
	@echo $(STEP_BINS)

build/%.o: common/%.c $(HEADERS) | build
	$(CC) $(CFLAGS) -c $< -o $@
build/%.cu.o: common/%.cu $(HEADERS) | build
	$(NVCC) $(NVCCFLAGS) -c $< -o $@
$(LIB): $(LIB_OBJS)
	ar rcs $@ $^
build:
	@mkdir -p build

# A DEFS override always rebuilds, so a sweep never runs a stale binary.
step%: $$(wildcard steps/v$$*_*/*.cu) $(LIB) $(HEADERS) $(if $(DEFS),FORCE)
	@test -n "$(filter-out $(LIB) $(HEADERS) FORCE,$^)" || { echo "no step $*: steps/v$*_*/ does not exist (have: $(STEP_NUMS))"; exit 2; }
	$(NVCC) $(NVCCFLAGS) -o $@ $(filter %.cu,$^) $(LIB) $(LDLIBS)
FORCE:

# The fastest one launch can read S bytes here (tools/read_floor.cu; run_all.sh runs it).
read_floor: tools/read_floor.cu $(LIB) $(HEADERS)
	$(NVCC) $(NVCCFLAGS) -o $@ tools/read_floor.cu $(LIB) $(LDLIBS)

# Builds each step itself, so one broken step is a failed test, not a stopped run.
test: $(LIB)
	@TEST_STEPS="$(TEST_STEPS)" tests/run_tests.sh

clean:
	rm -rf build $(STEP_BINS) read_floor tests/bin tests/tmp

# ---- inspection ---------------------------------------------------------
STEP ?= 0
STEP_SRC = $(wildcard steps/v$(STEP)_*/*.cu)
NCU_FLAGS ?= --clock-control none --set full
SAN_ARGS  ?= -m 67 -n 45 -k 33 --check-only

regs:
	$(NVCC) $(NVCCFLAGS) -Xptxas -v -c $(STEP_SRC) -o /dev/null 2>&1 | grep -E "Compiling|registers|spill|smem" || true
sass: step$(STEP)
	@command -v cuobjdump >/dev/null || { echo "skip: cuobjdump not found (it ships with the CUDA toolkit)"; exit 0; }; \
	cuobjdump -sass ./step$(STEP) | grep -v -E "^\s*$$" | less -FRX
profile: step$(STEP)
	@command -v ncu >/dev/null || { echo "skip: ncu (Nsight Compute) not found; install it from the CUDA toolkit"; exit 0; }; \
	ncu $(NCU_FLAGS) --kernel-name regex:'^(?!kl_)' ./step$(STEP) --sizes 4096 --iters 1 --warmup 1 --check-only
sanitize: step$(STEP)
	@command -v compute-sanitizer >/dev/null || { echo "skip: compute-sanitizer not found"; exit 0; }; \
	compute-sanitizer --tool memcheck --error-exitcode 1 ./step$(STEP) $(SAN_ARGS) && \
	compute-sanitizer --tool racecheck --error-exitcode 1 ./step$(STEP) $(SAN_ARGS)
diff:
	@diff -u $(wildcard steps/v$(A)_*/*.cu) $(wildcard steps/v$(B)_*/*.cu) || true
