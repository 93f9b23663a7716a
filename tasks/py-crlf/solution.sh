#!/usr/bin/env bash
# Reference solution of py-crlf: the discount is a percentage, so divide it by 100. sed changes
# that one line in place, so the file keeps its byte-order mark and its CRLF line endings.
set -euo pipefail
sed -i 's|gross \* Decimal(discount_percent)\r$|gross * Decimal(discount_percent) / 100\r|' invoice/totals.py
grep -q 'Decimal(discount_percent) / 100' invoice/totals.py
