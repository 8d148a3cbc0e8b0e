#!/bin/sh
# logged.sh LOG COMMAND... - runs COMMAND, prints what it printed (stdout and stderr) and
# keeps a copy in LOG; exits with COMMAND's status.  The make rule of a step builds through
# it so that the compiler's notes stay in build/log/stepN.log (tests/cpu_ptxas.sh reads them).
log=$1
shift
mkdir -p "$(dirname "$log")" || exit 1
"$@" >"$log" 2>&1
status=$?
cat "$log"
exit $status
