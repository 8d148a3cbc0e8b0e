# tools/lib.sh - the pieces several scripts need, written once; sourced (bash):
#   . tools/lib.sh    (run_all.sh, tools/*.sh, steps/v16_splitk_w4a16/sweep_split.sh)

# print_header FILE: the comment block at the top of FILE (after the #! line),
# without its "# ": a script's --help is its own header.
print_header() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$1"; }

# gpu_name: GPU 0's name from nvidia-smi; status 1 when there is none: no
# nvidia-smi, one that fails, or one that prints "No devices were found" or
# another complaint where the name should be.
gpu_name() {
    local out
    out=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null) || return 1
    out=$(head -n1 <<<"$out")
    case $out in "" | *"No devices were found"* | *"has failed"* | *"ould not"* | *"ouldn't"*) return 1 ;; esac
    echo "$out"
}

# last_line FILE: its last line that is not blank (where a program says why it stopped).
last_line() { grep -v '^[[:space:]]*$' "$1" | tail -n1; }

# step_dirs ROOT: "N vN_name" for each step folder ROOT/steps/vN_name/, in the order of N.
step_dirs() {
    local d b n
    for d in "$1"/steps/v*_*/; do
        [ -d "$d" ] || continue
        b=$(basename "$d"); n=${b%%_*}; echo "${n#v} $b"
    done | sort -n
}

# step_csvs DIR: DIR/stepN.csv, one a line, in the order of N (step10 after step9).
step_csvs() {
    local f n
    for f in "$1"/step*.csv; do
        [ -e "$f" ] || continue
        n=$(basename "$f" .csv); echo "${n#step} $f"
    done | sort -n | cut -d' ' -f2-
}
