#!/usr/bin/env bash
# Write the lock (requirements/constraints.txt) from a freshly resolved environment: `make lock`.
set -euo pipefail
VENV=$1
OUT=$2
pip_version=$("$VENV/bin/python" -m pip --version | awk '{print $2}')
{
  cat <<HEADER
# The lock: the exact version of every package any extra of quantcore installs
# (service, textgen, llama, local, distributed, plot, dev), on Python 3.11, Linux x86_64.
#
# It is a pip constraints file: \`pip install -c requirements/constraints.txt -e '.[EXTRAS]'\`
# installs the extras asked for at these versions and nothing more, so \`make serve\`
# (service, textgen, llama) and \`make test\` (all extras) share one lock.
# torch is the CPU build these machines keep on disk (pip finds it through its find-links).
# Do not edit by hand: \`make lock\` renews it, and the test suite is the gate for the commit.
# pip==$pip_version
HEADER
  "$VENV/bin/python" -m pip freeze --all --exclude-editable | grep -v -i -E '^(quantcore|pip)=='
} > "$OUT"
