#!/usr/bin/env bash
# Reference solution. Runs with the task's code as the working directory (like tests/test.sh).
set -euo pipefail
cat > answer.json <<'JSON'
{"module": "services.billing.invoices", "port": 8443, "owner": "payments-core"}
JSON
