#!/usr/bin/env bash
# Tests for bin/logsummary.sh. Run from the repository root: bash tests/test_logsummary.sh
#
# The --level LEVEL option prints the messages logged at LEVEL across all FILEs, one line per
# distinct message as "COUNT MESSAGE": most frequent first, equal counts in alphabetical
# (byte) order of the message. The message is everything after the level, kept as is.
# No matching lines: no output, exit 0. A missing LEVEL or no FILE is a usage error (exit 2).
set -u
cd "$(dirname "$0")/.." || exit 1

passed=0
failed=0
LS="bash bin/logsummary.sh"

expect_output() { # NAME EXPECTED COMMAND...
    local name=$1 expected=$2 actual
    shift 2
    actual=$("$@" 2>&1)
    if [ "$actual" = "$expected" ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAIL: $name"
        diff <(printf '%s\n' "$expected") <(printf '%s\n' "$actual") | sed 's/^/    /'
    fi
}

expect_status() { # NAME STATUS COMMAND...
    local name=$1 expected=$2 actual
    shift 2
    "$@" >/dev/null 2>&1
    actual=$?
    if [ "$actual" -eq "$expected" ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAIL: $name (expected exit $expected, got $actual)"
    fi
}

expect_output "level counts" "ERROR 4
INFO 4
WARN 2" $LS tests/data/app.log

expect_output "level counts over two files" "ERROR 5
INFO 5
WARN 4" $LS tests/data/app.log tests/data/worker.log

expect_output "--level ERROR" "2 database timeout
1 cache unavailable
1 disk full on /var" $LS --level ERROR tests/data/app.log

expect_output "--level WARN over two files" "2 cache miss rate 40%
1 queue is 90% full
1 slow query (1.2s)" $LS --level WARN tests/data/app.log tests/data/worker.log

expect_output "message spacing is kept" "1 connected to database
1 request served in  12 ms
1 retrying
1 server started on :8080" $LS --level INFO tests/data/app.log

expect_output "--level with no matches" "" $LS --level DEBUG tests/data/app.log
expect_status "--level with no matches succeeds" 0 $LS --level DEBUG tests/data/app.log
expect_status "--level without a value" 2 $LS --level
expect_status "--level without files" 2 $LS --level ERROR
expect_status "no arguments" 2 $LS

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
