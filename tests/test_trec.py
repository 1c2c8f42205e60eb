"""Tests for the TREC question-classification reader (data/trec.py)."""
import collections
import os

import pytest

from seedsweep.data import trec
from seedsweep.errors import UserError
from tests.conftest import SHARED_DATA as DATA

ROOT = os.path.join(DATA, 'trec')
needs_data = pytest.mark.skipif(not os.path.isdir(DATA),
                                reason=f'{DATA} (shared datasets) is absent')

COARSE_COUNTS = {
    'train': {'ABBR': 86, 'DESC': 1162, 'ENTY': 1250, 'HUM': 1223, 'LOC': 835,
              'NUM': 896},
    'test': {'ABBR': 9, 'DESC': 138, 'ENTY': 94, 'HUM': 65, 'LOC': 81, 'NUM': 113},
}


def _write(tmp_path, split, data: bytes):
  (tmp_path / trec.FILES[split]).write_bytes(data)
  return str(tmp_path / trec.FILES[split])


def test_labels_coarse_sorted():
  assert trec.LABELS_COARSE == tuple(sorted(trec.LABELS_COARSE))
  assert len(trec.LABELS_COARSE) == 6


def test_small_file(tmp_path):
  _write(tmp_path, 'test', b'NUM:dist How far is it ?\nHUM:desc Who was Galileo ?\r\n'
         b'LOC:city Caf\xe9 city ?\n')
  root = str(tmp_path)
  assert trec.read_split(root, 'test', fine=False) == [
      ('How far is it ?', 'NUM'), ('Who was Galileo ?', 'HUM'),
      ('Caf\u00e9 city ?', 'LOC')]
  assert [label for _, label in trec.read_split(root, 'test', fine=True)] == [
      'NUM:dist', 'HUM:desc', 'LOC:city']


@pytest.mark.parametrize('line, what', [
    (b'How far is it ?', 'is not a label'),
    (b'NUM How far is it ?', 'is not a label'),
    (b'NUM: How far ?', 'is not a label'),
    (b'FOO:bar How far ?', 'unknown coarse class'),
    (b'NUM:dist', 'empty question'),
    (b'NUM:dist   ', 'empty question'),
    (b'', 'is not a label'),
])
def test_malformed_lines_name_file_and_line(tmp_path, line, what):
  path = _write(tmp_path, 'train', b'DESC:def What is e-coli ?\n' + line + b'\n')
  with pytest.raises(UserError, match=what) as e:
    trec.read_split(str(tmp_path), 'train', fine=True)
  assert f'{path}:2:' in str(e.value)


def test_missing_file_names_path_and_source(tmp_path):
  for split, name in (('train', 'train_5500.label'), ('test', 'TREC_10.label')):
    with pytest.raises(UserError) as e:
      trec.read_split(str(tmp_path), split, fine=False)
    assert os.path.join(str(tmp_path), name) in str(e.value)
    assert 'Li & Roth' in str(e.value)
    assert 'https://cogcomp.seas.upenn.edu/Data/QA/QC/' in str(e.value)


def test_unknown_split():
  with pytest.raises(ValueError, match='dev'):
    trec.read_split('.', 'dev', fine=False)


@needs_data
@pytest.mark.parametrize('split, size', [('train', 5452), ('test', 500)])
def test_sizes_and_coarse_counts(split, size):
  examples = trec.read_split(ROOT, split, fine=False)
  assert len(examples) == size
  counts = collections.Counter(label for _, label in examples)
  assert dict(counts) == COARSE_COUNTS[split]
  fine = trec.read_split(ROOT, split, fine=True)
  assert [t for t, _ in fine] == [t for t, _ in examples]
  assert [label.split(':')[0] for _, label in fine] == [label for _, label in examples]
  assert len({label for _, label in fine}) == {'train': 50, 'test': 42}[split]


@needs_data
def test_fine_labels():
  labels = trec.fine_labels(ROOT)
  assert len(labels) == 50 and labels == tuple(sorted(labels))
  assert {label.split(':')[0] for label in labels} == set(trec.LABELS_COARSE)
  assert {'LOC:city', 'HUM:desc', 'DESC:desc', 'NUM:dist'} <= set(labels)
  test_labels = {label for _, label in trec.read_split(ROOT, 'test', fine=True)}
  assert test_labels <= set(labels)


@needs_data
def test_latin1_line_and_original_tokens():
  train = trec.read_split(ROOT, 'train', fine=True)
  text, label = train[65]  # line 66
  assert label == 'LOC:city'
  assert 'sister\u00f0city' in text.split(' ')
  assert train[79][0].endswith('for 1 , CD NNS IN NNP NNP NNP .')  # kept as in the file
  test = trec.read_split(ROOT, 'test', fine=False)
  assert test[-1] == ('What is e-coli ?', 'DESC')
  assert all(t and t == t.strip(' ') and '  ' not in t for t, _ in train + test)
