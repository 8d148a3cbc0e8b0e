# needs.awk - which steps an architecture cannot build, from what each step's
# source declares in a line of its own (docs/adding_a_step.md):
#   // needs: sm_80 (why)   compute capability 8.0 or newer: older ones cannot
#                           compile its instructions (e.g. bf16 mma.sync)
#   // build: sm_90a        sm_90a code (wgmma, TMA, setmaxnreg): compiled for
#                           sm_90a whatever ARCH is; runs on compute capability 9.0 only
# The Makefile runs it (make all skips these steps, make skipped lists them, and
# make stepN refuses a step ARCH cannot compile); run_all.sh reads make skipped.
#
#   awk -f tools/needs.awk -v arch=sm_75 [-v mode=list|why|check] SOURCES...
#   list  (default) "N:NEED" for each step arch cannot build or run: 17:80 20:90a
#   why   one line per such step: N, a tab, the reason
#   check exit 2 with one line on stderr if a step needs more than arch can
#         compile (sm_90a steps can always be compiled: they are not refused)
# An arch that is not sm_NN (or sm_NNa) skips nothing.
BEGIN {
    cc = arch; sub(/^[a-z]+_/, "", cc); sub(/[a-z]+$/, "", cc)
    if (cc !~ /^[0-9]+$/) cc = ""
    if (mode == "") mode = "list"
}
FNR == 1 {
    n = FILENAME; sub(/\/[^\/]*$/, "", n); sub(/.*\//, "", n)   # the folder: v17_mma_sync
    sub(/^v/, "", n); sub(/_.*/, "", n)
}
/^\/\/ build: sm_90a/ && !(n in need) {
    need[n] = "90a"; order[++ns] = n
    rest = $0; sub(/^\/\/ build: sm_90a */, "", rest)
    text[n] = "uses sm_90a instructions " (rest != "" ? rest " " : "(wgmma, TMA, setmaxnreg) ") \
              "that run on compute capability 9.0 only (H100, H200)"
}
/^\/\/ needs: sm_[0-9]+/ && !(n in need) {
    v = $0; sub(/^\/\/ needs: sm_/, "", v); rest = v; sub(/[^0-9].*$/, "", v); sub(/^[0-9]+ */, "", rest)
    need[n] = v; order[++ns] = n
    text[n] = "needs sm_" v (rest != "" ? " " rest : "")
}
END {
    if (cc == "") exit 0
    for (i = 1; i <= ns; i++) {
        n = order[i]; v = need[n]
        if (v == "90a" ? cc + 0 == 90 : cc + 0 >= v + 0) continue
        if (mode == "list") printf "%s%s:%s", (out++ ? " " : ""), n, v
        else if (mode == "why") printf "%s\t%s; ARCH is %s\n", n, text[n], arch
        else if (mode == "check" && v != "90a") {
            printf "step%s %s: ARCH=%s cannot compile it (make ARCH=sm_%s step%s builds it for a newer GPU)\n", \
                   n, text[n], arch, v, n > "/dev/stderr"
            exit 2
        }
    }
    if (mode == "list" && out) printf "\n"
}
