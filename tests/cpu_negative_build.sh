# cpu_negative_build.sh - sourced by tests/run_tests.sh in the CPU part.  The negative
# fixtures (tests/fixtures/steps/v910-v916: a wrong kernel of each operation, which
# gpu_negative.sh runs on a GPU) build here too, so a change to the harness's API that
# breaks them shows without a GPU.
check "negative fixtures build: make step910 ... step916 STEPS=tests/fixtures/steps" \
    make -s -j"$(nproc 2>/dev/null || echo 2)" step910 step911 step912 step913 step914 step915 step916 STEPS=tests/fixtures/steps
