"""Tests for the embedded demo dataset generator (data/demo_grammar.py)."""

import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from seedsweep.data import demo_grammar as dg  # noqa: E402

SPLITS = ('train', 'dev', 'test')
ADJECTIVES = frozenset(dg.POSITIVE_ADJECTIVES) | frozenset(dg.NEGATIVE_ADJECTIVES)


@pytest.fixture(scope='module')
def splits():
  return {name: dg.generate_split(name) for name in SPLITS}


def _deciding_and_others(tokens):
  """Index of the deciding clause and the clause list (test-side rule)."""
  clauses = dg.split_clauses(tokens)
  idx = 0
  for i, (after_but, _) in enumerate(clauses):
    if after_but:
      idx = i
  return idx, clauses


# --------------------------------------------------------------------------
# Basic contract
# --------------------------------------------------------------------------


def test_constants():
  assert dg.SPLIT_SIZES == {'train': 3000, 'dev': 500, 'test': 1000}
  assert dg.LABEL_NAMES == ('negative', 'positive')


def test_deterministic_and_sizes(splits):
  for name in SPLITS:
    again = dg.generate_split(name)
    assert again == splits[name]
    assert again is not splits[name]  # callers get their own list
    assert len(again) == dg.SPLIT_SIZES[name]
    for text, label in again:
      assert isinstance(text, str) and label in (0, 1)
      assert text == text.lower() and text == text.strip()
      assert '  ' not in text


# Loads the module by file path (not through the ``data`` package) and prints
# the dataset checksum and whether any heavy framework got imported.
_CHECKSUM_CODE = (
    'import hashlib, importlib.util, sys; '
    'spec = importlib.util.spec_from_file_location("dg", sys.argv[1]); '
    'dg = importlib.util.module_from_spec(spec); spec.loader.exec_module(dg); '
    'h = hashlib.sha256(); '
    '[h.update(f"{s}\\t{l}\\t{t}\\n".encode()) '
    ' for s in ("train", "dev", "test") for t, l in dg.generate_split(s)]; '
    'heavy = sorted(m for m in ("jax", "flax", "tensorflow", "torch") '
    '               if m in sys.modules); '
    'print(h.hexdigest(), heavy)')
# sha256 of every (split, label, text); update it only when the dataset is
# changed on purpose (results computed on the old data stop being comparable).
_EXPECTED_SHA256 = (
    'ad3124f18644c85ffd2db70e442a8a2b1f0a8f88ba8a245cf0a0103cb0ae020f')


def _checksum_in_fresh_interpreter(hash_seed):
  env = dict(os.environ, PYTHONHASHSEED=str(hash_seed))
  out = subprocess.run([sys.executable, '-c', _CHECKSUM_CODE, dg.__file__],
                       env=env, check=True, capture_output=True, text=True)
  return out.stdout.strip()


def test_identical_across_processes_and_hash_seeds(splits):
  """Same bytes in fresh interpreters with different hash seeds; numpy only."""
  h = hashlib.sha256()
  for name in SPLITS:
    for text, label in splits[name]:
      h.update(f'{name}\t{label}\t{text}\n'.encode())
  here = h.hexdigest()
  assert _checksum_in_fresh_interpreter(1) == f'{here} []'
  assert _checksum_in_fresh_interpreter(2) == f'{here} []'
  assert here == _EXPECTED_SHA256, f'dataset changed: sha256 {here}'


def test_the_demo_dataset_records_what_the_grammar_generates(splits):
  """data/demo.py's SPLIT_SHA256, against which every prepared copy is checked (a run
  on a prepared cache never enters the grammar), is each split's sha256 as the pool
  computes it; its labels and splits are the grammar's."""
  from seedsweep.data import demo  # pylint: disable=g-import-not-at-top
  from seedsweep.inputs import pool  # pylint: disable=g-import-not-at-top
  assert {name: pool.checksum(*zip(*splits[name])) for name in SPLITS} == (
      demo.SPLIT_SHA256)
  assert demo.LABEL_NAMES == dg.LABEL_NAMES
  assert tuple(demo.SPLIT_SHA256) == tuple(dg.SPLIT_SIZES) == SPLITS
  assert demo.DATASETS['demo'].expected_checksums is demo.SPLIT_SHA256


def test_unknown_split_raises():
  with pytest.raises(ValueError) as err:
    dg.generate_split('validation')
  msg = str(err.value)
  assert 'validation' in msg
  for name in SPLITS:
    assert name in msg


def test_no_duplicates_within_or_across_splits(splits):
  seen = set()
  total = 0
  for name in SPLITS:
    texts = [t for t, _ in splits[name]]
    seen.update(texts)
    total += len(texts)
  assert len(seen) == total


def test_vocabulary(splits):
  vocab = dg.VOCABULARY
  assert isinstance(vocab, tuple)
  assert 800 <= len(vocab) <= 1200
  assert len(set(vocab)) == len(vocab)
  for word in ('good', 'bad', 'not', 'never', 'but', 'movie', 'the'):
    assert word in vocab
  vocab_set = set(vocab)
  for name in SPLITS:
    for text, _ in splits[name]:
      unknown = [w for w in text.split() if w not in vocab_set]
      assert not unknown, (name, text, unknown)
  assert not set(dg.POSITIVE_ADJECTIVES) & set(dg.NEGATIVE_ADJECTIVES)


def test_lengths_and_clause_counts(splits):
  for name in SPLITS:
    for text, _ in splits[name]:
      tokens = text.split()
      assert 6 <= len(tokens) <= 40, text
      clauses = dg.split_clauses(tokens)
      assert 1 <= len(clauses) <= 3, text
      for _, clause in clauses:
        n_adj = sum(w in ADJECTIVES for w in clause)
        assert n_adj == 1, text


# --------------------------------------------------------------------------
# Labels and their statistics
# --------------------------------------------------------------------------


def test_labels_follow_rule_and_are_balanced(splits):
  for name in SPLITS:
    labels = [label for _, label in splits[name]]
    for text, label in splits[name]:
      assert label == dg.label_of(text.split()), text
    frac = float(np.mean(labels))
    assert 0.45 <= frac <= 0.55, (name, frac)
    # Majority-class baseline is therefore close to chance.
    assert max(frac, 1 - frac) <= 0.55


def test_sampling_statistics(splits):
  data = splits['train'] + splits['dev'] + splits['test']
  n_clauses = n_negated = n_multi = n_but = 0
  same, n_pairs = 0, 0
  for text, label in data:
    idx, clauses = _deciding_and_others(text.split())
    for _, clause in clauses:
      n_clauses += 1
      adj = next(i for i, w in enumerate(clause) if w in ADJECTIVES)
      n_negated += any(w in dg.NEGATORS for w in clause[:adj])
    if len(clauses) > 1:
      n_multi += 1
      n_but += 'but' in text.split()
      for j, (_, clause) in enumerate(clauses):
        if j != idx:
          n_pairs += 1
          same += dg.clause_polarity(clause) == label
  neg_rate = n_negated / n_clauses
  but_rate = n_but / n_multi
  agree = same / n_pairs
  assert 0.40 <= neg_rate <= 0.50, neg_rate
  assert 0.33 <= but_rate <= 0.47, but_rate
  # Non-deciding clauses carry no information about the label.
  assert abs(agree - 0.5) < 0.03, agree


def test_negators_also_appear_after_adjectives(splits):
  after = 0
  for text, _ in splits['train']:
    for _, clause in dg.split_clauses(text.split()):
      adj = next(i for i, w in enumerate(clause) if w in ADJECTIVES)
      after += any(w in dg.NEGATORS for w in clause[adj + 1:])
  assert after > 500


# --------------------------------------------------------------------------
# Hand-worked cases of the labelling rule
# --------------------------------------------------------------------------


@pytest.mark.parametrize('text, expected', [
    ('the plot was good', 1),
    ('the plot was bad', 0),
    # negation before the adjective flips, even with fillers in between
    ('the plot was not good', 0),
    ('the plot was not really very good', 0),
    ('the plot was never quite bad', 1),
    ('i do nt think the movie was good', 0),
    ('the acting was no longer good', 0),
    # two negators flip twice
    ('it is not true that the movie was not good', 1),
    # a negator after the adjective does not count
    ('the plot was good , not that it matters', 1),
    ('the plot was bad , never mind the music', 0),
    # without 'but' the first clause decides
    ('the plot was good and the acting was bad', 1),
    ('the plot was bad , and the acting was good ; the music was good', 0),
    ('the plot was not bad and the acting was not good', 1),
    # 'but' makes the clause after it decide
    ('the plot was good but the acting was bad', 0),
    ('the plot was bad , but the acting was not bad', 1),
    ('the plot was bad but the acting was good and the music was bad', 1),
    # the last 'but' wins
    ('the plot was good but the acting was bad ; but the music was good', 1),
    ('the plot was bad ; but the acting was good , but the ending was not good', 0),
    # a negator in an earlier clause does not reach a later one
    ('the plot was not bad but the acting was good', 1),
])
def test_label_of_hand_worked(text, expected):
  assert dg.label_of(text.split()) == expected


def test_label_of_accepts_any_sequence_and_degenerate_input():
  assert dg.label_of(('the', 'movie', 'was', 'not', 'good')) == 0
  assert dg.label_of([]) == 0
  assert dg.label_of(['the', 'movie']) == 0


def test_split_clauses():
  tokens = 'the plot was good , and the cast was bad ; but the ending was fun'
  clauses = dg.split_clauses(tokens.split())
  assert [b for b, _ in clauses] == [False, False, True]
  assert clauses[0][1] == ['the', 'plot', 'was', 'good', ',']
  assert clauses[2][1] == ['the', 'ending', 'was', 'fun']


# --------------------------------------------------------------------------
# The task needs word order: bag-of-words does poorly
# --------------------------------------------------------------------------


def _bow(data, index):
  """Sparse word-count features as COO arrays ``(rows, cols, counts)``, labels."""
  rows, cols = [], []
  for row, (text, _) in enumerate(data):
    for word in text.split():
      rows.append(row)
      cols.append(index[word])
  y = np.array([label for _, label in data], dtype=np.float64)
  return (np.array(rows), np.array(cols), np.ones(len(rows))), y


def _scores(x, w, b, n):
  rows, cols, vals = x
  return np.bincount(rows, weights=vals * w[cols], minlength=n) + b


def _fit_logreg(x, y, dim, l2=1e-3, lr=0.5, steps=400):
  """Full-batch gradient descent on L2-regularised logistic loss."""
  rows, cols, vals = x
  w = np.zeros(dim)
  b = 0.0
  for _ in range(steps):
    p = 1.0 / (1.0 + np.exp(-_scores(x, w, b, len(y))))
    g = p - y
    grad_w = np.bincount(cols, weights=vals * g[rows], minlength=dim) / len(y)
    w -= lr * (grad_w + l2 * w)
    b -= lr * float(g.mean())
  return w, b


def test_bag_of_words_logistic_regression_fails(splits):
  index = {w: i for i, w in enumerate(dg.VOCABULARY)}
  x_tr, y_tr = _bow(splits['train'], index)
  x_te, y_te = _bow(splits['test'], index)
  results = {}
  for l2 in (1e-3, 1e-2, 1e-1):  # no regularisation strength rescues it
    w, b = _fit_logreg(x_tr, y_tr, len(index), l2=l2)
    train_acc = float(np.mean((_scores(x_tr, w, b, len(y_tr)) > 0) == (y_tr > 0.5)))
    test_acc = float(np.mean((_scores(x_te, w, b, len(y_te)) > 0) == (y_te > 0.5)))
    results[l2] = (train_acc, test_acc)
    print(f'bag-of-words logistic regression (l2={l2:g}): '
          f'train acc {train_acc:.3f}, test acc {test_acc:.3f}')
  # The model does fit the training set somewhat (it is not just broken) ...
  assert results[1e-3][0] > 0.55, f'train/test acc {results}'
  # ... but cannot solve the order-dependent task.
  for l2, (_, test_acc) in results.items():
    assert test_acc < 0.85, f'bag-of-words test accuracy {test_acc:.3f} (l2={l2})'
  majority = max(float(y_te.mean()), 1 - float(y_te.mean()))
  assert abs(majority - 0.5) <= 0.05, f'majority baseline {majority:.3f}'
