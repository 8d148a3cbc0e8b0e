/* unit_caps.c - whether a GPU can run a step (kl_gpu_refuses in util.c), on
 * made-up GPUs: the compute capability and shared memory a step declares in
 * its kl_step against what a Turing, Ampere, Ada, Hopper or Blackwell part
 * has.  One line per test. */
#include "device.h"
#include "unit.h"

#include <stdio.h>
#include <string.h>

/* Shared memory a block may ask for (cudaDevAttrMaxSharedMemoryPerBlockOptin), per the
 * CUDA programming guide's table: 7.5 64 KB, 8.0 163 KB, 8.6/8.9 99 KB, 9.0 227 KB. */
static const kl_gpu_caps turing = {"Turing", 75, 65536}, a100 = {"A100", 80, 166912},
                         ada = {"Ada", 89, 101376}, h100 = {"H100", 90, 232448}, b200 = {"B200", 100, 232448};

static int refuses(const kl_step *s, const kl_gpu_caps *g, char *msg) {
    msg[0] = '\0';
    return kl_gpu_refuses(s, g, msg, 256);
}

int main(void) {
    char msg[256];
    kl_step any = {0}, v9 = {0}, v17 = {0}, v19 = {0}, v20 = {0};
    v9.smem_per_block = 66560;
    v17.min_cc = 80;
    v19.min_cc = 80;
    v19.smem_per_block = 3 * 48 * 1024;
    v20.min_cc = 90;
    v20.only_cc = 90;

    TEST(!refuses(&any, &turing, msg) && !refuses(&any, &b200, msg), "a step that declares nothing runs anywhere");
    TEST(refuses(&v9, &turing, msg) == KL_EXIT_NO_GPU && strstr(msg, "66560 bytes") && strstr(msg, "allows 65536"),
         "v9's 66,560 bytes of shared memory: refused on Turing (64 KB), exit 3, naming both: %s", msg);
    TEST(!refuses(&v9, &a100, msg) && !refuses(&v9, &ada, msg) && !refuses(&v9, &h100, msg),
         "v9 runs on Ampere, Ada and Hopper");
    TEST(refuses(&v17, &turing, msg) == KL_EXIT_NO_GPU && strstr(msg, "8.0 or newer") && strstr(msg, "7.5"),
         "a min_cc 80 step on 7.5: refused, naming 8.0 and 7.5: %s", msg);
    TEST(!refuses(&v17, &a100, msg) && !refuses(&v17, &b200, msg), "a min_cc 80 step runs on 8.0 and 10.0");
    TEST(refuses(&v19, &ada, msg) == KL_EXIT_NO_GPU && strstr(msg, "shared memory"),
         "v19 (8.0, 144 KB) on Ada (8.9, 99 KB): refused for its shared memory: %s", msg);
    TEST(!refuses(&v19, &a100, msg) && !refuses(&v19, &h100, msg), "v19 runs on A100 (163 KB) and H100");
    TEST(refuses(&v20, &a100, msg) == KL_EXIT_NO_GPU && strstr(msg, "sm_90a"), "an sm_90a step on 8.0: refused: %s", msg);
    TEST(refuses(&v20, &b200, msg) == KL_EXIT_NO_GPU && strstr(msg, "10.0"),
         "an sm_90a step on 10.0 (newer, but sm_90a code does not run there): refused: %s", msg);
    TEST(!refuses(&v20, &h100, msg), "an sm_90a step runs on 9.0");
    TEST(refuses(&v9, &turing, msg) && !strchr(msg, '\n'), "the reason is one line");
    return unit_plan();
}
