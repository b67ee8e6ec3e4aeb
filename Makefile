# Builds every program of the project; `make test` runs every test.
# Sources are found by wildcard so that a new file in a directory needs no
# edit here: shared/*.c and every .c file under kernels/ (found by walking
# its folders, so that a new folder cannot be left out) go into static
# libraries, each tests/unit/test_*.c becomes its own test binary.

PREFIX  ?= /usr/local
DESTDIR ?=
CC      ?= cc
PKGS     = libzmq libczmq msgpack openslide libcurl libpng libtiff-4 zlib libsodium glib-2.0
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
ifeq ($(PKG_LIBS),)
$(warning pkg-config could not find: $(PKGS); run `make deps` (Debian) first)
endif

VERSION := $(shell cat VERSION 2>/dev/null || echo 0.0.0)
OPT     ?= -O2 -g
WARN     = -Wall -Wextra -Werror -Wno-unused-parameter
CFLAGS  += -std=c11 -D_GNU_SOURCE $(OPT) $(WARN) -pthread -I. $(PKG_CFLAGS) -DQC_VERSION='"$(VERSION)"' -MMD -MP
LDLIBS  += $(PKG_LIBS) -ljpeg -lm -ldl -pthread
SAN     ?=
ifeq ($(SAN),1)
CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif

BUILD   ?= build

# CUDA backend (kernels/ops/cuda): built when nvcc is found
# ($(CUDA_HOME)/bin/nvcc, then nvcc on PATH), as a fat binary for sm_80
# and sm_90 plus PTX for later GPUs. CUDA=0 forces a CPU-only build; a
# CPU-only build links kernels/ops/cuda/cuda_none.c, whose qc_ops_cuda ()
# says "not built".
CUDA_HOME ?= /usr/local/cuda
CUDA_DIR  := kernels/ops/cuda
ifeq ($(CUDA),0)
NVCC :=
CUDA_WHY := CUDA=0
else
NVCC ?= $(firstword $(wildcard $(CUDA_HOME)/bin/nvcc) $(shell command -v nvcc 2>/dev/null))
CUDA_WHY := no nvcc
endif
ifneq ($(NVCC),)
CUDA_ROOT   := $(patsubst %/bin/nvcc,%,$(NVCC))
CUDA_ARCH   ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
               -gencode arch=compute_90,code=compute_90
# -fmad=false: no fused multiply-add contraction, so that the kernels
# round exactly as the CPU backend does (gcc does not contract on x86-64).
NVCCFLAGS   += -std=c++17 -O2 -g -lineinfo -fmad=false $(CUDA_ARCH) -I. -DQC_HAVE_CUDA \
               -Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror,-Wno-unused-parameter,-pthread
CFLAGS      += -DQC_HAVE_CUDA
# nvJPEG: a GPU lane decodes a slide's JPEG tiles itself (decode_jpeg,
# kernels/ops/cuda/jpeg_tiles.cu) with CUDA's libnvjpeg, loaded at run
# time (kernels/ops/cuda/nvjpeg_api.h): not needed to build, and a
# machine without it decodes on the host. Where the toolkit has
# nvjpeg.h (NVJPEG_H names another), nvjpeg_abi_check.cu asserts that
# our declarations are its own; without it the check is left out, said.
NVJPEG_H    ?= $(firstword $(wildcard $(CUDA_ROOT)/include/nvjpeg.h \
                 $(CUDA_ROOT)/targets/x86_64-linux/include/nvjpeg.h))
NVJPEG_CHECK := $(if $(NVJPEG_H),$(BUILD)/kernels/ops/cuda/nvjpeg_abi_check.ok)
NVJPEG_H_DIR := $(dir $(NVJPEG_H))
ifeq ($(NVJPEG_H),)
$(info no nvjpeg.h in $(CUDA_ROOT): nvJPEG's declarations (kernels/ops/cuda/nvjpeg_api.h) not checked against it)
endif
NVCCFLAGS   += -DQC_CUDA_ROOT='"$(CUDA_ROOT)"'
# static cudart: the programs need only the driver (libcuda.so) to run
LDLIBS      += -L$(CUDA_ROOT)/lib64 -lcudart_static -ldl -lrt -lstdc++
# (nvjpeg_abi_check.cu is a check, compiled alone where nvjpeg.h is)
CUDA_CU_SRC := $(shell find $(CUDA_DIR) -name '*.cu' -not -name nvjpeg_abi_check.cu | LC_ALL=C sort)
CUDA_C_SRC  := $(filter-out $(CUDA_DIR)/cuda_none.c,$(shell find $(CUDA_DIR) -name '*.c' | LC_ALL=C sort))
else
$(info building CPU-only ($(CUDA_WHY)))
CUDA_CU_SRC :=
# nvjpeg_load.c is plain C: built everywhere, so that its test runs
CUDA_C_SRC  := $(CUDA_DIR)/cuda_none.c $(CUDA_DIR)/nvjpeg_load.c
endif
# V=1 shows the full compiler command lines
Q := $(if $(V),,@)
SHARED_SRC  := $(wildcard shared/*.c)
# Every .c file under kernels/ but the CUDA backend's (chosen above) and
# kernels/tools/ (programs that write the library's data files, built
# into $(BUILD)/tools/ so that they keep compiling).
KERNELS_SRC := $(shell find kernels -name '*.c' -not -path '$(CUDA_DIR)/*' \
                 -not -path 'kernels/tools/*' | LC_ALL=C sort) $(CUDA_C_SRC)
TOOLS_SRC   := $(wildcard kernels/tools/*.c)
BROKER_SRC  := $(filter-out broker/main.c,$(wildcard broker/*.c))
WORKER_SRC  := $(filter-out worker/main.c,$(wildcard worker/*.c worker/fetch/*.c))
CLIENT_SRC  := $(filter-out client/submit_main.c client/status_main.c,$(wildcard client/*.c))
GEN_SRC     := $(wildcard tests/gen/*.c)
UNIT_SRC    := $(wildcard tests/unit/test_*.c)
BENCH_SRC   := $(wildcard tests/bench/bench_*.c)
# programs the integration tests drive (e.g. a peer that plays a stranger)
TEST_TOOLS_SRC := $(wildcard tests/tools/*.c)

obj = $(patsubst %.c,$(BUILD)/%.o,$(1))
LIBQC      := $(BUILD)/libqc.a
LIBKERNELS := $(BUILD)/libqckernels.a
LIBNODES   := $(BUILD)/libqcnodes.a
# broker, worker and client code form one library so that qc-submit can run
# the broker and the worker itself (the one-process default: the broker in
# its process, the worker in a supervised one it forks).
NODE_OBJ   := $(call obj,$(BROKER_SRC) $(WORKER_SRC) $(CLIENT_SRC))
LIBS_ALL   := $(LIBNODES) $(LIBKERNELS) $(LIBQC)

PROGRAMS := bin/qc-broker bin/qc-worker bin/qc-submit bin/qc-status bin/qc-keygen bin/qc-mkslide
UNIT_BIN := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
BENCH_BIN:= $(patsubst tests/bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))
TOOLS_BIN:= $(patsubst kernels/tools/%.c,$(BUILD)/tools/%,$(TOOLS_SRC))
TEST_TOOLS := $(patsubst tests/tools/%.c,$(BUILD)/tests/tools/%,$(TEST_TOOLS_SRC))

.PHONY: all test test-unit test-integration bench install clean deps demo fuzz fuzz-targets
# Objects a pattern chain makes (a tool's, a unit test's) are kept: make
# deleted them as intermediate, so they were built again each time, and
# its "rm build/..." line was the last thing make demo printed
.SECONDARY:
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 2)
all: $(PROGRAMS) $(TOOLS_BIN)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC $<")
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

# Everything under kernels/ is built at -O3: the CPU backend's per-pixel
# loops (mask logic, counts, thresholds, integer sums) are vectorised at
# -O3 and not at -O2; so are the modules' own loops over pixels and the
# PNG encoder's. -O3 does not reorder floating-point sums (no
# -ffast-math), so the numbers are the same bits either way.
$(BUILD)/kernels/%.o: CFLAGS += -O3

# The commit a build comes from (git describe; "" outside a git tree):
# --version and a worker's READY name it, so that a cluster that mixes
# builds is seen (the broker warns) and a row's maker can be traced. The
# file is rewritten only when the commit changes: nothing else rebuilds.
# (only this tree's own repository: an unpacked tarball inside another
# repository gets none)
BUILD_ID := $(shell [ "$$(git rev-parse --show-toplevel 2>/dev/null)" = "$(CURDIR)" ] \
              && git describe --always --dirty --abbrev=8 2>/dev/null)
BUILD_ID_OBJ := $(BUILD)/gen/build_id.o
$(BUILD)/gen/build_id.c: FORCE
	@mkdir -p $(dir $@)
	@printf 'const char qc_build_id[] = "%s";\n' '$(BUILD_ID)' > $@.tmp; \
	    cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
$(BUILD_ID_OBJ): $(BUILD)/gen/build_id.c
	$(Q)$(CC) $(CFLAGS) -c $< -o $@
.PHONY: FORCE
FORCE:

$(LIBQC): $(call obj,$(SHARED_SRC)) $(BUILD_ID_OBJ)
	@mkdir -p $(dir $@); rm -f $@; ar rcs $@ $^
$(BUILD)/%.cu.o: %.cu
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NVCC $<")
	$(Q)$(NVCC) $(NVCCFLAGS) -MD -MP -MF $(@:.o=.d) -c $< -o $@

# The classifier's built-in examples (kernels/classify/examples/*.png)
# become a C array at build time, so workers need no example files on disk and the
# repository holds each image once.
EXAMPLES_PNG := $(wildcard kernels/classify/examples/*.png)
EXAMPLES_OBJ := $(BUILD)/gen/classify_examples_data.o
$(BUILD)/gen/classify_examples_data.c: kernels/tools/embed_examples.sh $(EXAMPLES_PNG)
	@mkdir -p $(dir $@)
	$(Q)sh kernels/tools/embed_examples.sh kernels/classify/examples > $@.tmp && mv $@.tmp $@
$(EXAMPLES_OBJ): $(BUILD)/gen/classify_examples_data.c
	@$(if $(Q),echo "  CC $<")
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(LIBKERNELS): $(call obj,$(KERNELS_SRC)) $(EXAMPLES_OBJ) $(patsubst %.cu,$(BUILD)/%.cu.o,$(CUDA_CU_SRC)) \
               | $(NVJPEG_CHECK)
	@mkdir -p $(dir $@); rm -f $@; ar rcs $@ $^
# compiled, never linked: its static_asserts are the check
$(BUILD)/kernels/ops/cuda/nvjpeg_abi_check.ok: kernels/ops/cuda/nvjpeg_abi_check.cu \
        kernels/ops/cuda/nvjpeg_api.h $(NVJPEG_H)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CHECK $< against nvjpeg.h")
	$(Q)$(NVCC) -std=c++17 -I. -I$(NVJPEG_H_DIR) -c $< -o $(@:.ok=.o) && touch $@
$(LIBNODES): $(NODE_OBJ)
	@mkdir -p $(dir $@); rm -f $@; ar rcs $@ $^

bin/qc-broker: $(BUILD)/broker/main.o $(LIBS_ALL)
bin/qc-worker: $(BUILD)/worker/main.o $(LIBS_ALL)
bin/qc-submit: $(BUILD)/client/submit_main.o $(LIBS_ALL)
bin/qc-status: $(BUILD)/client/status_main.o $(LIBS_ALL)
bin/qc-keygen: $(BUILD)/keygen/main.o $(LIBQC)
bin/qc-mkslide: $(call obj,$(GEN_SRC)) $(LIBKERNELS) $(LIBQC)
bin/%:
	@mkdir -p bin
	@$(if $(Q),echo "  LD $@")
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(LIBS_ALL)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@
$(BUILD)/tests/tools/%: $(BUILD)/tests/tools/%.o $(LIBS_ALL)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@
$(BUILD)/bench/%: $(BUILD)/tests/bench/%.o $(LIBS_ALL)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@
$(BUILD)/tools/%: $(BUILD)/kernels/tools/%.o $(LIBKERNELS) $(LIBQC)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# Every unit test binary and every integration script; the runner prints
# the closing line "N passed, N failed".
test: all $(UNIT_BIN) $(TEST_TOOLS)
	QC_BUILD=$(BUILD) tests/run.sh $(UNIT_BIN)

test-unit: all $(UNIT_BIN)
	QC_BUILD=$(BUILD) tests/run.sh --unit-only $(UNIT_BIN)

bench: all $(BENCH_BIN)
	tests/bench/run.sh $(BENCH_BIN)

# libFuzzer targets (tests/fuzz/README.md): `make fuzz` builds them with
# clang, ASan and UBSan into build-fuzz/fuzz/, and their seed inputs
# into build-fuzz/fuzz/corpus/ (made by tests/fuzz/mkseeds.c).
FUZZ_SRC   := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BUILD ?= build-fuzz
ifeq ($(FUZZ),1)
CFLAGS  += -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
LDFLAGS += -fsanitize=address,undefined
endif
fuzz:
	$(MAKE) BUILD=$(FUZZ_BUILD) CC=clang CUDA=0 FUZZ=1 OPT="-O1 -g" fuzz-targets
fuzz-targets: $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRC)) $(BUILD)/fuzz/corpus/.made
$(BUILD)/fuzz/fuzz_%: $(BUILD)/tests/fuzz/fuzz_%.o $(LIBNODES) $(LIBQC)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -fsanitize=fuzzer $^ $(LDLIBS) -o $@
# the slide readers are in the kernels' library
$(BUILD)/fuzz/fuzz_slide: $(BUILD)/tests/fuzz/fuzz_slide.o $(LIBKERNELS) $(LIBQC)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -fsanitize=fuzzer $^ $(LDLIBS) -o $@
$(BUILD)/fuzz/fuzz_annot: $(BUILD)/tests/fuzz/fuzz_annot.o $(LIBKERNELS) $(LIBQC)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -fsanitize=fuzzer $^ $(LDLIBS) -o $@
$(BUILD)/fuzz/mkseeds: $(BUILD)/tests/fuzz/mkseeds.o $(LIBNODES) $(LIBQC)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@
$(BUILD)/fuzz/corpus/.made: $(BUILD)/fuzz/mkseeds
	$< $(BUILD)/fuzz/corpus && touch $@

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/qc
	install -m 0755 bin/qc-broker bin/qc-worker bin/qc-submit bin/qc-status bin/qc-keygen bin/qc-mkslide $(DESTDIR)$(PREFIX)/bin/
	install -m 0644 README.md PROTOCOL.md $(DESTDIR)$(PREFIX)/share/qc/

# The main job: QC of a small generated cohort, one process (out/demo/).
demo: all
	tests/demo.sh

# Installs the Debian packages the build and tests need (as root).
deps:
	./tests/install-deps.sh

clean:
	rm -rf $(BUILD) $(FUZZ_BUILD) bin

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
