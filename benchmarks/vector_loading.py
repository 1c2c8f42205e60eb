r"""Load time and memory of inputs/vectors.py on a generated GloVe-sized text file.

  python benchmarks/vector_loading.py --size_gb=2 --dim=300 --fraction=0.01

Writes a GloVe-format text file of about ``--size_gb`` GB (``w0000000 v1 ... vd`` lines,
floats with 6 decimals, like glove.840B.300d.txt) into a temporary directory, picks
``--fraction`` of its words (plus as many absent words) as the vocabulary, and loads
them with ``load_vectors`` in a child process that does nothing else. Reports the file
size, generation and load time, and the child's peak RSS increase over its RSS after
imports (``VmHWM`` after the load, reset through ``/proc/self/clear_refs`` before it,
minus ``VmRSS`` before it; ``ru_maxrss`` where the reset is refused), next to the size of the kept matrix. The file is deleted at the
end unless ``--keep``. A run on demand, not a test.
"""
import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
  sys.path.insert(0, REPO)

WORD_WIDTH = 8  # 'w' + 7 digits
ROWS_PER_CHUNK = 4096


def _word(i: int) -> str:
  return f'w{i:0{WORD_WIDTH - 1}d}'


def chunk_bytes(rng: np.random.Generator, first: int, rows: int, dim: int) -> bytes:
  """``rows`` GloVe lines (words first..first+rows-1), formatted with numpy only.

  Every value is built as the 10 bytes '-0.dddddd ' and its '-' dropped for positive
  values, so lines look like GloVe's ('0.123456' / '-0.654321').
  """
  cells = np.empty((rows, dim, 10), np.uint8)
  cells[..., 0] = ord('-')
  cells[..., 1] = ord('0')
  cells[..., 2] = ord('.')
  mag = rng.integers(0, 1_000_000, (rows, dim))
  for k in range(6):
    cells[..., 3 + k] = ord('0') + (mag // 10 ** (5 - k)) % 10
  cells[..., 9] = ord(' ')
  cells[:, -1, 9] = ord('\n')
  keep = np.ones(cells.shape, bool)
  keep[..., 0] = rng.random((rows, dim)) < 0.5  # negative values keep their sign
  words = np.frombuffer(''.join(_word(i) + ' ' for i in range(first, first + rows))
                        .encode(), np.uint8).reshape(rows, WORD_WIDTH + 1)
  line = np.concatenate([words, cells.reshape(rows, -1)], axis=1)
  mask = np.concatenate([np.ones(words.shape, bool), keep.reshape(rows, -1)], axis=1)
  return line[mask].tobytes()


def write_glove(path: str, size_bytes: int, dim: int, seed: int) -> int:
  """Writes whole chunks until the file reaches ``size_bytes``; returns the line count."""
  rng = np.random.default_rng(seed)
  lines, written = 0, 0
  with open(path, 'wb') as f:
    while written < size_bytes:
      per_line = WORD_WIDTH + 1 + 9.5 * dim
      rows = int(min(ROWS_PER_CHUNK, max(1, (size_bytes - written) // per_line + 1)))
      data = chunk_bytes(rng, lines, rows, dim)
      f.write(data)
      written += len(data)
      lines += rows
  return lines


def _status_kib(field: str) -> int:
  with open('/proc/self/status') as f:
    return next(int(l.split()[1]) for l in f if l.startswith(field + ':'))


def child(path: str, words_file: str, fmt: str):
  """Loads only; prints JSON with the load time and RSS figures (KiB)."""
  from seedsweep.inputs import vectors  # pylint: disable=g-import-not-at-top
  with open(words_file) as f:
    words = json.load(f)
  rss_before = _status_kib('VmRSS')
  try:  # reset the peak (VmHWM) to the current RSS: measure the load, not imports
    with open('/proc/self/clear_refs', 'w') as f:
      f.write('5')
    peak_reset = True
  except OSError:
    peak_reset = False  # then ru_maxrss: the peak since the process started
  start = time.perf_counter()
  matrix, found = vectors.load_vectors(path, words, fmt=fmt or None)
  seconds = time.perf_counter() - start
  peak = (_status_kib('VmHWM') if peak_reset
          else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
  print(json.dumps({'seconds': seconds, 'rss_before_kib': rss_before,
                    'peak_kib': peak, 'peak_reset': peak_reset,
                    'found': int(found.sum()), 'words': len(words),
                    'matrix_bytes': matrix.nbytes}))


def main():
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--size_gb', type=float, default=2.0, help='File size, 1e9 bytes.')
  parser.add_argument('--dim', type=int, default=300)
  parser.add_argument('--fraction', type=float, default=0.01,
                      help='Fraction of the file words put in the vocabulary.')
  parser.add_argument('--dir', default=None, help='Where to write (default: a temp dir).')
  parser.add_argument('--keep', action='store_true', help='Keep the generated file.')
  parser.add_argument('--seed', type=int, default=0)
  parser.add_argument('--child', nargs=3, metavar=('PATH', 'WORDS_JSON', 'FMT'),
                      help=argparse.SUPPRESS)
  args = parser.parse_args()
  if args.child:
    child(*args.child)
    return

  workdir = tempfile.mkdtemp(prefix='vector_loading-', dir=args.dir)
  try:
    path = os.path.join(workdir, f'synthetic.{args.dim}d.txt')
    start = time.perf_counter()
    lines = write_glove(path, int(args.size_gb * 1e9), args.dim, args.seed)
    write_s = time.perf_counter() - start
    size = os.path.getsize(path)
    print(f'wrote {path}: {size / 1e9:.3f} GB, {lines} lines of {args.dim}-d vectors '
          f'in {write_s:.1f} s', flush=True)

    rng = np.random.default_rng(args.seed + 1)
    picked = rng.choice(lines, max(1, int(lines * args.fraction)), replace=False)
    words = [_word(i) for i in picked] + [f'absent{i}' for i in range(len(picked))]
    words_file = os.path.join(workdir, 'words.json')
    with open(words_file, 'w') as f:
      json.dump(words, f)
    out = subprocess.run([sys.executable, os.path.abspath(__file__), '--child', path,
                          words_file, 'glove'], capture_output=True, text=True,
                         check=True, cwd=REPO)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r['found'] == len(picked), r
    peak_mib = (r['peak_kib'] - r['rss_before_kib']) / 1024
    print(f'load_vectors: {r["words"]} words ({r["found"]} in the file) in '
          f'{r["seconds"]:.2f} s ({size / 1e6 / r["seconds"]:.0f} MB/s, '
          f'{lines / r["seconds"] / 1e3:.0f}k lines/s)')
    print(f'peak RSS during the load: +{peak_mib:.1f} MiB over the child\'s RSS after '
          f'imports ({r["rss_before_kib"] / 1024:.1f} MiB)'
          f'{"" if r["peak_reset"] else " (peak since start: no /proc/self/clear_refs)"}'
          f'; kept matrix '
          f'{r["matrix_bytes"] / 2**20:.1f} MiB; file {size / 2**20:.0f} MiB')
  finally:
    if args.keep:
      print(f'kept {workdir}')
    else:
      shutil.rmtree(workdir, ignore_errors=True)


if __name__ == '__main__':
  main()
