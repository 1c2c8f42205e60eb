"""A trained run's answers for new texts: every seed's label and the seeds' ensemble.

``predict(config, workdir, texts)`` restores the newest checkpoint of ``workdir``,
takes each member's selected parameters (its best dev epoch, or the last one, as its
results do), encodes the texts with the run's own vocabulary (per fold for a
cross-validated dataset) and runs the members in one jitted seed-parallel program
(:meth:`seedsweep.engine.steps.Steps.predict_batch`). Texts are split on spaces as
the dataset's were: give them tokenised the way the training data is.

The ensemble label of a text is the class of the highest mean probability over the
members; a tagging model's ensemble tag of a token is the tag most members chose
(ties: the first in the dataset's tag order).

``--mode=predict --input=FILE --output=FILE`` reads the rows of a TSV, CSV, JSONL or
Parquet file by the column rules training reads them with, or a text file one text a line
(:func:`read_inputs`), and writes one JSON object per input row, in input order, an
empty row's answer empty (:func:`write_jsonl`); rows with a gold label get it beside
the answer, and an accuracy line is printed (:func:`predict_file`).
"""
import json
import os
import sys
from typing import Dict, List, Optional, Sequence

import numpy as np

from seedsweep import files
from seedsweep import notices
from seedsweep.engine import hosts
from seedsweep.errors import UserError
from seedsweep.inputs import vocabulary as vocab_lib
from seedsweep.run import checkpoints as ckpt_lib
from seedsweep.run import epoch as epoch_lib
from seedsweep.run import groups as groups_lib
from seedsweep.run import outputs
from seedsweep.run import pieces as pieces_lib
from seedsweep.run import prepare
from seedsweep.run import saved_data
from seedsweep.run import workdir as workdir_lib

def predict(config, workdir: str, texts: Sequence[str], print_fn=print) -> dict:
  """The run's answers for ``texts``; see :func:`answers` for the dict. ``config``:
  the one ``workdir``'s run was trained with (None: the one it stored)."""
  with notices.to(print_fn):  # the lower layers' lines (a dataset prepared) too
    return _predict(config, workdir, check_texts(texts), print_fn)


def _predict(config, workdir: str, texts: List[str], print_fn) -> dict:
  """:func:`predict`'s work, on checked ``texts``."""
  run = prepare.prepare_existing(config, workdir, 'a trained run')
  config = run.config
  latest = workdir_lib.latest_epoch(workdir)
  if not latest:
    raise UserError(f'{workdir} holds no checkpoint of a finished epoch to predict '
                    'with; train it first')
  pieces = pieces_lib.build(run.checked, saved_data.load(workdir, config.data,
                                                          tables='shape'))
  print_fn(f'{workdir}: predicting {len(texts)} texts with {len(pieces.members)} members '
           f'(checkpoint of epoch {latest}).')
  token_lists = vocab_lib.tokenize_texts(texts, config.data.lowercase,
                                         config.data.max_length)
  chunks = encode(pieces, token_lists)
  answered, epochs, changed = [], [], None
  for part, folder in groups_lib.parts(pieces, workdir):  # a split run: group by group
    ckpts = ckpt_lib.Checkpoints(folder, read_only=True)
    try:
      newest = ckpts.latest_epoch()
      if changed is None:  # an edited model file, said once (the groups share it)
        changed = workdir_lib.warn_changed_inputs(workdir, ckpts.meta(newest), pieces,
                                                  'predicting', print_fn)
      state, _ = part.restore(ckpts, newest)
    finally:
      ckpts.close()
    params, selected_epochs = epoch_lib.selection(part, state, newest)
    answered.append(run_members(part, params, chunks))
    epochs.append(selected_epochs)
  per_member = {k: np.concatenate([a[k] for a in answered]) for k in answered[0]}
  out = answers(pieces, token_lists, per_member, np.concatenate(epochs), latest)
  if changed:
    out['changed_inputs'] = changed
  return out


def check_texts(texts) -> List[str]:
  """``texts`` as a list; UserError for a lone string or a text that is not a non-empty
  string."""
  if isinstance(texts, str):
    raise UserError('texts is one string; expected a list of texts (e.g. [text])')
  texts = list(texts)
  for i, t in enumerate(texts):
    if not isinstance(t, str) or not t.strip():
      raise UserError(f'text {i} is {t!r}; expected a non-empty string')
  return texts


def encode(pieces, token_lists: Sequence[List[str]]) -> List[Dict[str, np.ndarray]]:
  """The tokenised texts in chunks, padded as the run's eval pass pads its rows:
  sorted by length, each chunk padded to its longest text's length bucket (beyond
  the last bucket: a multiple of ``config.data.bucket_multiple``) and to a multiple
  of 8 rows of at most ``config.train.eval_batch_size``. Each chunk: ``index [rows]`` (-1: padding row),
  ``tokens [views, rows, time]``, ``lengths [views, rows]``."""
  data_config = pieces.config.data
  encoded = [view.vocab.encode_flat(token_lists, data_config.oov)
             for view in pieces.data.views]  # per view: (flat ids, lengths)
  starts = [np.concatenate([[0], np.cumsum(lengths)[:-1]]) for _, lengths in encoded]
  longest = np.max([lengths for _, lengths in encoded], axis=0)
  boundaries = pieces.schedule.train_plan.boundaries
  multiple = data_config.bucket_multiple

  def padded(n):
    fits = [b for b in boundaries if b >= n]
    return fits[0] if fits else -(-max(n, 1) // multiple) * multiple

  order = np.argsort(longest, kind='stable')
  max_rows = pieces.config.train.eval_batch_size
  chunks = []
  start = 0
  while start < len(order):
    width = padded(int(longest[order[start]]))
    stop = start
    while stop < len(order) and stop - start < max_rows and longest[order[stop]] <= width:
      stop += 1
    rows = order[start:stop]
    size = min(8 * -(-len(rows) // 8), max(max_rows, len(rows)))
    index = np.full(size, -1, np.int64)
    index[:len(rows)] = rows
    tokens = np.zeros((len(encoded), size, width), np.int32)
    lengths = np.zeros((len(encoded), size), np.int32)
    for v, (ids, view_lengths) in enumerate(encoded):
      for r, i in enumerate(rows):
        n = view_lengths[i]
        tokens[v, r, :n] = ids[starts[v][i]:starts[v][i] + n]
        lengths[v, r] = n
    chunks.append({'index': index, 'tokens': tokens, 'lengths': lengths})
    start = stop
  return chunks


def run_members(pieces, params, chunks) -> Dict[str, np.ndarray]:
  """Every member's ``probabilities [members, texts, classes]`` (and ``tags [members,
  texts, time]``, padded with -1, for a tagging model), in the texts' order."""
  n = sum(int((c['index'] >= 0).sum()) for c in chunks)
  out = {}
  for chunk in chunks:
    answer = pieces.steps.predict_batch(params, pieces.device, chunk['tokens'],
                                     chunk['lengths'])
    answer = {k: hosts.fetch(v) for k, v in answer.items()}
    real = chunk['index'] >= 0
    for key, value in answer.items():
      if key not in out:
        width = max(c['tokens'].shape[-1] for c in chunks)
        shape = (value.shape[0], n) + ((width,) if key == 'tags' else value.shape[2:])
        out[key] = np.full(shape, -1 if key == 'tags' else np.nan, value.dtype)
      if key == 'tags':
        out[key][:, chunk['index'][real], :value.shape[2]] = value[:, real]
      else:
        out[key][:, chunk['index'][real]] = value[:, real]
  return out


def answers(pieces, token_lists, per_member, epochs, checkpoint: int) -> dict:
  """The dict :func:`predict` returns::

    {'classes': [label names], 'members': ['seed_1', ...], 'checkpoint': epoch,
     'selected_epochs': [per member],
     'labels': [ensemble label per text], 'probabilities': [[mean per class]],
     'per_seed': [[label per text] per member],
     'per_seed_probabilities': [[[per class] per text] per member],
     # a stacked run (config.stack) also, each point's own ensemble:
     'by_point': {point label: {'labels': [...], 'probabilities': [[...]]}},
     # a tagging model (the joint model) also:
     'tokens': [[token per word] per text], 'tags': [[ensemble tag per token]],
     'per_seed_tags': [[[tag per token] per text] per member]}

  :func:`predict` adds ``'changed_inputs'``: what the run's files (the user's model
  or reader, the data) changed since its checkpoint was trained, when they did (it
  warns and answers with the files as they are now).
  """
  names = list(pieces.data.label_names)
  probs = per_member['probabilities']  # [members, texts, classes]
  mean = probs.mean(axis=0)
  out = {'classes': names, 'members': list(pieces.members.labels),
         'checkpoint': int(checkpoint), 'selected_epochs': [int(e) for e in epochs],
         'labels': [names[i] for i in mean.argmax(-1)],
         'probabilities': mean.tolist(),
         'per_seed': [[names[i] for i in p.argmax(-1)] for p in probs],
         'per_seed_probabilities': probs.tolist()}
  if len(pieces.members.point_labels) > 1:  # the mean over all points mixes settings
    out['by_point'] = {}
    for p, label in enumerate(pieces.members.point_labels):
      own = probs[pieces.members.point_ids == p].mean(axis=0)
      out['by_point'][label] = {'labels': [names[i] for i in own.argmax(-1)],
                                'probabilities': own.tolist()}
  if 'tags' in per_member:
    tag_names = list(pieces.data.tag_names)
    tags = per_member['tags']  # [members, texts, time]
    out['tokens'] = [list(t) for t in token_lists]
    out['per_seed_tags'] = [[[tag_names[k] for k in member[i, :len(tokens)]]
                             for i, tokens in enumerate(token_lists)] for member in tags]
    votes = np.stack([(tags == k).sum(0) for k in range(len(tag_names))], -1)
    out['tags'] = [[tag_names[k] for k in votes[i, :len(tokens)].argmax(-1)]
                   for i, tokens in enumerate(token_lists)]
  return out


# ------------------------------------------------------------------ the files


def columns_of(config, workdir: str):
  """The text and label columns and the encoding (config.data.files) the run was
  trained with: of ``config``, or (None) of the config ``workdir`` stored."""
  from seedsweep.data import user_files  # pylint: disable=g-import-not-at-top
  if config is None:
    stored = outputs.read_json(workdir_lib.config_path(workdir)) if os.path.isfile(
        workdir_lib.config_path(workdir)) else {}
    files_config = ((stored.get('data') or {}).get('files') or {})
  else:
    files_config = config.data.files
  return user_files.Columns.of(files_config)


def read_inputs(path: str, columns=None):
  """The rows of ``path`` to predict (seedsweep.data.user_files.read_inputs: TSV,
  CSV, JSONL and Parquet by training's column rules and shape checks, a label
  optional; other files one text a line), an empty row kept in its place."""
  from seedsweep.data import user_files  # pylint: disable=g-import-not-at-top
  files.refuse_folder(path, '--input', 'a file of texts')
  return user_files.read_inputs(path, columns or user_files.Columns())


def predict_file(config, workdir: str, path: str, print_fn=print):
  """``(rows, result)``: the rows of ``path`` (:func:`read_inputs`, with the run's
  own columns) and the run's answers for their texts (:func:`predict`, empty rows
  left out); where rows have gold labels, ``result['gold']`` (:func:`gold_scores`)
  and an accuracy line through ``print_fn``."""
  rows = read_inputs(path, columns_of(config, workdir))
  result = predict(config, workdir, [r.text for r in rows if r.text], print_fn)
  scores = gold_scores(rows, result)
  if scores is not None:
    result['gold'] = scores
    print_fn(accuracy_line(scores))
  return rows, result


def gold_scores(rows, result: dict) -> Optional[dict]:
  """The ensemble's and each seed's accuracy (%) on the rows with a gold label and
  a text (None without any): ``{'rows', 'accuracy', 'per_seed': [per member],
  'unknown': [gold labels that are not among the run's classes]}``."""
  answered = [r for r in rows if r.text]
  scored = [(i, r.label) for i, r in enumerate(answered) if r.label is not None]
  if not scored:
    return None
  def accuracy(labels):
    return 100.0 * sum(labels[i] == gold for i, gold in scored) / len(scored)
  classes = set(result['classes'])
  return {'rows': len(scored), 'accuracy': accuracy(result['labels']),
          'per_seed': [accuracy(labels) for labels in result['per_seed']],
          'unknown': sorted({gold for _, gold in scored if gold not in classes})}


def accuracy_line(scores: dict) -> str:
  """'accuracy on the 40 rows with a gold label: 87.50 (the seeds' ensemble); each
  seed 86.00 ± 1.20'."""
  seeds = scores['per_seed']
  spread = outputs.summarize(seeds)
  each = (f'; each seed {spread["mean"]:.2f} ± {spread["std"]:.2f}' if len(seeds) > 1
          else '')
  unknown = scores['unknown']
  note = (f' ({len(unknown)} gold label(s) not among the run\'s classes, counted '
          f'wrong: {", ".join(repr(u) for u in unknown[:5])})' if unknown else '')
  return (f'accuracy on the {scores["rows"]} rows with a gold label: '
          f'{scores["accuracy"]:.2f} (the seeds\' ensemble){each}{note}')


def jsonl_records(texts: Sequence[str], result: dict) -> List[dict]:
  """One record per text: its ensemble label, the mean probability of each class,
  each member's label, each point's ensemble label for a stacked run (and the tags,
  for a tagging model)."""
  records = []
  for i, text in enumerate(texts):
    record = {'text': text, 'label': result['labels'][i],
              'probabilities': dict(zip(result['classes'],
                                        (round(p, 6) for p in result['probabilities'][i]))),
              'per_seed': dict(zip(result['members'],
                                   (labels[i] for labels in result['per_seed'])))}
    if 'by_point' in result:
      record['by_point'] = {label: own['labels'][i]
                            for label, own in result['by_point'].items()}
    if 'tags' in result:
      record['tokens'] = result['tokens'][i]
      record['tags'] = result['tags'][i]
      record['per_seed_tags'] = dict(zip(result['members'],
                                         (tags[i] for tags in result['per_seed_tags'])))
    records.append(record)
  return records


def row_records(rows, result: dict) -> List[dict]:
  """One record per input row, in input order: its ``line`` in the file, then the
  record of :func:`jsonl_records` (with the row's ``gold`` label where it has one);
  an empty row ``{'line', 'text': '', 'label': None}``."""
  answered = iter(jsonl_records([r.text for r in rows if r.text], result))
  out = []
  for row in rows:
    record = {'line': row.line, **(next(answered) if row.text else
                                   {'text': '', 'label': None})}
    if row.label is not None:
      record['gold'] = row.label
    out.append(record)
  return out


def write_jsonl(path: str, texts: Sequence, result: dict) -> None:
  """The records of :func:`jsonl_records` (of :func:`row_records` for the rows of
  :func:`read_inputs`), one JSON object a line; ``-`` is stdout."""
  records = (row_records(texts, result) if texts and not isinstance(texts[0], str)
             else jsonl_records(texts, result))
  lines = ''.join(json.dumps(r, ensure_ascii=False) + '\n' for r in records)
  if path == '-':
    sys.stdout.write(lines)
    return
  with outputs.atomic_file(path, encoding='utf-8') as f:
    f.write(lines)
