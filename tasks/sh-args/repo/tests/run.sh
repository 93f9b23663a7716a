#!/usr/bin/env bash
# Tests for bin/sumcol.sh. Run from the repository root: bash tests/run.sh
set -u
cd "$(dirname "$0")/.." || exit 1

passed=0
failed=0

# check NAME EXPECTED_OUTPUT COMMAND...: stdout+stderr of COMMAND must equal EXPECTED_OUTPUT.
check() {
    local name=$1 expected=$2 actual
    shift 2
    actual=$("$@" 2>&1)
    if [ "$actual" = "$expected" ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        printf 'FAIL: %s\n  expected: %q\n  actual:   %q\n' "$name" "$expected" "$actual"
    fi
}

# check_status NAME EXPECTED_STATUS COMMAND...: COMMAND must exit with EXPECTED_STATUS.
check_status() {
    local name=$1 expected=$2 actual
    shift 2
    "$@" >/dev/null 2>&1
    actual=$?
    if [ "$actual" -eq "$expected" ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        printf 'FAIL: %s\n  expected exit %s, got %s\n' "$name" "$expected" "$actual"
    fi
}

S="bash bin/sumcol.sh"
check "first column by default"   "108"   $S tests/data/numbers.txt
check "short option -c"            "10"    $S -c 2 --header tests/data/sales.csv
check "long option --column N"     "49.75" $S --column 3 --header tests/data/sales.csv
check "long option --column=N"     "49.75" $S --column=3 --header tests/data/sales.csv
check "options after --header"     "10"    $S --header -c 2 tests/data/sales.csv
check "delimiter option"           "42"    $S -d ';' -c 2 tests/data/semicolon.txt
check "--delimiter=D"              "42"    $S --delimiter=';' --column=2 tests/data/semicolon.txt
check "several files"              "216"   $S -c 1 tests/data/numbers.txt tests/data/numbers.txt
check "stdin"                      "6"     bash -c 'printf "1,2\n3,4\n" | bash bin/sumcol.sh -c 2'
check "-- ends the options"        "108"   $S -- tests/data/numbers.txt
check_status "-c without a value"  2       $S -c
check_status "column 0"            2       $S -c 0 tests/data/numbers.txt
check_status "unknown option"      2       $S --colum 2 tests/data/numbers.txt

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
