# goldfhe — see README.md. Every target runs on a machine without a GPU unless noted.
GO      ?= go
PKGS    := ./...
# Packages that run goroutines get a -race pass in `make test`, and so do
# the GPU engine on kernels' fake driver (kernels/engine_fake_test.go; not
# its older-GPU test, which adds no concurrency and runs in the plain pass)
# and smallntt's plans shared by goroutines (TestConcurrentUse*; also with
# -tags purego, whose Go code the race detector sees where it cannot see
# the assembly).
RACE_PKGS := ./tfhe/... ./bootstrap/... ./gates/...
NVCC    ?= nvcc
GENCODE := -gencode arch=compute_80,code=sm_80 -gencode arch=compute_86,code=sm_86 \
           -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90,code=[sm_90,compute_90]

.PHONY: test test-386 lint demo bench bench-cpu bench-ntt fuzz fatbin fault-fatbin gpu-build gpu-test gpu-test-compute80

# The test command CI runs (.ci/run). Short mode keeps it to a few minutes on 2 cores.
test:
	CGO_ENABLED=0 $(GO) build $(PKGS)
	CGO_ENABLED=0 $(GO) vet $(PKGS)
	CGO_ENABLED=0 GOARCH=386 $(GO) vet $(PKGS)
	CGO_ENABLED=0 $(GO) test -short -count=1 $(PKGS)
	CGO_ENABLED=0 $(GO) test -short -count=1 -tags purego ./smallntt/
	@if $(GO) env CC >/dev/null 2>&1 && command -v "$$($(GO) env CC)" >/dev/null 2>&1; then \
		CGO_ENABLED=1 $(GO) test -race -short -count=1 $(RACE_PKGS) && \
		CGO_ENABLED=1 $(GO) test -race -short -count=1 -run '^TestConcurrentUse' ./smallntt/ && \
		CGO_ENABLED=1 $(GO) test -race -short -count=1 -tags purego -run '^TestConcurrentUse' ./smallntt/ && \
		CGO_ENABLED=1 $(GO) test -race -short -count=1 -run '^TestFakeGPUEngine' -skip '^TestFakeGPUEngineOlderGPUs$$' ./kernels/; \
	elif [ -n "$(REQUIRE_RACE)" ]; then echo "make test: no C compiler for the -race pass (REQUIRE_RACE is set)" >&2; exit 1; \
	else echo "make test: no C compiler, skipping the -race pass"; fi

# The short suite built for 386, where an int has 32 bits: clients that only
# make keys, encrypt and decrypt may run on such machines (the GPU engine
# needs linux/amd64 or linux/arm64, and its fake-driver tests skip here).
# About 6 minutes on 2 cores; `make test` vets the 386 build of everything.
test-386:
	CGO_ENABLED=0 GOARCH=386 $(GO) test -short -count=1 $(PKGS)

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	CGO_ENABLED=0 $(GO) vet $(PKGS)

demo:
	CGO_ENABLED=0 $(GO) run ./examples/demo

# Gate-bootstrapping benchmark (examples/bench): latency and gates/s against
# batch size for every parameter set and NTT variant, on the GPU when one is
# usable plus the CPU (TFHELib128, batches up to 64); results, summary and
# plots in bench-out/. BENCHFLAGS adds flags, e.g. BENCHFLAGS=-quick.
BENCHFLAGS ?=
bench:
	CGO_ENABLED=0 $(GO) run ./examples/bench -out bench-out $(BENCHFLAGS)

# The NTT benchmark (examples/nttbench): the paper's Tables 1 and 2 (and
# N = 512, 2048) for batch sizes 1 to 65,536 on GPU 0, or on the CPU plans
# (batches up to 256) without one; results, summary and plots in
# nttbench-out/. BENCHFLAGS adds nttbench's flags, which are not bench's
# (go run ./examples/nttbench -h), e.g. BENCHFLAGS="-quick -sizes 1024".
bench-ntt:
	CGO_ENABLED=0 $(GO) run ./examples/nttbench -out nttbench-out $(BENCHFLAGS)

# CPU micro-benchmarks (NTT tables, TFHE operations). BENCH picks them by
# go test's -bench pattern and BENCHTIME sets -benchtime, e.g.
#   make bench-cpu BENCH=Bootstrap BENCHTIME=20x
BENCH     ?= .
BENCHTIME ?= 1s
bench-cpu:
	CGO_ENABLED=0 $(GO) test -run '^$$' -bench '$(BENCH)' -benchtime $(BENCHTIME) -benchmem ./smallntt/ ./tfhe/ ./bootstrap/

# Fuzzing of every decoder of outside data (netlists and their plans, hex
# inputs, serialized keys and ciphertexts, kernel images) and of the NTT
# against the naive product: every Fuzz function of the module, found by
# `go test -list` so that a new one is never left out, FUZZTIME each (a
# package whose tests do not build fails the target, not skipped).
FUZZTIME ?= 60s
fuzz:
	@set -e; pkgs=$$(CGO_ENABLED=0 $(GO) list $(PKGS)); for pkg in $$pkgs; do \
		fns=$$(CGO_ENABLED=0 $(GO) test -list '^Fuzz' $$pkg); \
		for fn in $$(echo "$$fns" | grep '^Fuzz' || true); do \
			echo "== $$fn ($$pkg, $(FUZZTIME))"; \
			CGO_ENABLED=0 $(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s $$pkg; \
		done; \
	done

# Builds the committed multi-architecture fatbin; run where nvcc exists (the GPU machine).
# goldfhe.cu is the one translation unit (it #includes the other sources); the
# recorded hash is defined in kernels/srchash.sh and checked by a Go test.
fatbin:
	$(NVCC) -fatbin -O3 -std=c++17 $(GENCODE) -o kernels/goldfhe.fatbin kernels/goldfhe.cu
	sh kernels/srchash.sh > kernels/goldfhe.fatbin.sha256

# A fatbin whose third key-switching launch traps (GOLDFHE_FAULT_POINT in
# kernels/bootstrap.cuh), for the GPU engine's fault test on the GPU machine:
#   GOLDFHE_FAULT_FATBIN=$PWD/.gpu/fault.fatbin ./bootstrap.test -test.run GPUFault
# FAULT_ARCH is the GPU's compute capability (90: H100, H200), by default
# GPU 0's as nvidia-smi reports it, else 90. Never committed. Rebuilt only
# when a kernel source is newer (make -B fault-fatbin for another FAULT_ARCH);
# written under a temporary name, so that a failed build leaves none.
FAULT_ARCH ?= $(or $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d . | tr -d ' '),90)
fault-fatbin: .gpu/fault.fatbin
.gpu/fault.fatbin: $(wildcard kernels/*.cu kernels/*.cuh)
	mkdir -p .gpu
	$(NVCC) -fatbin -O3 -std=c++17 -DGOLDFHE_FAULT_AFTER=3 -gencode arch=compute_$(FAULT_ARCH),code=sm_$(FAULT_ARCH) \
		-o $@.tmp kernels/goldfhe.cu
	mv $@.tmp $@

# Test binaries for the GPU machine (it has no Go): carry .gpu/ to it. Only
# the four packages with GPU tests, stripped of their symbol tables
# (panics still name their functions).
GPU_PKGS := ./kernels ./kernels/gpuntt ./bootstrap ./gates
gpu-build:
	mkdir -p .gpu
	CGO_ENABLED=0 $(GO) test -c -ldflags='-s -w' -o .gpu/ $(GPU_PKGS)

# On the GPU machine, in a copy of the tree with the .gpu/ of gpu-build (no
# Go needed): every GPU test against the embedded fatbin (or
# GOLDFHE_FATBIN), the bootstrap and gates ones in full mode, and with nvcc
# there the fault test too (fault-fatbin; NO_FAULT=1 leaves it out). Logs in
# .gpu/logs/; fails if any test failed.
gpu-test:
	@set -e; mkdir -p .gpu/logs; \
	if [ -z "$(NO_FAULT)" ] && command -v $(NVCC) >/dev/null 2>&1 && \
		$(MAKE) --no-print-directory fault-fatbin >.gpu/logs/fault-fatbin.log 2>&1; then fault=$$PWD/.gpu/fault.fatbin; \
	else echo "gpu-test: no fault fatbin (NO_FAULT set, no $(NVCC), or see .gpu/logs/fault-fatbin.log), so TestGPUFault skips"; fault=; fi; \
	rc=0; \
	(cd kernels && ../.gpu/kernels.test -test.v -test.timeout=30m) >.gpu/logs/kernels.log 2>&1 || rc=1; \
	.gpu/gpuntt.test -test.v -test.timeout=10m >.gpu/logs/gpuntt.log 2>&1 || rc=1; \
	GOLDFHE_FAULT_FATBIN=$$fault .gpu/bootstrap.test -test.run 'GPU|NewSelection' -test.v -test.timeout=60m \
		>.gpu/logs/bootstrap.log 2>&1 || rc=1; \
	.gpu/gates.test -test.run 'GPU' -test.v -test.timeout=30m >.gpu/logs/gates.log 2>&1 || rc=1; \
	for f in kernels gpuntt bootstrap gates; do \
		echo "gpu-test: $$f: $$(grep -c -- '^--- PASS' .gpu/logs/$$f.log) passed, $$(grep -c -- '^--- FAIL' .gpu/logs/$$f.log) failed, $$(grep -c -- '^--- SKIP' .gpu/logs/$$f.log) skipped"; \
	done; \
	exit $$rc

# gpu-test against the code that GPUs without thread block clusters run (an
# A100, RTX 30 and 40: sm_80 to sm_89), on the GPU machine's H100 or H200:
# a fatbin of compute_80 PTX only, which the driver compiles for the GPU
# at hand (about 30 s on an H100 the first time, then from the cache in
# .gpu/jit), so no cluster or split kernels and none of the sm_90 code
# paths, the engine choosing among the other kernels. No fault test.
gpu-test-compute80:
	mkdir -p .gpu
	$(NVCC) -fatbin -O3 -std=c++17 -gencode arch=compute_80,code=compute_80 -o .gpu/compute80.fatbin kernels/goldfhe.cu
	GOLDFHE_FATBIN=$$PWD/.gpu/compute80.fatbin CUDA_CACHE_PATH=$$PWD/.gpu/jit CUDA_CACHE_MAXSIZE=4294967296 \
		$(MAKE) --no-print-directory gpu-test NO_FAULT=1
