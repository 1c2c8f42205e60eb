r"""The reproduction campaign: every paper row the configs define, with random
embeddings and with word vectors the framework trains itself, measured, reported and
published in the manual (docs/papers.md, "Published results").

  python results/campaign.py vectors             # the word2vec files the rows use
  python results/campaign.py list                # every run: state, seeds, command,
                                                 # and how far a started one is
  python results/campaign.py train RUN [RUN...]  # e.g. dclstm/sst2/w2v_static
  python results/campaign.py train --again RUN   # a published run trained afresh
  python results/campaign.py readme              # the manual's results section alone
  python results/campaign.py publish             # records, reports, results section

A *row* is a paper's model on one dataset of its main table (``dclstm/sst2``); a
*run* is a row in one embedding setting (``dclstm/sst2/random``,
``dclstm/sst2/w2v_static``): one ``seedsweep`` run, all its seeds in one program,
trained in ``runs/campaign/<run>`` (checkpoints: large, not committed; a run started
again resumes, a finished one is left alone, a published one is not trained again).
A run longer than a session (whose machine, and checkpoints, may not outlive it)
trains its seeds in parts (``Row.part_seeds``), ``<run>/seeds_1-5`` then
``<run>/seeds_6-10``, each a run of its own; the report merges a run's parts into one
row, since a seed's numbers do not depend on the seeds trained beside it.
``w2v_static`` and ``w2v_fine-tuned`` start from IMDB word2vec vectors (VECTORS
below, made by ``vectors``), frozen or trained; each row has the paper's mode first.

``publish`` copies each finished run's record (config.json, results.json,
metrics.jsonl: what produced it and every per-seed, per-epoch number) to
``results/<paper>/runs/<row>/<setting>/``, rebuilds ``results/<paper>/`` (report.md,
report.csv, plots) from those records with ``seedsweep --mode=report``, and rewrites
the manual's results section (RESULTS_PAGE) from the reports' CSV. The committed records let any
clone rebuild every report, and a report combine runs trained in different sessions;
``seedsweep --mode=report --workdir=runs/campaign/<paper>`` gives the same tables
from the checkpoints themselves.

Run from the checkout's root or anywhere: paths are the checkout's. Raw data:
``$SEEDSWEEP_DATA`` as for every run.
"""
import argparse
import ast
import csv
import dataclasses
import filecmp
import os
import subprocess
import sys
import time
from typing import Dict, List, Optional, Sequence, Tuple

from seedsweep import files

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNS = os.path.join('runs', 'campaign')      # relative to ROOT
VECTORS_DIR = os.path.join('runs', 'vectors')
DISCARDED = os.path.join('runs', 'discarded')  # run folders set aside by --again
RESULTS = 'results'
RECORD_FILES = ('config.json', 'results.json', 'metrics.jsonl')
# The manual's page that holds the results section (between BEGIN and END); its
# links to the reports are relative to the page's folder.
RESULTS_PAGE = os.path.join('docs', 'papers.md')
BEGIN, END = '<!-- campaign:begin -->', '<!-- campaign:end -->'

# --- word vectors ------------------------------------------------------------------

# One recipe for every file (chosen in docs/log.md, "Word vectors"): gensim
# skip-gram, 10 passes; the other settings are word2vec's defaults. OpenBLAS's kernels
# are the file's own (Vectors.blas_core): 'portable' (Haswell's: the same bytes on
# every CPU with AVX2 and FMA) for files made since 2026-11-28; SkylakeX (AVX-512:
# only such a CPU rebuilds them), the core the machines of the first campaign sessions
# picked themselves, for the files the published records of those sessions name.
WORD2VEC = dict(algorithm='skipgram', epochs=10, window=5, min_count=5, seed=1)
AVX512_CORE = 'SkylakeX'



@dataclasses.dataclass(frozen=True)
class Vectors:
  """A word2vec file trained on ``corpus`` (data/word2vec.py's corpora)."""
  name: str
  corpus: str
  dim: int
  tokens: str  # 'ptb' (SST, TREC, ATIS) or 'imdb' (MR, Subj, IMDB: clitics attached)
  blas_core: str = 'portable'  # data/word2vec.py --blas_core

  @property
  def path(self) -> str:
    return os.path.join(VECTORS_DIR, f'{self.name}.txt')

  def command(self) -> List[str]:
    flags = dict(WORD2VEC, corpus=self.corpus, dim=self.dim, tokens=self.tokens,
                 blas_core=self.blas_core, out=self.path)
    return [sys.executable, '-m', 'seedsweep.data.word2vec'] + [
        f'--{k}={v}' for k, v in flags.items()]


VECTORS = {v.name: v for v in (
    Vectors('imdb_sg_300d', 'imdb', 300, 'ptb', AVX512_CORE),
    Vectors('imdb_sg_100d', 'imdb', 100, 'ptb'),
    Vectors('imdb_sg_300d_imdbtok', 'imdb', 300, 'imdb', AVX512_CORE),
    # An IMDB row must never see its test reviews: the training reviews only.
    Vectors('imdbtrain_sg_100d', 'imdb_train', 100, 'imdb', AVX512_CORE),
)}

# --- rows --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Paper:
  name: str      # results/<name>
  title: str     # the results section's heading
  vectors: str   # what the paper started from


PAPERS = {p.name: p for p in (
    Paper('dclstm', 'DC-Bi-LSTM (Ding et al. 2018, Table 1; dl 15, dh 13, th 100)',
          'GloVe 42B 300-d, static; words without a vector deleted'),
    Paper('clstm', 'C-LSTM (Zhou et al. 2015, Tables 1-2)',
          'word2vec GoogleNews 300-d, fine-tuned'),
    Paper('mtlstm', 'MT-LSTM F2S (Liu et al. 2015, Table 3)',
          'word2vec on 1B words of Wikipedia 100-d, fine-tuned'),
    Paper('dlstm', 'DLSTM (Shi et al. 2016, Tables 1-3)',
          'GloVe 840B 300-d, static'),
    Paper('joint', 'Joint sparse-attention model (Ma et al. 2017, Table 1, Figure 4)',
          'ATIS: random 100-d; TREC: 300-d pretrained (word2vec), fine-tuned'),
)}


@dataclasses.dataclass(frozen=True)
class Row:
  """A paper's model on one dataset: ``config`` and the runs it gets."""
  paper: str
  name: str
  label: str
  config: str
  vectors: Optional[str]         # a VECTORS name; None: random embeddings only
  modes: Tuple[str, ...] = ('fine-tuned',)  # the vectors' runs: 'static' (frozen)
                                            # and/or 'fine-tuned'; the paper's first
  seeds: int = 10
  w2v_seeds: int = 0             # the w2v runs' seeds when not ``seeds``
  part_seeds: int = 0            # train a run in seed parts of this many (0: whole)
  overrides: Tuple[str, ...] = ()      # more --config.X=V flags, every run of the row
  w2v_overrides: Tuple[str, ...] = ()  # more flags for the runs with vectors
  note: str = ''                 # what differs, or why a run is missing
  random: bool = True            # a random-embedding run (False: an ablation row
                                 # run with the vectors only)

  @property
  def key(self) -> str:
    return f'{self.paper}/{self.name}'

  def settings(self) -> Tuple[str, ...]:
    """Run names: 'random' (unless ``random`` is off), then 'w2v_static' /
    'w2v_fine-tuned' per mode."""
    return (('random',) if self.random else ()) + tuple(
        f'w2v_{m}' for m in self.modes if self.vectors)


BOTH = ('fine-tuned', 'static')
LOWER = ('data.vectors.lowercase=True',)  # cased text, lower-cased vectors
# The table updated on the batch's rows only: the dense optimiser up to rounding,
# 2.5-3x faster steps on a CPU (seedsweep/engine/embedding_rows.py). Rows measured
# before it existed keep the dense update their records name.
ROWS_UPDATE = ('optimizer.embedding_update=rows',)
ROWS_NOTE = 'the table updated on the batch\'s rows (`embedding_update=rows`)'

ROWS: Tuple[Row, ...] = (
    # DC-Bi-LSTM: lower-cased, static vectors, words without a vector deleted.
    Row('dclstm', 'sst2', 'SST-2', 'experiments/dclstm_sst.py:binary', 'imdb_sg_300d',
        modes=('static',)),
    Row('dclstm', 'sst1', 'SST-1', 'experiments/dclstm_sst.py:fine', 'imdb_sg_300d',
        modes=('static',)),
    # docs/models.md §3.2's ablation: SST-1 trained on phrases too (159k an epoch).
    Row('dclstm', 'sst1_phrases', 'SST-1 (+phrases)', 'experiments/dclstm_sst.py:fine,phrases',
        'imdb_sg_300d', modes=('static',), part_seeds=1, random=False,
        note='the ablation docs/models.md §3.2 names (phrases + sentences, tested on '
             'sentences): static vectors only, a seed at a time (30-65 min a seed on '
             '2 cores)'),
    Row('dclstm', 'trec', 'TREC', 'experiments/dclstm_trec.py', 'imdb_sg_300d',
        modes=('static',)),
    Row('dclstm', 'mr', 'MR (10-fold CV)', 'experiments/dclstm_mr.py',
        'imdb_sg_300d_imdbtok', modes=('static',), seeds=2, part_seeds=1,
        note='10 folds x 2 seeds (20 members) per run, a seed at a time: 10 x 10 would '
             'take ~12 h a run on 2 CPU cores'),
    Row('dclstm', 'subj', 'Subj (10-fold CV)', 'experiments/dclstm_subj.py',
        'imdb_sg_300d_imdbtok', modes=('static',), seeds=2, part_seeds=1,
        note='10 folds x 2 seeds per run, as MR'),
    # C-LSTM: phrases + sentences on SST, fine-tuned vectors.
    Row('clstm', 'sst2', 'SST-2', 'experiments/clstm_sst.py:binary', 'imdb_sg_300d',
        overrides=ROWS_UPDATE, note=ROWS_NOTE),
    Row('clstm', 'sst1', 'SST-1', 'experiments/clstm_sst.py:fine', 'imdb_sg_300d',
        part_seeds=5, overrides=ROWS_UPDATE,
        note=ROWS_NOTE + '; trained 5 seeds at a time'),
    Row('clstm', 'trec', 'TREC', 'experiments/clstm_trec.py', 'imdb_sg_300d'),
    # MT-LSTM: 100-d fine-tuned vectors (the paper), and static (cheap runs).
    Row('mtlstm', 'sst2', 'SST-2', 'experiments/mtlstm_sst.py:binary', 'imdb_sg_100d',
        modes=BOTH),
    Row('mtlstm', 'sst1', 'SST-1', 'experiments/mtlstm_sst.py:fine', 'imdb_sg_100d',
        modes=BOTH),
    Row('mtlstm', 'trec', 'QC (TREC)', 'experiments/mtlstm_trec.py', 'imdb_sg_100d',
        modes=BOTH),
    Row('mtlstm', 'imdb', 'IMDB', 'experiments/mtlstm_imdb.py', 'imdbtrain_sg_100d',
        part_seeds=3, overrides=ROWS_UPDATE,
        note='trained in parts of 3 seeds and one of 1 (25k reviews of ~300 tokens: '
             '31 min for 3 on the older 2-core EPYC, 15-18 min on Zen 5); ' + ROWS_NOTE),
    # DLSTM: cased text, static vectors looked up lower-cased.
    Row('dlstm', 'sst2', 'SST-2 (sentences)', 'experiments/dlstm_sst.py:binary',
        'imdb_sg_300d', modes=('static',), seeds=5, w2v_seeds=10, part_seeds=3,
        w2v_overrides=LOWER,
        note='random embeddings over 5 seeds; trained 3 seeds at a time'),
    Row('dlstm', 'sst1', 'SST-1 (sentences)', 'experiments/dlstm_sst.py:fine',
        'imdb_sg_300d', modes=('static',), seeds=5, part_seeds=3, w2v_overrides=LOWER,
        note='5 seeds a run, trained 3 + 2'),
    Row('dlstm', 'sst2_phrases', 'SST-2 (+phrases)',
        'experiments/dlstm_sst.py:binary,phrases', 'imdb_sg_300d', modes=('static',), seeds=3,
        part_seeds=1, w2v_overrides=LOWER,
        note='3 seeds a run, one at a time: 77k phrases an epoch, up to 100 epochs'),
    Row('dlstm', 'sst1_phrases', 'SST-1 (+phrases)',
        'experiments/dlstm_sst.py:fine,phrases', 'imdb_sg_300d', modes=('static',), seeds=3,
        part_seeds=1, w2v_overrides=LOWER,
        note='3 seeds a run, one at a time: 159k phrases an epoch, up to 100 epochs; '
             'random embeddings on a lent H100 (the three seeds side by side)'),
    Row('dlstm', 'trec', 'TREC', 'experiments/dlstm_trec.py', 'imdb_sg_300d',
        modes=('static',), seeds=5, part_seeds=3, w2v_overrides=LOWER,
        note='5 seeds a run, trained 3 + 2: 100 epochs with no dev set to stop on, so '
             'the model after epoch 100 is tested'),
    Row('dlstm', 'atis', 'ATIS intents', 'experiments/dlstm_atis.py', 'imdb_sg_300d',
        modes=('static',), seeds=5, part_seeds=3, w2v_overrides=LOWER,
        note='5 seeds a run, trained 3 + 2, as TREC'),
    # The joint model: random 100-d vectors on ATIS in the paper itself.
    Row('joint', 'atis', 'ATIS (slot F1, intent error)', 'experiments/joint_atis.py',
        None, note='the paper trained random vectors on ATIS; no w2v run'),
    Row('joint', 'trec', 'TREC (latent labels)', 'experiments/joint_trec.py',
        'imdb_sg_300d'),
)

ROWS_BY_KEY = {row.key: row for row in ROWS}

# Rows published before 2026-11-28, when portable numerics and embedding_update='auto'
# became the defaults: their records name the settings of their day (the CPU's own
# numerics, the dense update unless the row says 'rows'), which a part trained for
# them keeps. Such a row is trained again whole under the defaults (train --again
# of each of its runs, after dropping it from here), never extended with parts of
# other settings.
BEFORE_PORTABLE = ('runtime.numerics=native', 'optimizer.embedding_update=dense')
BEFORE_PORTABLE_ROWS = frozenset((
    'dclstm/sst2', 'dclstm/sst1', 'dclstm/sst1_phrases', 'dclstm/trec', 'dclstm/mr',
    'dclstm/subj', 'clstm/sst2', 'clstm/sst1', 'clstm/trec', 'mtlstm/imdb',
    'dlstm/sst2', 'dlstm/sst1',
    'dlstm/sst2_phrases', 'dlstm/sst1_phrases', 'dlstm/trec', 'dlstm/atis',
    'joint/atis', 'joint/trec'))

# Every row was trained under a pool of 4 threads, the default until 2026-12-04 (the
# pool follows the cores since): native rows' bits follow the pool, so a part trained
# for a row keeps its record's pool.
RECORDED_POOL = 'runtime.cpu_threads=4'

# --- runs --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Run:
  """A row in one embedding setting; or, with ``part``, one seed part of it: a run
  too long for one session trains its seeds in parts, each a run of its own in a
  ``seeds_A-B`` sub-folder, which the report merges back into one row (a seed's
  numbers are the same in any group: seedsweep/reports/collect.py)."""
  row: Row
  setting: str  # 'random' | 'w2v_static' | 'w2v_fine-tuned'
  part: Tuple[int, ...] = ()  # a seed part's seeds; () the whole run

  @property
  def key(self) -> str:
    return '/'.join((self.row.key, self.setting) + self._part_folder())

  def _part_folder(self) -> Tuple[str, ...]:
    if not self.part:
      return ()
    first, last = self.part[0], self.part[-1]
    return (f'seeds_{first}' if first == last else f'seeds_{first}-{last}',)

  @property
  def workdir(self) -> str:
    return os.path.join(RUNS, self.row.paper, self.row.name, self.setting,
                        *self._part_folder())

  @property
  def record_dir(self) -> str:
    return os.path.join(RESULTS, self.row.paper, 'runs', self.row.name, self.setting,
                        *self._part_folder())

  @property
  def seeds(self) -> int:
    if self.part:
      return len(self.part)
    return (self.row.w2v_seeds or self.row.seeds) if self.setting != 'random' \
        else self.row.seeds

  def parts(self) -> List['Run']:
    """What ``train`` runs, one program each: the run's seed parts, or the run."""
    size, seeds = self.row.part_seeds, tuple(range(1, self.seeds + 1))
    if self.part or not size or size >= len(seeds):
      return [self]
    return [dataclasses.replace(self, part=seeds[i:i + size])
            for i in range(0, len(seeds), size)]

  def overrides(self) -> Dict[str, object]:
    """``{dotted config key: value}`` over the row's config file."""
    values = dict(_parse(flag) for flag in (RECORDED_POOL,) + (
        BEFORE_PORTABLE if self.row.key in BEFORE_PORTABLE_ROWS else ()))
    values.update(_parse(flag) for flag in self.row.overrides)
    if self.part:
      values['seeds'] = self.part
    elif self.seeds != 10:
      values['seeds'] = tuple(range(1, self.seeds + 1))
    if self.setting != 'random':
      values['data.vectors.path'] = VECTORS[self.row.vectors].path
      values['data.vectors.static'] = self.setting == 'w2v_static'
      values.update(_parse(flag) for flag in self.row.w2v_overrides)
    return values

  def config(self):
    """The run's ConfigDict, as its command gives it."""
    from seedsweep import api  # pylint: disable=g-import-not-at-top
    from seedsweep.config import keys  # pylint: disable=g-import-not-at-top
    config = api.load_config(os.path.join(ROOT, self.row.config))
    return keys.with_values(config, self.overrides(), f'campaign run {self.key}')

  def command(self) -> List[str]:
    return ([sys.executable, '-m', 'seedsweep', f'--config={self.row.config}',
             f'--workdir={self.workdir}', '--config.train.progress=False'] +
            [f'--config.{k}={_flag_text(v)}' for k, v in self.overrides().items()])


def _parse(flag: str) -> Tuple[str, object]:
  """``'key=Python literal'`` (a bare word is a string)."""
  key, _, text = flag.partition('=')
  try:
    return key, ast.literal_eval(text)
  except (ValueError, SyntaxError):
    return key, text


def _flag_text(value) -> str:
  """A value as ``--config.KEY=`` reads it back."""
  if isinstance(value, tuple):
    return '(' + ','.join(map(str, value)) + (',)' if len(value) == 1 else ')')
  return str(value)


def all_runs() -> List[Run]:
  return [Run(row, s) for row in ROWS for s in row.settings()]


def all_parts() -> List[Run]:
  """What ``train`` can run: every run, or its seed parts."""
  return [part for run in all_runs() for part in run.parts()]


def find_run(key: str) -> Run:
  for run in all_runs() + all_parts():
    if run.key == key:
      return run
  raise SystemExit(f'campaign: no run {key!r}; expected one of '
                   f'{", ".join(r.key for r in all_runs())} (or a seed part of one: '
                   f'{", ".join(r.key for r in all_parts() if r.part)})')


def state(run: Run) -> str:
  """'published' (its record is under results/), 'finished' (not yet published),
  'started' or 'not run'; for a run in seed parts, its parts' state when they share
  one, else 'started'."""
  parts = run.parts()
  if len(parts) > 1:
    states = {state(part) for part in parts}
    return states.pop() if len(states) == 1 else 'started'
  if os.path.exists(os.path.join(ROOT, run.record_dir, 'results.json')):
    return 'published'
  if os.path.exists(os.path.join(ROOT, run.workdir, 'results.json')):
    return 'finished'
  if os.path.exists(os.path.join(ROOT, run.workdir, 'config.json')):
    return 'started'
  return 'not run'


def progress(run: Run) -> str:
  """For a started run, ``'epoch E/N, M min an epoch'`` from its metrics.jsonl (the
  epochs logged so far; N the config's most); '' otherwise."""
  if state(run) != 'started':
    return ''
  from seedsweep.run import outputs  # pylint: disable=g-import-not-at-top
  workdir = os.path.join(ROOT, run.workdir)
  most = outputs.read_json(os.path.join(workdir, outputs.CONFIG))['train']['num_epochs']
  walls = {r['epoch']: r['wall_time'] for r in outputs.MetricsLog(workdir).rows()}
  if not walls:
    return f'epoch 0/{most}'
  epoch = max(walls)
  return f'epoch {epoch}/{most}, {walls[epoch] / epoch / 60:.1f} min an epoch so far'


# --- commands ----------------------------------------------------------------------


def _call(command: Sequence[str]) -> int:
  print('$', ' '.join(command), flush=True)
  return subprocess.call(list(command), cwd=ROOT)


def make_vectors(names: Sequence[str]) -> int:
  os.makedirs(os.path.join(ROOT, VECTORS_DIR), exist_ok=True)
  unknown = sorted(set(names) - set(VECTORS))
  if unknown:
    raise SystemExit(f'campaign: no vectors {unknown[0]!r}; expected one of '
                     f'{", ".join(VECTORS)}')
  for name in names or sorted(VECTORS):
    vectors = VECTORS[name]
    if os.path.exists(os.path.join(ROOT, vectors.path)):
      print(f'{vectors.path}: exists')
      continue
    if _call(vectors.command()):
      return 1
  return 0


def set_aside(run: Run) -> bool:
  """Readies a published run to be trained afresh; False when it needs no training.

  The run folder that produced the record moves to ``runs/discarded/`` (renamed,
  never deleted), so the run's command starts over; a folder without results, a new
  run under way, is left for the command to resume. A finished new run that is not
  published yet is left alone: ``publish`` puts its record in place of the old one,
  which stands until then."""
  workdir = os.path.join(ROOT, run.workdir)
  results = os.path.join(workdir, 'results.json')
  if not os.path.exists(results):
    return True
  if not filecmp.cmp(results, os.path.join(ROOT, run.record_dir, 'results.json'),
                     shallow=False):
    print(f'{run.key}: trained again and finished; `python results/campaign.py '
          'publish` replaces its record')
    return False
  stamp = time.strftime('%Y%m%d-%H%M%S', time.gmtime())
  target = os.path.join(ROOT, DISCARDED, run.key.replace('/', '__') + '.' + stamp)
  os.makedirs(os.path.dirname(target), exist_ok=True)
  os.rename(workdir, target)
  print(f'{run.key}: its published run folder moved to {os.path.relpath(target, ROOT)}')
  return True


def train(keys: Sequence[str], keep_going: bool, again: bool = False) -> int:
  """Trains each run (each of its seed parts in turn), skipping what is published:
  its checkpoints may be gone with an earlier machine, and its record stands; with
  ``again``, a published run trains afresh (``set_aside``) and its record stands
  until ``publish`` replaces it. A run stopped by a signal (its checkpoint saved)
  ends the campaign there: the user's stop."""
  failed = []
  for run in [part for k in keys for part in find_run(k).parts()]:
    published = state(run) == 'published'
    if published and not again:
      print(f'{run.key}: published in {run.record_dir}; `python results/campaign.py '
            f'train --again {run.key}` trains it afresh')
    elif published and not set_aside(run):
      pass  # trained again and finished: it waits for `publish`, not for training
    elif run.setting != 'random' and not os.path.exists(
        os.path.join(ROOT, VECTORS[run.row.vectors].path)):
      print(f'{run.key}: {VECTORS[run.row.vectors].path} missing; run '
            f'`python results/campaign.py vectors {run.row.vectors}` first')
      failed.append(run.key)
    else:
      code = _call(run.command())
      if code > 128:  # stopped by a signal, its checkpoint saved: the user's stop
        flag = '--again ' if again else ''
        print(f'campaign: {run.key} stopped (signal {code - 128}); `python '
              f'results/campaign.py train {flag}{run.key}` resumes it from its '
              'checkpoint')
        return code
      if code:
        failed.append(run.key)
    if failed and not keep_going:
      break
  if failed:
    print('campaign: failed: ' + ', '.join(failed))
  return 1 if failed else 0


def list_runs() -> int:
  parts = all_parts()
  width = max(len(run.key) for run in parts)
  for run in parts:
    done = progress(run)
    print(f'{run.key:{width}s} {state(run):10s} {run.seeds:2d} seeds  '
          + ' '.join(run.command()[2:]) + (f'  [{done}]' if done else ''))
  return 0


def copy_records(run: Run) -> bool:
  """The finished run's record files into its record folder; False when unfinished."""
  source = os.path.join(ROOT, run.workdir)
  if not os.path.exists(os.path.join(source, 'results.json')):
    return False
  target = os.path.join(ROOT, run.record_dir)
  os.makedirs(target, exist_ok=True)
  for name in RECORD_FILES:
    with open(os.path.join(source, name), 'rb') as f:
      data = f.read()
    with files.atomic_write(os.path.join(target, name), 'wb') as f:
      f.write(data)
  return True


def publish() -> int:
  for run in all_parts():
    if copy_records(run):
      print(f'{run.key}: record copied to {run.record_dir}')
  for paper in PAPERS:
    runs_dir = os.path.join(RESULTS, paper, 'runs')
    if os.path.isdir(os.path.join(ROOT, runs_dir)):
      if _call([sys.executable, '-m', 'seedsweep', '--mode=report',
                f'--workdir={runs_dir}', f'--output={os.path.join(RESULTS, paper)}']):
        return 1
  write_readme()
  return 0


# --- the manual's results section --------------------------------------------------


def read_reports() -> Dict[Tuple[str, str, str], Dict[str, dict]]:
  """``{(paper, row, setting): {metric: report.csv row}}`` from every paper's report."""
  found = {}
  for paper in PAPERS:
    path = os.path.join(ROOT, RESULTS, paper, 'report.csv')
    if not os.path.exists(path):
      continue
    with open(path, newline='') as f:
      for line in csv.DictReader(f):
        row_name, _, setting = line['run'].partition('/')
        found.setdefault((paper, row_name, setting), {})[line['metric']] = line
  return found


def _number(text: str, spec: str = '.2f') -> str:
  return format(float(text), spec) if text not in ('', None) else ''


def _spread_text(line: dict) -> str:
  """'mean ± std', or the mean alone for one seed (which has no spread)."""
  if int(line['n']) == 1:
    return _number(line['mean'])
  return f'{_number(line["mean"])} ± {_number(line["std"])}'


def _p_text(line: dict) -> str:
  p = line['p_value']
  if p in ('', 'ref'):
    return p
  return '<0.01' if float(p) < 0.005 else _number(p)


def _ci_text(line: dict) -> str:
  """The report's 95 % CI of the mean (Student's t), or nothing where it has none
  (one seed)."""
  if not _number(line['ci95_low']):
    return ''
  return f'[{_number(line["ci95_low"])}, {_number(line["ci95_high"])}]'


def _wall(seconds: str) -> str:
  from seedsweep.reports import render  # pylint: disable=g-import-not-at-top
  return render.wall_text(float(seconds)) if seconds else ''


def _embeddings(row: Row, setting: str) -> str:
  if setting == 'random':
    return 'random'
  return f'IMDB w2v {VECTORS[row.vectors].dim}-d, {setting[len("w2v_"):]}'


def _n_text(run: Run, n: str) -> str:
  """The table's *n*: ``'4 of 10'`` while a run trained in seed parts has only some
  parts published (``n`` counting seeds), else ``n`` as the report gives it."""
  published = sum(len(part.part) for part in run.parts() if state(part) == 'published')
  if 0 < published < run.seeds and n == str(published):
    return f'{n} of {run.seeds}'
  return n


def metric_label(metric: str) -> str:
  return {'test_accuracy': 'accuracy', 'test_slot_f1': 'slot F1',
          'test_intent_error': 'intent error'}.get(metric, metric)


def readme_section() -> str:
  reports = read_reports()
  lines = []
  for paper in PAPERS.values():
    link = f'{RESULTS}/{paper.name}/'
    # The report's CSV: a file link that both GitHub and the manual's build
    # (a download) resolve; a folder or a .md file outside docs/ is no Sphinx target.
    target = os.path.relpath(os.path.join(RESULTS, paper.name, 'report.csv'),
                             os.path.dirname(RESULTS_PAGE) or '.').replace(os.sep, '/')
    lines += [f'### {paper.title}', '',
              f'Paper: {paper.vectors}. Report: [`{link}`]({target}).', '',
              '| row | embeddings | metric | mean ± std | 95 % CI | n | best-dev seed '
              '| paper | p (Welch) | epochs | hardware | wall |',
              '| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- '
              '| ---: |']
    notes = []
    for row in (r for r in ROWS if r.paper == paper.name):
      for setting in row.settings():
        metrics = reports.get((paper.name, row.name, setting))
        if not metrics:
          lines.append(f'| {row.label} | {_embeddings(row, setting)} | | not run '
                       f'yet | | | | | | | | |')
          continue
        for metric, line in metrics.items():
          lines.append(
              f'| {row.label} | {_embeddings(row, setting)} | {metric_label(metric)} '
              f'| {_spread_text(line)} '
              f'| {_ci_text(line)} '
              f'| {_n_text(Run(row, setting), line["n"])} '
              f'| {_number(line["best_dev_test"])} '
              f'| {_number(line["paper"], ".2f")} | {_p_text(line)} '
              f'| {line["epochs_completed"]} | {line["hardware"]} '
              f'| {_wall(line["wall_time"])} |')
      if row.note:
        notes.append(f'* {row.label}: {row.note}.')
    lines += [''] + notes + ([''] if notes else [])
  return '\n'.join(lines).rstrip() + '\n'


def write_readme() -> None:
  path = os.path.join(ROOT, RESULTS_PAGE)
  with open(path) as f:
    text = f.read()
  start, end = text.find(BEGIN), text.find(END)
  if start < 0 or end < start:
    raise SystemExit(f'campaign: {RESULTS_PAGE} has no {BEGIN} ... {END} section')
  text = text[:start + len(BEGIN)] + '\n' + readme_section() + text[end:]
  with files.atomic_write(path) as f:  # a kill mid-write leaves the old page whole
    f.write(text)
  print(f'{RESULTS_PAGE}: results section rewritten')


def main(argv: Optional[Sequence[str]] = None) -> int:
  parser = argparse.ArgumentParser(
      prog='python results/campaign.py', description=__doc__,
      formatter_class=argparse.RawDescriptionHelpFormatter)
  sub = parser.add_subparsers(dest='command', required=True)
  sub.add_parser('list', help='every run: state, seeds, command')
  vectors = sub.add_parser('vectors', help='train the word2vec files the rows use')
  vectors.add_argument('names', nargs='*', help=f'any of {", ".join(VECTORS)} '
                       '(default: all)')
  training = sub.add_parser('train', help='train runs, in the order given')
  training.add_argument('runs', nargs='+',
                        help='paper/row/setting, e.g. dclstm/sst2/w2v_static')
  training.add_argument('--keep_going', action='store_true',
                        help='go on with the next run after a failure')
  training.add_argument('--again', action='store_true',
                        help='train published runs afresh: their run folders move to '
                        f'{DISCARDED}/, their records stand until `publish`')
  sub.add_parser('publish', help=f'records, reports and the results section of '
                 f'{RESULTS_PAGE}')
  sub.add_parser('readme', help=f'the results section of {RESULTS_PAGE} only, from '
                 'the reports')
  args = parser.parse_args(argv)
  if args.command == 'list':
    return list_runs()
  if args.command == 'vectors':
    return make_vectors(args.names)
  if args.command == 'train':
    return train(args.runs, args.keep_going, args.again)
  if args.command == 'publish':
    return publish()
  write_readme()
  return 0


if __name__ == '__main__':
  sys.exit(main())
