"""A run's encoded dataset, kept in its workdir: what its later modes read instead of
today's files.

A new run writes ``workdir/dataset.npz`` once, before its config.json: every view's
vocabulary, rows and token ids, the labels and tags, the class and tag names and
the data record its provenance names (:func:`save`). Eval, predict, verify and a
resume build the run from it (:func:`load`), so a training file edited, moved or
deleted since changes none of their answers, and a run can be used where its data
never was. Only pretrained vectors are not kept (a table per view can be hundreds of
MB): a run that starts from them reads the vectors file again where its initial
state is needed (a resume, verify), and its shape alone serves eval and predict,
which read every parameter from a checkpoint.

A workdir made before this file existed holds none; it is built from the files, as
it was trained.
"""
import dataclasses
import json
import os
import zipfile
from typing import Optional

import numpy as np

from seedsweep import files
from seedsweep.errors import UserError
from seedsweep.inputs import encoded
from seedsweep.inputs import vocabulary as vocab_lib

FILE = 'dataset.npz'
FORMAT = 1
# What load() does about pretrained vectors: 'file' reads the vectors file again
# (the initial state is needed), 'shape' zeros of their shape (a checkpoint gives
# every parameter).
TABLES = ('file', 'shape')


def path(workdir: str) -> str:
  """Where a run keeps its encoded dataset."""
  return os.path.join(workdir, FILE)


def save(workdir: str, data: encoded.EncodedDataset) -> None:
  """Writes ``data`` to ``workdir/dataset.npz`` (atomically: a kill leaves none)."""
  arrays = {'labels': data.labels, 'raw_lengths': data.raw_lengths}
  if data.tags is not None:
    arrays['tags'] = data.tags
  for v, view in enumerate(data.views):
    arrays.update({f'view{v}_tokens': view.tokens, f'view{v}_starts': view.starts,
                   f'view{v}_lengths': view.lengths})
    arrays.update({f'view{v}_rows_{split}': rows for split, rows in view.rows.items()})
  tables = data.embedding_tables
  meta = {
      'format': FORMAT, 'name': data.name, 'label_names': list(data.label_names),
      'tag_names': list(data.tag_names), 'sources': data.sources,
      'checksums': data.checksums, 'raw_checksums': data.raw_checksums,
      'protocol': data.protocol, 'num_classes': data.num_classes,
      'vocab_size': data.vocab_size, 'cross_validated': data.cross_validated,
      'vectors': data.vectors,
      'table_dim': None if tables is None else int(tables[0].shape[-1]),
      # Whether the vectors file gave <unk> a row (encoded.with_vectors).
      'unk_found': bool(tables is not None and tables[0][:, vocab_lib.UNK_ID].any()),
      'views': [{'name': view.name, 'splits': list(view.rows),
                 'words': list(view.vocab.words)} for view in data.views]}
  arrays['meta'] = np.frombuffer(json.dumps(meta).encode('utf-8'), np.uint8)
  with files.atomic_write(path(workdir), 'wb') as f:
    np.savez_compressed(f, **arrays)


def load(workdir: str, data_config, tables: str) -> Optional[encoded.EncodedDataset]:
  """The dataset ``workdir``'s run saved, None if it saved none; ``tables``: one of
  :data:`TABLES`, for a run with pretrained vectors (``data_config``: the run's
  config.data). UserError for a damaged file."""
  where = path(workdir)
  if not os.path.isfile(where):
    return None
  try:
    with np.load(where) as z:
      arrays = {k: z[k] for k in z.files}
    meta = json.loads(arrays.pop('meta').tobytes().decode('utf-8'))
    if meta.get('format') != FORMAT:
      raise ValueError(f"format {meta.get('format')!r}, expected {FORMAT}")
    views = tuple(
        encoded.View(v['name'],
                     {s: arrays[f'view{i}_rows_{s}'] for s in v['splits']},
                     vocab_lib.Vocabulary(tuple(v['words'])), arrays[f'view{i}_tokens'],
                     arrays[f'view{i}_starts'], arrays[f'view{i}_lengths'])
        for i, v in enumerate(meta['views']))
  except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile) as e:
    raise UserError(f'{where} is damaged ({type(e).__name__}: {e}); expected the '
                    'dataset its run saved. Delete it to build the run from its data '
                    'files again') from e
  data = encoded.EncodedDataset(
      name=meta['name'], label_names=tuple(meta['label_names']),
      labels=arrays['labels'], views=views,
      sources={k: tuple(v) for k, v in meta['sources'].items()},
      checksums=meta['checksums'], raw_checksums=meta['raw_checksums'],
      protocol=meta['protocol'], raw_lengths=arrays['raw_lengths'],
      num_classes=meta['num_classes'], vocab_size=meta['vocab_size'],
      cross_validated=meta['cross_validated'], tag_names=tuple(meta['tag_names']),
      tags=arrays.get('tags'), vectors=meta['vectors'])
  if meta['table_dim'] is None:
    return data
  if tables == 'file':
    return encoded.with_vectors(data, data_config, meta['unk_found'])
  shape = (len(views), data.vocab_size, meta['table_dim'])
  return dataclasses.replace(
      data, embedding_tables=(np.zeros(shape, np.float32),
                              np.ones(shape[:2], bool)))
