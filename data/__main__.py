r"""Prepares a dataset if needed and prints its statistics.

  python -m seedsweep.data NAME [--json] [--data_dir=DIR]     e.g. sst/fine, trec/coarse, mr, atis
  python -m seedsweep.data --list                             the registered names
  python -m seedsweep.data --all                              prepares every dataset, with timings

Statistics: split sizes (under ``splits`` in JSON), classes with their counts per
split, vocabulary size (training words, lower-cased), token-length percentiles, the
raw files' sha256 and, for cross-validated datasets, the fold sizes.
"""
import argparse
import concurrent.futures
import contextlib
import json
import os
import sys
import time

import ml_collections
import numpy as np

from seedsweep import data as data_lib
from seedsweep.errors import UserError


def data_config(name: str) -> ml_collections.ConfigDict:
  """The base config's ``data`` section for the dataset ``name``; UserError for
  ``'files'`` (it needs the config's file paths)."""
  from seedsweep.config import base  # pylint: disable=g-import-not-at-top
  config = base.get_base_config().data
  config.name = name
  if name == 'files':
    raise UserError("python -m seedsweep.data: 'files' needs a config; use launch.py --mode="
                    'describe with config.data.files')
  return config


def statistics(dataset) -> dict:
  """A dataset's statistics as JSON data: split sizes, class counts per split, the
  vocabulary size, token-length percentiles, the raw files' sha256 and the protocol
  (of the first view for a cross-validated dataset)."""
  view = dataset.views[0]
  splits = dataset.sizes()
  classes = {}
  for split in splits:
    counts = np.bincount(dataset.labels[view.rows[split]],
                         minlength=dataset.num_classes)
    classes[split] = {n: int(c) for n, c in zip(dataset.label_names, counts)}
  pooled = np.concatenate([view.rows[s] for s in splits])
  lengths = dataset.raw_lengths[pooled]
  stats = {
      'name': dataset.name, 'splits': splits, 'num_classes': dataset.num_classes,
      'classes': classes, 'vocab_size': len(view.vocab),
      'length_percentiles': {str(p): float(np.percentile(lengths, p))
                             for p in (0, 50, 90, 99, 100)},
      'raw_files': dataset.raw_checksums, 'protocol': dataset.protocol,
  }
  if dataset.tag_names:
    stats['num_tags'] = len(dataset.tag_names)
  return stats


def format_statistics(stats: dict) -> str:
  """:func:`statistics`' dict as the indented lines the command prints, with a table of
  class counts per split."""
  lines = [f'{stats["name"]}: ' + ', '.join(f'{s} {n}' for s, n in
                                            stats['splits'].items())]
  if stats['protocol'].get('folds'):
    f = stats['protocol']['folds']
    lines.append(f'  {f["num_folds"]}-fold cross-validation (fold sizes {f["sizes"]}); '
                 'splits shown for fold 0')
  lines.append(f'  vocabulary {stats["vocab_size"]} (training words, lower-cased), '
               f'{stats["num_classes"]} classes'
               + (f', {stats["num_tags"]} tags' if 'num_tags' in stats else ''))
  pct = stats['length_percentiles']
  lines.append('  tokens per example: ' + ', '.join(f'p{p} {v:g}' for p, v in pct.items()))
  names = list(next(iter(stats['classes'].values())))
  width = max(len(n) for n in names) + 2
  lines.append(f'  {"class":<{width}}' + ''.join(f'{s:>8}' for s in stats['classes']))
  for n in names:
    lines.append(f'  {n:<{width}}' + ''.join(f'{c[n]:>8}'
                                             for c in stats['classes'].values()))
  return '\n'.join(lines)


def _prepare(name: str):
  start = time.perf_counter()
  with contextlib.redirect_stdout(sys.stderr):
    dataset = data_lib.load_dataset(data_config(name))
  return name, dataset.sizes(), time.perf_counter() - start


def main(argv=None) -> int:
  """``python -m seedsweep.data``: prepares one dataset (or ``--all``) and prints its
  statistics, or lists the names; the exit status (1 after a UserError's message)."""
  parser = argparse.ArgumentParser(prog='python -m seedsweep.data', description=__doc__.split(
      '\n')[1].strip())
  parser.add_argument('name', nargs='?', help='a dataset name, e.g. sst/fine')
  parser.add_argument('--json', action='store_true', help='print JSON')
  parser.add_argument('--data_dir', help='raw data root (overrides $SEEDSWEEP_DATA)')
  parser.add_argument('--list', action='store_true', help='list the dataset names')
  parser.add_argument('--all', action='store_true', help='prepare every dataset')
  args = parser.parse_args(argv)
  if args.data_dir:
    os.environ['SEEDSWEEP_DATA'] = args.data_dir
  names = sorted(n for n in data_lib.REGISTRY if n != 'files')
  try:
    if args.list:
      print('\n'.join(names))
      return 0
    if args.all:
      start = time.perf_counter()
      # Largest first, over all cores: each dataset is built by one process.
      order = sorted(names, key=lambda n: n not in ('imdb', 'sst/fine_phrases'))
      with concurrent.futures.ProcessPoolExecutor(os.cpu_count()) as pool:
        for name, sizes, seconds in pool.map(_prepare, order):
          print(f'{name:<20} {sizes}  {seconds:.1f} s', flush=True)
      print(f'all datasets: {time.perf_counter() - start:.1f} s')
      return 0
    if not args.name:
      parser.error('a dataset NAME, --list or --all is required')
    with contextlib.redirect_stdout(sys.stderr):  # keep stdout for the statistics
      dataset = data_lib.load_dataset(data_config(args.name))
    stats = statistics(dataset)
    print(json.dumps(stats, indent=1) if args.json else format_statistics(stats))
    return 0
  except UserError as e:
    print(f'error: {e}', file=sys.stderr)
    return 1


if __name__ == '__main__':
  sys.exit(main())
