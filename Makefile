# baton's front end over CMake (Ninja by default, GENERATOR="Unix Makefiles" works too). Quick start: `make demo`, then `make test`.
# Build options are make variables, passed to CMake only when given (later runs keep them in the
# build folder's cache), e.g. `make build CUDA=OFF`, `make test CUDA_ARCHS="80;90"`:
#   CUDA=AUTO|ON|OFF|EMU (BATON_CUDA; EMU: the emulated GPU, build folder build-emu by default)
#   CUDA_ARCHS=90 (BATON_CUDA_ARCHS)   MPI=AUTO|ON|OFF (BATON_MPI)
#   WERROR=ON|OFF (BATON_WERROR)    BUILD_TYPE=Release (CMAKE_BUILD_TYPE)
#   CMAKE_ARGS="-D..." (anything else)   BUILD_DIR=build   JOBS=2   CTEST_ARGS="-L cpu"
#   GENERATOR=Ninja (CMake's generator for a new build folder; an existing folder keeps its own)
# CUDNN_ROOT, NCCL_ROOT and CMAKE_PREFIX_PATH are read from the environment by CMake.

CUDA ?= $(BATON_CUDA)
BUILD_DIR ?= $(if $(filter EMU,$(CUDA)),build-emu,build)
JOBS ?= 2
CUDA_ARCHS ?= $(BATON_CUDA_ARCHS)
MPI ?= $(BATON_MPI)
WERROR ?= $(BATON_WERROR)
BUILD_TYPE ?=
CMAKE_ARGS ?=
CTEST_ARGS ?=
CLANG_FORMAT ?= clang-format
GENERATOR ?= Ninja
# -G "$(GENERATOR)" for a folder not configured yet; a configured one keeps the generator it was made with.
generator_option = $(if $(wildcard $(1)/CMakeCache.txt),,-G "$(GENERATOR)")
# The demo's training run: about 2.5 minutes on 2 CPU cores, 99% top-1 on the shapes test set (a GPU is used when present).
DEMO_TRAIN_ARGS ?= --steps 600 --batch-size 64 --lr 0.1 --log-every 100
# The demo trains as a 2-stage pipeline: on 2 GPUs, on 2 streams of one GPU, or on the virtual CPU
# devices cpu:0,cpu:1 (always available), and writes the measured and predicted timelines.
DEMO_PIPELINE_ARGS ?= --stages 2 --micro-batches 4 --trace $(BUILD_DIR)/demo-trace.json

BATON := $(BUILD_DIR)/bin/baton
# -D<name>=<value> when value is not empty (quoted: CUDA_ARCHS may hold a ';').
cmake_option = $(if $(strip $(2)),'-D$(1)=$(strip $(2))')
CONFIGURE_ARGS := $(call cmake_option,BATON_CUDA,$(CUDA)) $(call cmake_option,BATON_CUDA_ARCHS,$(CUDA_ARCHS)) \
  $(call cmake_option,BATON_MPI,$(MPI)) $(call cmake_option,BATON_WERROR,$(WERROR)) \
  $(call cmake_option,CMAKE_BUILD_TYPE,$(BUILD_TYPE)) $(CMAKE_ARGS)

# $(1): the targets to build (empty: all of them, every test included).
define configure_and_build
cmake -S . -B $(BUILD_DIR) $(call generator_option,$(BUILD_DIR)) $(CONFIGURE_ARGS)
cmake --build $(BUILD_DIR) -j $(JOBS) $(if $(1),--target $(1))
endef

.DEFAULT_GOAL := build
.PHONY: help deps build demo test test-emu test-asan test-tsan bench gpu-check format format-check clean

help:
	@echo "make demo       install missing packages, build, train ResNet-20 on generated shapes data as a 2-stage pipeline, print the accuracy"
	@echo "make test       install missing packages, build, run every test (ctest -j$(JOBS))"
	@echo "make test-emu   build the gpu tests for the emulated GPU in build-emu/ (no nvcc needed) and run them (ctest -L gpu)"
	@echo "make test-asan  clang AddressSanitizer + UndefinedBehaviorSanitizer build in build-asan/ (CPU-only, fuzz targets included): cpu tests and fuzz smoke runs"
	@echo "make test-tsan  ThreadSanitizer build in build-tsan/ (CPU-only) of the suites that run threads (label threads), and run them"
	@echo "make build      configure and build in $(BUILD_DIR)/ (options: CUDA= CUDA_ARCHS= MPI= WERROR= BUILD_TYPE= CMAKE_ARGS=)"
	@echo "make deps       install missing Debian packages, Open MPI included unless MPI=OFF (tools/install-deps.sh)"
	@echo "make bench      kernel benchmark, JSON in $(BUILD_DIR)/bench-kernels.json"
	@echo "make gpu-check  on a GPU machine: CUDA build in build-gpu/, gpu tests, devices, benchmark"
	@echo "make format     clang-format the project's sources in place"
	@echo "make format-check  fail, naming the files, when a source is not clang-formatted (run by .ci/run)"
	@echo "make clean      remove build/, build-cpu/, build-gpu/, build-emu/, build-asan/ and build-tsan/"

deps:
	tools/install-deps.sh $(if $(filter OFF,$(MPI)),--without-mpi)

build:
	$(configure_and_build)

demo: deps
	$(call configure_and_build,baton_cli)
	$(BATON) devices
	$(BATON) make-dataset shapes --out $(BUILD_DIR)/shapes-demo --train 20000 --test 2000
	$(BATON) train --model resnet20 --data cifar10:$(BUILD_DIR)/shapes-demo $(DEMO_TRAIN_ARGS) $(DEMO_PIPELINE_ARGS) \
	  --metrics $(BUILD_DIR)/demo-metrics.jsonl

test: deps
	$(configure_and_build)
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

# The gpu-labelled tests on the emulated GPU (BATON_CUDA=EMU, docs/emulated-gpu.md): only their targets are built.
EMU_BUILD_DIR ?= build-emu
test-emu: deps
	cmake -S . -B $(EMU_BUILD_DIR) $(call generator_option,$(EMU_BUILD_DIR)) -DBATON_CUDA=EMU $(call cmake_option,BATON_MPI,$(MPI)) \
	  $(call cmake_option,BATON_WERROR,$(WERROR)) $(call cmake_option,CMAKE_BUILD_TYPE,$(BUILD_TYPE)) $(CMAKE_ARGS)
	cmake --build $(EMU_BUILD_DIR) -j $(JOBS) --target baton_gpu_tests
	cd $(EMU_BUILD_DIR) && ctest -L gpu --output-on-failure -j $(JOBS) $(CTEST_ARGS)

# Sanitizer builds (cmake/BatonSanitize.cmake, docs/sanitizers.md): CPU-only, without MPI.
# test-asan: clang with libFuzzer (BATON_FUZZ implies ASan + UBSan), every target; the cpu tests and
# a smoke run of each fuzz target. test-tsan: only the suites labelled threads, and those.
ASAN_BUILD_DIR ?= build-asan
TSAN_BUILD_DIR ?= build-tsan
sanitizer_configure = cmake -S . -B $(1) $(call generator_option,$(1)) -DBATON_CUDA=OFF -DBATON_MPI=OFF $(call cmake_option,BATON_WERROR,$(WERROR)) \
  -DCMAKE_BUILD_TYPE=$(or $(BUILD_TYPE),Release) $(CMAKE_ARGS)
test-asan: deps
	tools/install-deps.sh --with-clang
	$(call sanitizer_configure,$(ASAN_BUILD_DIR)) -DCMAKE_CXX_COMPILER=clang++ -DBATON_FUZZ=ON
	cmake --build $(ASAN_BUILD_DIR) -j $(JOBS)
	cd $(ASAN_BUILD_DIR) && ctest -L 'cpu|fuzz' --no-tests=error --output-on-failure -j $(JOBS) $(CTEST_ARGS)

test-tsan: deps
	$(call sanitizer_configure,$(TSAN_BUILD_DIR)) -DBATON_SANITIZE=thread
	cmake --build $(TSAN_BUILD_DIR) -j $(JOBS) --target baton_threads_tests
	cd $(TSAN_BUILD_DIR) && ctest -L threads --no-tests=error --output-on-failure -j $(JOBS) $(CTEST_ARGS)

bench: build
	$(BATON) bench kernels --json $(BUILD_DIR)/bench-kernels.json

gpu-check:
	$(if $(strip $(CUDA_ARCHS)),BATON_CUDA_ARCHS='$(strip $(CUDA_ARCHS))') tools/gpu-check.sh

format:
	@command -v $(CLANG_FORMAT) >/dev/null || { echo "make format: $(CLANG_FORMAT) not found (apt-get install clang-format)" >&2; exit 1; }
	git ls-files -z --cached --others --exclude-standard -- '*.h' '*.cc' '*.cu' '*.cuh' | xargs -0 -r $(CLANG_FORMAT) -i

format-check:
	CLANG_FORMAT=$(CLANG_FORMAT) tools/check-format.sh

clean:
	rm -rf $(BUILD_DIR) build-cpu build-gpu build-emu build-asan build-tsan
