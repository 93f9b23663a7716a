#!/usr/bin/env bash
# sumcol.sh: print the sum of one column of delimited text read from FILEs or stdin.
#
# usage: sumcol.sh [-c N | --column N | --column=N] [-d D | --delimiter D | --delimiter=D]
#                  [--header] [--] [FILE...]
#   -c, --column N      1-based column to add up (default 1)
#   -d, --delimiter D   field delimiter (default ',')
#   --header            skip the first line of each input
# Exit status 2 on a usage error.
set -euo pipefail

column=1
delim=','
skip_header=0

usage() {
    echo "usage: sumcol.sh [-c N] [-d DELIM] [--header] [FILE...]" >&2
    exit 2
}

while [ $# -gt 0 ]; do
    case "$1" in
        -c|--column)
            [ $# -ge 2 ] || usage
            column="$2"
            shift 2
            ;;
        --column=*)
            column="${1#*=}"
            shift
            ;;
        -d|--delimiter)
            [ $# -ge 2 ] || usage
            delim="$2"
            shift 2
            ;;
        --delimiter=*)
            delim="${1#*=}"
            shift
            ;;
        --header)
            skip_header=1
            shift
            ;;
        -h|--help)
            usage
            ;;
        --)
            shift
            break
            ;;
        -?*)
            echo "sumcol.sh: unknown option: $1" >&2
            usage
            ;;
        *)
            break
            ;;
    esac
done

case "$column" in
    ''|*[!0-9]*|0)
        echo "sumcol.sh: column must be a positive integer: $column" >&2
        exit 2
        ;;
esac

awk -F "$delim" -v col="$column" -v skip="$skip_header" '
    skip && FNR == 1 { next }
    { total += $col }
    END { print total + 0 }
' "$@"
