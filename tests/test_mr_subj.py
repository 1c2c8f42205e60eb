"""Tests of the MR and Subj raw-file readers (data/mr.py, data/subj.py)."""
import collections
import os

import numpy as np
import pytest

from seedsweep.data import mr
from seedsweep.data import subj
from seedsweep.errors import UserError
from seedsweep.inputs import folds
from tests.conftest import SHARED_DATA as DATA


def _real(name):
  if not os.path.isdir(DATA):
    pytest.skip(f'no shared data folder at {DATA}')
  return os.path.join(DATA, name)


def _check_clean(examples):
  for text, _ in examples:
    assert text and text == text.strip(' \r\n') and '\n' not in text


def test_mr_counts_order_and_text():
  examples = mr.read_all(_real('mr'))
  assert len(examples) == 10662
  labels = [label for _, label in examples]
  assert labels == [0] * 5331 + [1] * 5331
  assert mr.LABEL_NAMES == ('negative', 'positive')
  assert examples[0] == ('simplistic , silly and tedious .', 0)
  assert examples[5331][0].startswith('the rock is destined to be the 21st century\'s')
  assert examples[5331][0].endswith('steven segal .')
  assert examples[-1] == ('provides a porthole into that noble , trembling incoherence '
                          'that defines us all .', 1)
  _check_clean(examples)
  chars = collections.Counter(c for text, _ in examples for c in text if ord(c) > 127)
  # cp1252, not latin-1: 0x97 is an em dash and 0x85 an ellipsis.
  assert chars['é'] > 0 and chars['—'] > 0 and chars['…'] > 0
  assert not any(0x80 <= ord(c) < 0xA0 for c in chars)
  assert sum(chars.values()) == 181 + 169  # the README's non-ASCII byte counts


def test_subj_counts_order_and_text():
  examples = subj.read_all(_real('subj'))
  assert len(examples) == 10000
  assert [label for _, label in examples] == [0] * 5000 + [1] * 5000
  assert subj.LABEL_NAMES == ('objective', 'subjective')
  assert examples[0] == ('the movie begins in the past where a young boy named sam '
                         'attempts to save celebi from a hunter .', 0)
  assert examples[5000] == ('smart and alert , thirteen conversations about one thing '
                            'is a small gem .', 1)
  _check_clean(examples)
  assert min(len(text.split(' ')) for text, _ in examples) >= 10
  assert any('nine ½ weeks' in text for text, label in examples if label == 1)
  chars = collections.Counter(c for text, _ in examples for c in text if ord(c) > 127)
  assert sum(chars.values()) == 179
  assert not any(0x80 <= ord(c) < 0xA0 for c in chars)


def test_stratified_mr_folds_are_balanced():
  labels = np.array([label for _, label in mr.read_all(_real('mr'))])
  ids = folds.cv_folds(len(labels), 10, seed=0, labels=labels)
  for f in range(10):
    _, test = folds.split_fold(ids, f)
    assert len(test) in (1066, 1067)
    assert abs(int(labels[test].sum()) * 2 - len(test)) <= 1


def test_decode_cp1252_never_fails():
  assert mr.decode_cp1252(b'caf\xe9 \x97 \x85 \x80') == 'café — … €'
  # Bytes cp1252 leaves undefined decode as latin-1.
  assert mr.decode_cp1252(bytes([0x81, 0x8D, 0x8F, 0x90, 0x9D])) == '\x81\x8d\x8f\x90\x9d'
  every = bytes(range(256))
  assert len(mr.decode_cp1252(every)) == 256


def _write(tmp_path, name, data):
  path = tmp_path / name
  path.write_bytes(data)
  return str(path)


def test_read_lines_splits_on_newline_bytes_only(tmp_path):
  path = _write(tmp_path, 'x', b'one \x85 two \nthree\r\n four \n')
  assert mr.read_lines(path) == ['one \u2026 two', 'three', 'four']
  path = _write(tmp_path, 'y', b'no final newline ')
  assert mr.read_lines(path) == ['no final newline']


def test_empty_line_is_a_user_error(tmp_path):
  path = _write(tmp_path, 'rt-polarity.neg', b'good .\n \nbad .\n')
  with pytest.raises(UserError, match=r'rt-polarity\.neg:2: empty line'):
    mr.read_lines(path)


def test_missing_file_names_the_expected_path(tmp_path):
  _write(tmp_path, 'rt-polarity.neg', b'bad .\n')
  with pytest.raises(UserError, match=r'rt-polarity\.pos: file not found'):
    mr.read_all(str(tmp_path))
  with pytest.raises(UserError, match=r'plot\.tok\.gt9\.5000: file not found'):
    subj.read_all(str(tmp_path))


def test_small_files_read_in_documented_order(tmp_path):
  _write(tmp_path, 'plot.tok.gt9.5000', b'p1 \np2 \n')
  _write(tmp_path, 'quote.tok.gt9.5000', b'q1 \xe9 \n')
  assert subj.read_all(str(tmp_path)) == [('p1', 0), ('p2', 0), ('q1 é', 1)]
