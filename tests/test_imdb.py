"""Tests of the IMDB archive reader and tokenizer (data/imdb.py)."""
import collections
import io
import os
import tarfile

import pytest

from seedsweep.data import imdb
from seedsweep.errors import UserError
from tests.conftest import SHARED_DATA as DATA


@pytest.fixture(scope='module')
def real():
  """Both splits with ratings, each read from the archive once per session."""
  if not os.path.isdir(DATA):
    pytest.skip(f'no shared data folder at {DATA}')
  root = os.path.join(DATA, 'imdb')
  return {split: imdb.read_split_with_ratings(root, split) for split in imdb.SPLITS}


@pytest.mark.slow
@pytest.mark.full  # IMDB whole; the README tier reads a small archive
def test_counts_and_rating_distribution(real):
  expected = {
      ('train', 1): {7: 2496, 8: 3009, 9: 2263, 10: 4732},
      ('train', 0): {1: 5100, 2: 2284, 3: 2420, 4: 2696},
      ('test', 1): {7: 2307, 8: 2850, 9: 2344, 10: 4999},
      ('test', 0): {1: 5022, 2: 2302, 3: 2541, 4: 2635},
  }
  for split, examples in real.items():
    assert len(examples) == imdb.NUM_PER_SPLIT == 25000
    for label in (0, 1):
      ratings = [r for _, l, r in examples if l == label]
      assert len(ratings) == 12500
      assert dict(collections.Counter(ratings)) == expected[split, label]


@pytest.mark.slow
@pytest.mark.full  # IMDB whole; the README tier reads a small archive
def test_order_and_text(real):
  train, test = real['train'], real['test']
  # Sorted by member name: neg/ before pos/, ids in string order (0, 1, 10, 100, ...).
  assert [l for _, l, _ in test] == [0] * 12500 + [1] * 12500
  assert test[0][0].startswith('Once again Mr. Costner has dragged out a movie for far '
                               'longer than necessary.')
  assert test[0][2] == 2
  assert train[12500][0].startswith('Bromwell High is a cartoon comedy.')
  assert not any('<br' in text.lower() for split in real.values() for text, _, _ in split)


def test_tokenize_cases():
  assert imdb.tokenize("I don't like it.<br /><br />Well-made, though!") == [
      'I', "don't", 'like', 'it', '.', 'Well-made', ',', 'though', '!']
  assert imdb.tokenize('U.S. films, e.g. "Jaws"... 7.5/10 (1,000 votes)') == [
      'U.S.', 'films', ',', 'e.g.', '"', 'Jaws', '"', '.', '.', '.', '7.5', '/', '10',
      '(', '1,000', 'votes', ')']
  # Unicode whitespace separates; U+0085 is an ellipsis; case is kept.
  assert imdb.tokenize('A\xa0b\tc\x85d  E') == ['A', 'b', 'c', '\u2026', 'd', 'E']
  assert imdb.tokenize("students' <3 it\u2019s") == [
      'students', "'", '<', '3', 'it\u2019s']
  assert imdb.tokenize('') == [] and imdb.tokenize(' <br/> ') == []
  assert imdb.token_text('Good.<BR>Bad!') == 'Good . Bad !'


@pytest.mark.slow
@pytest.mark.full  # IMDB whole; the README tier reads a small archive
def test_tokens_have_no_spaces(real):
  for text, _, _ in real['test'][:2000]:
    out = imdb.token_text(text)
    assert out == ' '.join(out.split()) and all(t for t in out.split(' '))


def test_parse_member():
  assert imdb.parse_member('aclImdb/train/pos/12_9.txt') == ('train', 1, 12, 9)
  assert imdb.parse_member('aclImdb/test/neg/0_2.txt') == ('test', 0, 0, 2)
  with pytest.raises(ValueError):
    imdb.parse_member('aclImdb/train/urls_pos.txt')


def _tar(tmp_path, members):
  buf = io.BytesIO()
  with tarfile.open(fileobj=buf, mode='w:gz') as tar:
    for name, data in members.items():
      info = tarfile.TarInfo(name)
      info.size = len(data)
      tar.addfile(info, io.BytesIO(data))
  (tmp_path / imdb.ARCHIVE).write_bytes(buf.getvalue())
  return str(tmp_path)


def test_small_archive(tmp_path):
  root = _tar(tmp_path, {
      'aclImdb/train/pos/10_8.txt': 'Grand<br />film \u00e9'.encode('utf-8'),
      'aclImdb/train/neg/3_1.txt': b'Bad.',
      'aclImdb/train/pos/2_10.txt': b'Top',
      'aclImdb/test/neg/0_4.txt': b'Meh',
      'aclImdb/train/urls_pos.txt': b'http://x',
  })
  assert imdb.read_split_with_ratings(root, 'train') == [
      ('Bad.', 0, 1), ('Grand film \u00e9', 1, 8), ('Top', 1, 10)]
  assert imdb.read_split(root, 'test') == [('Meh', 0)]


def test_errors(tmp_path):
  with pytest.raises(UserError, match=r'aclImdb_labeled\.tar\.gz: file not found'):
    imdb.read_split(str(tmp_path), 'train')
  with pytest.raises(UserError, match="'dev'.*expected one of"):
    imdb.read_split(str(tmp_path), 'dev')
  (tmp_path / imdb.ARCHIVE).write_bytes(b'not a tar')
  with pytest.raises(UserError, match='cannot be read as a .tar.gz'):
    imdb.read_split(str(tmp_path), 'train')
  root = _tar(tmp_path, {f'aclImdb/train/pos/{i}_9.txt': os.urandom(2000).hex().encode()
                         for i in range(20)})
  path = tmp_path / imdb.ARCHIVE
  data = path.read_bytes()
  path.write_bytes(data[:len(data) // 2])  # truncated
  with pytest.raises(UserError, match='cannot be read as a .tar.gz'):
    imdb.read_split(root, 'train')
  root = _tar(tmp_path, {'aclImdb/train/pos/1_9.txt': b'\xff'})
  with pytest.raises(UserError, match=r'pos/1_9\.txt is not valid UTF-8'):
    imdb.read_split(root, 'train')
  with pytest.raises(UserError, match=r'no aclImdb/test/'):
    imdb.read_split(root, 'test')
