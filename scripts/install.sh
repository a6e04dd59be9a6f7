#!/usr/bin/env bash
# Install the project into a virtual environment from the committed lock, one timed line a step.
#
#   scripts/install.sh VENV EXTRAS      e.g. scripts/install.sh .venv service,textgen,llama
#
# Every version comes from requirements/constraints.txt (pip constraints: the extras asked for are
# installed at the locked versions, nothing else). The last step compiles the numba
# kernels once (python -m quantcore warm), so that no first call waits for the compiler.
set -euo pipefail
VENV=$1
EXTRAS=$2
PYTHON=${PYTHON:-python3}
LOCK=requirements/constraints.txt
PIP_VERSION=$(sed -n 's/^# pip==\(.*\)$/\1/p' "$LOCK")

step_start=0
step() {
  step_start=$SECONDS
  printf '==> %s\n' "$*"
}
done_step() {
  printf '    done in %ds\n' $((SECONDS - step_start))
}

step "virtual environment in $VENV ($($PYTHON --version 2>&1))"
if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || { echo "Python 3.11 or newer is needed (set PYTHON=python3.11)" >&2; exit 1; }
  "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet "pip==$PIP_VERSION"
done_step

step "packages for [$EXTRAS] at the locked versions (llama.cpp compiles from source the first time: minutes)"
# pip's own lines, less the per-package chatter (its progress and the long build stay).
"$VENV/bin/python" -m pip install --constraint "$LOCK" -e ".[$EXTRAS]" \
  | awk '!/^(Requirement already satisfied|  Using cached|Collecting|  Downloading|  Obtaining)/'
"$VENV/bin/python" -m pip check
done_step

step "compiling the numba kernels once (cached under quantcore/; later runs load them)"
"$VENV/bin/python" -m quantcore warm
done_step
