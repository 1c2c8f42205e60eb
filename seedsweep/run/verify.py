"""``--mode=verify``: re-run the first epochs of a workdir and compare, bit for bit.

A run records, per epoch and member, its train loss, dev and test metrics and a hash
of its parameters (``metrics.jsonl``, ``params_sha256``), and its determinism record
(``results.json`` / checkpoint meta, ``provenance.determinism``). :func:`verify`
rebuilds every member's initial state from its seed, trains the first ``epochs``
epochs again, each as training ran it (seedsweep.run.epoch.run_epoch), and compares
each of those numbers exactly; it also checks that every
kept checkpoint still holds the parameters its epoch recorded, and that a checkpoint
of a re-run epoch equals the re-run state leaf for leaf, and that the files the run
read (its data, word vectors, the user's model and reader files) hold the bytes it
recorded: an edited file is named apart from the bits (``inputs_changed``), which
may agree all the same. It writes nothing: a running workdir can be verified while
it trains.
"""
import contextlib
import os
from typing import Dict, List, Optional

import jax
import numpy as np
from absl import logging

from seedsweep import data as data_lib
from seedsweep import notices
from seedsweep.engine import hosts
from seedsweep.errors import UserError
from seedsweep.run import checkpoints as ckpt_lib
from seedsweep.run import epoch as epoch_lib
from seedsweep.run import groups as groups_lib
from seedsweep.run import outputs
from seedsweep.run import pieces as pieces_lib
from seedsweep.run import prepare
from seedsweep.run import provenance as provenance_lib
from seedsweep.run import saved_data

COMPARED = ('train_loss', 'params_sha256')  # besides every dev_* and test_* metric


@contextlib.contextmanager
def _quiet_absl():
  level = logging.get_verbosity()
  logging.set_verbosity(logging.ERROR)
  try:
    yield
  finally:
    logging.set_verbosity(level)


def recorded_rows(workdir: str, epochs: int) -> Dict[int, Dict[str, dict]]:
  """``{epoch: {member label: row}}`` of metrics.jsonl (outputs.row_member); epochs
  1..``epochs`` must be there."""
  by_epoch = {}
  for row in groups_lib.rows(workdir):
    by_epoch.setdefault(row['epoch'], {})[outputs.row_member(row)] = row
  missing = [e for e in range(1, epochs + 1) if e not in by_epoch]
  if missing:
    raise UserError(f'{os.path.join(workdir, outputs.METRICS)} records no epoch '
                    f'{missing[0]}; --verify_epochs={epochs} needs epochs 1..{epochs} '
                    f'trained (it has {max(by_epoch, default=0)})')
  return by_epoch


def recorded_provenance(workdir: str, checkpoint_meta: Optional[dict]) -> dict:
  """The run's provenance: results.json's, else (a run still training) its newest
  checkpoint's meta; {} for a run made before records were kept."""
  path = os.path.join(workdir, outputs.RESULTS)
  if os.path.exists(path):
    return outputs.read_json(path).get('provenance') or {}
  return checkpoint_meta or {}


def checkable_epochs(machines, current: dict, epochs: int):
  """``(n, foreign)``: the first ``n`` of ``epochs`` were trained on machines that
  give this one's bits; ``foreign`` describes each span trained elsewhere (from the
  first, whose bits this machine cannot give, on)."""
  spans = provenance_lib.history_spans(machines, epochs)
  foreign, n = [], epochs
  for first, last, record in spans:
    changes = provenance_lib.record_differences(record, current)
    if changes and not foreign:
      n = first - 1
    if changes:
      foreign.append(f'epochs {first}..{last} were trained on '
                     f'{provenance_lib.describe_machine(record)}, which gives other bits '
                     f'than this machine ({"; ".join(changes)})')
  return n, foreign


def compare_rows(epoch: int, rows: List[dict], recorded: Dict[str, dict]) -> List[str]:
  """What differs between the re-run rows of ``epoch`` and the recorded ones."""
  out = []
  for row in rows:
    label = outputs.row_member(row)
    old = recorded.get(label)
    if old is None:
      out.append(f'epoch {epoch}, {label}: not in {outputs.METRICS}')
      continue
    names = [k for k in row if k in COMPARED or k.startswith(('dev_', 'test_'))]
    for k in names:
      if k in old and old[k] != row[k]:
        out.append(f'epoch {epoch}, {label}: {k} recorded {old[k]!r}, re-run {row[k]!r}')
  return out


def _leaf_differences(restored, state) -> List[str]:
  out = []
  flat_r = jax.tree_util.tree_flatten_with_path(restored)[0]
  for (path, r), s in zip(flat_r, jax.tree.leaves(state)):
    if not np.array_equal(hosts.fetch(r), hosts.fetch(s)):
      out.append(jax.tree_util.keystr(path))
  return out


def check_checkpoints(pieces, ckpts, rows_by_epoch, rerun_states):
  """``(differences, newest checkpoint's meta)``: every kept checkpoint must hold the
  parameters its epoch recorded, and one of a re-run epoch must equal the re-run
  state (every leaf, optimizer state included)."""
  out, meta = [], None
  target = pieces.init_state()
  for epoch in sorted(ckpts.manager.all_steps()):
    restored, meta = pieces.restore(ckpts, epoch, target)
    recorded = rows_by_epoch.get(epoch)
    if recorded:
      found = epoch_lib.params_fingerprints(pieces, restored.params)
      for i, label in enumerate(pieces.members.labels):
        want = recorded.get(label, {}).get('params_sha256')
        if want is not None and want != found[i]:
          out.append(f'checkpoint of epoch {epoch}: {label} holds parameters '
                     f'{found[i]}, the run recorded {want} (the checkpoint was changed '
                     'or written by another run)')
    if epoch in rerun_states:
      leaves = _leaf_differences(pieces.saved(restored), rerun_states[epoch])
      if leaves:
        out.append(f'checkpoint of epoch {epoch} differs from the re-run state in '
                   + ', '.join(leaves[:5]) + (' ...' if len(leaves) > 5 else ''))
  return out, meta


def inputs_now(run, pieces, saved, print_fn) -> dict:
  """The provenance of the run's inputs as the files hold them now: the build's own,
  or, for a run built from the dataset it saved, its data files read again (none
  when they cannot be read: each then counts as changed)."""
  if saved is None:
    return pieces.provenance
  try:
    checksums = data_lib.split_checksums(run.config.data)
  except UserError as e:
    print_fn(f'{run.workdir}: its data files cannot be read now ({e}); verified from '
             f'the dataset it saved ({saved_data.FILE})')
    checksums = {}
  return {**pieces.provenance,
          'data': {**pieces.provenance['data'], 'checksums': checksums}}


def verify(config, workdir: str, epochs: int = 1, print_fn=print) -> dict:
  """Re-runs epochs 1..``epochs`` of ``workdir`` and compares them bitwise.

  Returns ``{'reproduced': bool, 'differences': [...], 'inputs_changed': [...],
  'record_changes': [...]}`` and prints ``reproduced`` or what differs and which
  record field changed. The bits and the inputs are apart: ``reproduced`` says
  whether the re-run numbers equal the recorded ones; ``inputs_changed`` which of
  the files the run read (data, vectors, the user's model, its modules and reader)
  hold other bytes now (the command's exit status: 0 both hold, 1 the bits differ,
  3 they agree but an input changed).
  """
  if epochs < 1:
    raise UserError(f'--verify_epochs={epochs}; expected a positive number of epochs')
  with notices.to(print_fn):  # the lower layers' lines (a dataset prepared) too
    return _verify(config, workdir, epochs, print_fn)


def _verify(config, workdir: str, epochs: int, print_fn) -> dict:
  """:func:`verify`'s work."""
  run = prepare.prepare_existing(config, workdir, 'a run to verify')
  all_rows = recorded_rows(workdir, epochs)
  saved = saved_data.load(workdir, run.config.data, tables='file')
  pieces = pieces_lib.build(run.checked, saved)
  differences, kept, rerun, foreign, checkable = [], 0, epochs, [], epochs
  recorded = current = None
  for part, folder in groups_lib.parts(pieces, workdir):  # a split run: group by group
    state = part.init_state()
    with _quiet_absl():  # orbax warns that a read-only manager will not save
      ckpts = ckpt_lib.Checkpoints(folder, read_only=True)
    try:
      checkpoint_epochs = set(ckpts.manager.all_steps())
      if recorded is None:
        current = epoch_lib.determinism(part, state)  # its programs compiled
        newest = max(checkpoint_epochs, default=None)
        recorded = recorded_provenance(workdir, ckpts.meta(newest) if newest else None)
        # A run continued on another machine: its epochs from there on give that
        # machine's bits, so only those before can be checked here.
        machines = recorded.get('machines') or provenance_lib.trained_on(recorded)
        checkable, foreign = checkable_epochs(machines, current, epochs)
        rerun = checkable or epochs  # nothing checkable: re-run, show what differs
      rerun_states = {}
      for epoch in range(1, rerun + 1):  # the epochs training ran (wall_time 0)
        done = epoch_lib.run_epoch(part, state, epoch)
        state = done.state
        differences += compare_rows(epoch, done.rows, all_rows[epoch])
        if epoch in checkpoint_epochs:
          rerun_states[epoch] = jax.tree.map(np.asarray, part.saved(state))
      found, _ = check_checkpoints(part, ckpts, all_rows, rerun_states)
      differences += found
      kept += len(checkpoint_epochs)
    finally:
      ckpts.close()
  # The files the run was trained on (the user's model, its modules and reader, the
  # data): an edited one is said apart from the bits, which may agree all the same
  # (a class added to the model file changes its bytes, not the model).
  inputs = provenance_lib.input_changes(recorded, inputs_now(run, pieces, saved,
                                                            print_fn))
  record = recorded.get('determinism')
  changes = (provenance_lib.record_differences(
      record, current, provenance_lib.reproducing(record) + ('program',))
             if record else [])
  members = len(pieces.members)
  if not differences:
    print_fn(f'{workdir}: reproduced: epochs 1..{rerun} of {members} members bitwise '
             f'(parameters, train loss, dev and test metrics); '
             f'{kept} checkpoint(s) intact.')
    if rerun < epochs:
      print_fn('  not checked here: ' + '; '.join(foreign) + ' (check them there, or as '
               'a distribution with --statistical)')
    elif changes:
      print_fn('  (the determinism record differs, yet the bits agree: '
               + '; '.join(changes) + ')')
    if inputs:
      source = ('the dataset the run saved' if saved is not None
                else 'them as they are now')
      print_fn(f'{workdir}: but {len(inputs)} input(s) changed since the run was '
               f'trained (the bits above come from {source}): ' + '; '.join(inputs))
  else:
    print_fn(f'{workdir}: NOT reproduced: {len(differences)} difference(s)')
    for d in differences[:20]:
      print_fn(f'  {d}')
    if len(differences) > 20:
      print_fn(f'  ... and {len(differences) - 20} more')
    if foreign and not checkable:
      print_fn('  expected: ' + '; '.join(foreign) + ' (check them there, or as a '
               'distribution with --statistical)')
    else:
      print_fn('  determinism record, recorded -> now: '
               + ('; '.join(changes) if changes else
              'no field changed' if record else 'none recorded (an older run)'))
    if inputs:
      print_fn('  inputs changed since the run was trained (a likely cause): '
               + '; '.join(inputs))
  return {'reproduced': not differences, 'differences': differences,
          'inputs_changed': inputs, 'record_changes': changes}
