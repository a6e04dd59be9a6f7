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

# llama-cpp-python compiles llama.cpp for this CPU (-march=native) less its AMX kernels: GCC's
# _tile_loadconfig tells the optimizer it reads 8 of the tile configuration's 64 bytes, so the
# rows and column widths are never stored and the first prompt on an AMX CPU (Xeon 4th gen and
# later) dies of a general protection fault in ggml_backend_amx_mul_mat.
if [ "$(uname -m)" = x86_64 ]; then
  no_amx="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
  export CMAKE_ARGS="${CMAKE_ARGS:+$CMAKE_ARGS }-DCMAKE_C_FLAGS='$no_amx' -DCMAKE_CXX_FLAGS='$no_amx'"
fi
case ",$EXTRAS," in
  *,llama,* | *,dev,*)
    # Built on its own without pip's cache: a cached wheel is keyed by the download, not by
    # CMAKE_ARGS, so it may hold another build's flags. Nothing is built when it is installed.
    step "llama-cpp-python at the locked version (compiles llama.cpp when not installed: minutes)"
    "$VENV/bin/python" -m pip install --no-cache-dir --constraint "$LOCK" llama-cpp-python \
      | awk '!/^(Requirement already satisfied|Collecting|  Downloading)/'
    done_step
    ;;
esac

step "packages for [$EXTRAS] at the locked versions"
# pip's own lines, less the per-package chatter (its progress and the long build stay).
"$VENV/bin/python" -m pip install --constraint "$LOCK" -e ".[$EXTRAS]" \
  | awk '!/^(Requirement already satisfied|  Using cached|Collecting|  Downloading|  Obtaining)/'
"$VENV/bin/python" -m pip check
done_step

step "compiling the numba kernels once (cached under quantcore/; later runs load them)"
"$VENV/bin/python" -m quantcore warm
done_step
