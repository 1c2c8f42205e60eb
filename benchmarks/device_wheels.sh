#!/usr/bin/env bash
# Downloads into .whl/ (ignored by git) the wheels benchmarks/device_check.py needs on a
# device machine that reaches no package index: CPython 3.12, manylinux x86-64.
#
#   bash benchmarks/device_wheels.sh            # what the H200 image lacks (~10 MiB)
#   bash benchmarks/device_wheels.sh --jax      # and jax[cuda12]==0.10.2 with its
#                                               # plugin and NVIDIA wheels (GiBs)
#   bash benchmarks/device_wheels.sh --jax=cuda13
#   bash benchmarks/device_wheels.sh --check    # the pip command on one small package
#   bash benchmarks/device_wheels.sh --list     # print the requirements, download nothing
#
# The default set is seedsweep's needs that the device image ('cuda': Python 3.12,
# JAX with CUDA 13, flax, optax, orbax-checkpoint, numpy, scipy, protobuf, pyarrow,
# etils, ...; its package list as read on 2026-11-17) does not hold, at the versions the
# project runs with here, each without its dependencies: a wheel of a package the
# image has would shadow the image's own under PYTHONPATH=/tmp/site. promise has no
# wheel on the index: it is built here from its source (pure Python).
#
# --jax is for a machine without JAX: jax[cuda12]==0.10.2 (or cuda13) resolved with
# its dependencies. Those wheels weigh GiBs, past the 64 MiB that this workplace's
# device tool carries with the working tree; on the H200 image use its own JAX.
#
# On the device machine (carry .whl), before the check:
#   python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
#     --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
set -euo pipefail
cd "$(dirname "$0")/.."

DEST=.whl
JAX_CUDA=
MODE=download
for arg in "$@"; do
  case "$arg" in
    --jax) JAX_CUDA=cuda12 ;;
    --jax=cuda12|--jax=cuda13) JAX_CUDA=${arg#--jax=} ;;
    --check) MODE=check ;;
    --list) MODE=list ;;
    --dest=*) DEST=${arg#--dest=} ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) echo "device_wheels.sh: unknown argument $arg (see --help)" >&2; exit 2 ;;
  esac
done

# For manylinux x86-64 CPython 3.12 wheels whatever this machine is.
PLATFORM=(--only-binary=:all: --python-version 3.12 --implementation cp
          --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64
          --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64)

REQUIREMENTS=$(mktemp)
trap 'rm -f "$REQUIREMENTS"' EXIT
# seedsweep's own needs (setup.cfg) the image lacks, then what tensorflow-datasets and
# array_record import in turn (promise apart: built below).
cat >"$REQUIREMENTS" <<'EOF'
ml_collections==1.1.0
tensorflow-datasets==4.9.10
array_record==0.8.6
importlib_resources==7.1.0
tensorboardX==2.6.5
dm-tree==0.1.10
immutabledict==4.3.1
simple-parsing==0.1.9
docstring_parser==0.18.0
tensorflow-metadata==1.21.0
googleapis-common-protos==1.76.0
termcolor==3.3.0
toml==0.10.2
EOF
PROMISE=promise==2.3

case "$MODE" in
  list)
    cat "$REQUIREMENTS"; echo "$PROMISE (built from source)"
    [ -n "$JAX_CUDA" ] && echo "jax[$JAX_CUDA]==0.10.2 (with its dependencies)"
    exit 0 ;;
  check)
    # The same command on one small package, into a folder of its own.
    tmp=$(mktemp -d)
    python3 -m pip download --no-deps "${PLATFORM[@]}" -d "$tmp" toml==0.10.2
    ls -l "$tmp"; rm -rf "$tmp"
    exit 0 ;;
esac

mkdir -p "$DEST"
python3 -m pip download --no-deps "${PLATFORM[@]}" -d "$DEST" -r "$REQUIREMENTS"
python3 -m pip wheel --no-deps -w "$DEST" "$PROMISE"
if [ -n "$JAX_CUDA" ]; then
  echo "jax[$JAX_CUDA]==0.10.2" >"$REQUIREMENTS"
  python3 -m pip download "${PLATFORM[@]}" -d "$DEST" -r "$REQUIREMENTS"
fi

# One version of each distribution (two stop `pip install --no-deps` there), and the
# size against what the device tool carries.
python3 - "$DEST" <<'EOF'
import collections, os, sys
dest = sys.argv[1]
wheels = sorted(f for f in os.listdir(dest) if f.endswith('.whl'))
names = collections.defaultdict(list)
for w in wheels:
  names[w.split('-')[0].lower().replace('_', '-')].append(w)
total = sum(os.path.getsize(os.path.join(dest, w)) for w in wheels) / 2 ** 20
for w in wheels:
  print(f'{os.path.getsize(os.path.join(dest, w)) / 2 ** 20:8.2f} MiB  {w}')
print(f'{total:8.2f} MiB  in {len(wheels)} wheels, {dest}/')
if total > 40:
  print(f'note: the device tool carries at most 64 MiB with the working tree')
twice = {n: ws for n, ws in names.items() if len(ws) > 1}
if twice:
  sys.exit(f'{dest}/ holds more than one version of {sorted(twice)}: remove the '
           'older wheels (pip install --no-deps stops at two)')
EOF
