"""Tests for the pretrained word-vector loaders (inputs/vectors.py), on small files."""
import gzip
import hashlib
import json
import os
import zipfile

import numpy as np
import pytest

from seedsweep.inputs import vectors
from seedsweep.errors import UserError

DIM = 3
# The lines of every test file, in order: 'caf\u00e9' checks UTF-8; the second 'dup' and
# 'The' after 'the' check that the first occurrence wins.
LINES = [('the', [0.5, -1.25, 3.0]), ('caf\u00e9', [1e-3, 2.5e4, -7.1]),
         ('dup', [1.0, 2.0, 3.0]), ('The', [9.0, 8.0, 7.0]), ('dup', [-4.0, -5.0, -6.0]),
         ('cat', [0.125, 0.25, 0.375])]
VECS = {}
for _w, _v in LINES:
  VECS.setdefault(_w, _v)
WORDS = ('<pad>', '<unk>', 'the', 'missing', 'caf\u00e9', 'dup', 'cat', 'The')


def _text_lines(header: bool, trailing_space: bool = False) -> bytes:
  end = ' \n' if trailing_space else '\n'
  out = [f'{len(LINES)} {DIM}\n'] if header else []
  out += [w + ' ' + ' '.join(repr(float(x)) for x in v) + end for w, v in LINES]
  return ''.join(out).encode('utf-8')


def _binary(newline: bool) -> bytes:
  out = [f'{len(LINES)} {DIM}\n'.encode()]
  for w, v in LINES:
    out.append(w.encode('utf-8') + b' ' + np.asarray(v, '<f4').tobytes() +
               (b'\n' if newline else b''))
  return b''.join(out)


def _write(tmp_path, name, data: bytes) -> str:
  path = tmp_path / name
  if name.endswith('.gz'):
    data = gzip.compress(data)
  if name.endswith('.zip'):
    with zipfile.ZipFile(path, 'w') as z:
      z.writestr('glove.6B.3d.txt', data)
  else:
    path.write_bytes(data)
  return str(path)


FILES = {  # name -> (bytes, format detected)
    'glove.txt': (_text_lines(False), 'glove'),
    'glove.txt.gz': (_text_lines(False), 'glove'),
    'glove.zip': (_text_lines(False), 'glove'),
    'w2v.txt': (_text_lines(True, trailing_space=True), 'word2vec_text'),
    'w2v.txt.gz': (_text_lines(True), 'word2vec_text'),
    'w2v_nl.bin': (_binary(True), 'word2vec_binary'),
    'w2v_no_nl.bin': (_binary(False), 'word2vec_binary'),
    'w2v_nl.bin.gz': (_binary(True), 'word2vec_binary'),
    'w2v_binary_unnamed.vec': (_binary(False), 'word2vec_binary'),
}


def _expected(word):
  return np.asarray(VECS[word], np.float32)


@pytest.mark.parametrize('name', sorted(FILES))
def test_every_format_loads_written_vectors(tmp_path, name):
  data, fmt = FILES[name]
  path = _write(tmp_path, name, data)
  assert vectors.detect_format(path) == fmt
  for given in (None, fmt):
    matrix, found = vectors.load_vectors(path, WORDS, fmt=given)
    assert matrix.dtype == np.float32 and matrix.shape == (len(WORDS), DIM)
    assert found.tolist() == [False, False, True, False, True, True, True, True]
    for i, w in enumerate(WORDS):
      want = _expected(w) if found[i] else np.zeros(DIM, np.float32)
      np.testing.assert_array_equal(matrix[i], want, err_msg=w)


def test_duplicates_first_wins_and_repeated_words(tmp_path):
  path = _write(tmp_path, 'g.txt', _text_lines(False))
  matrix, found = vectors.load_vectors(path, ['dup', 'x', 'dup'])
  assert found.tolist() == [True, False, True]
  np.testing.assert_array_equal(matrix[[0, 2]], [VECS['dup']] * 2)
  assert not matrix[1].any()


@pytest.mark.parametrize('name', ['glove.txt', 'w2v_nl.bin'])
def test_lowercase_matches_lowered_file_words_first_wins(tmp_path, name):
  path = _write(tmp_path, name, FILES[name][0])
  matrix, found = vectors.load_vectors(path, ['the', 'caf\u00e9', 'cat'], lowercase=True)
  assert found.all()
  np.testing.assert_array_equal(matrix[0], VECS['the'])  # 'the' precedes 'The'
  # 'The' first: lower-cased it takes 'the'; without lowercase only the exact word.
  path2 = _write(tmp_path, 'upper.txt', b'The 1 2 3\nthe 4 5 6\nCAF\xc3\x89 7 8 9\n')
  matrix, found = vectors.load_vectors(path2, ['the', 'caf\u00e9', 'The'], lowercase=True)
  np.testing.assert_array_equal(matrix, [[1, 2, 3], [7, 8, 9], [0, 0, 0]])
  assert found.tolist() == [True, True, False]
  matrix, found = vectors.load_vectors(path2, ['the', 'caf\u00e9', 'The'])
  np.testing.assert_array_equal(matrix, [[4, 5, 6], [0, 0, 0], [1, 2, 3]])


def test_glove_word_with_spaces(tmp_path):
  path = _write(tmp_path, 'g840.txt',
                b', 0.1 0.2\n. . . 1 2\nat&t .com 3 4\n\xc2\xa0 5 6\nx 7 8\r\n')
  matrix, found = vectors.load_vectors(path, ['. . .', 'at&t .com', '.', '\u00a0', 'x'])
  assert found.tolist() == [True, True, False, True, True]
  np.testing.assert_array_equal(matrix, [[1, 2], [3, 4], [0, 0], [5, 6], [7, 8]])


@pytest.mark.parametrize('name, data, line, what', [
    ('few.txt', b'a 1 2 3\nb 1 2\nc 1 2 3\n', 2, 'expected a word and 3 float values'),
    ('nonfloat.txt', b'a 1 2 3\nb 1 x 3\n', 2, "got b'x'"),
    ('w2v_dim.txt', b'2 3\na 1 2 3\nb 1 2\n', 3, 'the dim of the header'),
    ('header.txt.gz', b'2 x\na 1 2 3\n', 1, None),
    ('nonfloat.zip', b'a 1 2 3\n\nb 1 2 3\nc 1.5.5 3 4\n', 4, 'float values'),
])
def test_malformed_lines_name_file_and_line(tmp_path, name, data, line, what):
  path = _write(tmp_path, name, data)
  fmt = 'word2vec_text' if name.startswith(('w2v', 'header')) else None
  with pytest.raises(UserError, match=f'line {line}: ') as e:
    vectors.load_vectors(path, ['a', 'b', 'c'], fmt=fmt)
  assert path in str(e.value)
  if what:
    assert what in str(e.value)


def test_bad_values_on_unwanted_lines_are_not_parsed(tmp_path):
  path = _write(tmp_path, 'g.txt', b'a 1 2\nb x y\n')  # only wanted lines are converted
  matrix, found = vectors.load_vectors(path, ['a'])
  np.testing.assert_array_equal(matrix, [[1, 2]])


def test_missing_and_empty_files(tmp_path):
  missing = str(tmp_path / 'glove.840B.300d.txt')
  for call in (lambda: vectors.load_vectors(missing, ['a']),
               lambda: vectors.load_vectors_cached(missing, ['a'], str(tmp_path / 'c'))):
    with pytest.raises(UserError) as e:
      call()
    assert missing in str(e.value)
    assert vectors.GLOVE_URL in str(e.value) and vectors.WORD2VEC_URL in str(e.value)
  with pytest.raises(UserError, match='empty'):
    vectors.load_vectors(_write(tmp_path, 'e.txt', b'\n'), ['a'])
  with pytest.raises(UserError, match='one .txt'):
    path = str(tmp_path / 'two.zip')
    with zipfile.ZipFile(path, 'w') as z:
      z.writestr('a.txt', b'a 1\n')
      z.writestr('b.txt', b'b 1\n')
    vectors.load_vectors(path, ['a'])
  with pytest.raises(UserError, match='expected one of'):
    vectors.load_vectors(_write(tmp_path, 'g.txt', b'a 1\n'), ['a'], fmt='fasttext')


@pytest.mark.parametrize('cut, first_complete', [(5, False), (20, True), (-2, True)])
def test_truncated_binary(tmp_path, cut, first_complete):
  data = _binary(newline=True)
  path = _write(tmp_path, 'short.bin', data[:cut])
  with pytest.raises(UserError, match='truncated') as e:
    vectors.load_vectors(path, ['cat', 'nowhere'])
  assert path in str(e.value)
  if first_complete:  # words all found before the cut: no need to read on
    matrix, found = vectors.load_vectors(path, ['the'])
    np.testing.assert_array_equal(matrix[0], VECS['the'])


def test_truncated_gzip_and_word2vec_text(tmp_path):
  path = tmp_path / 'short.bin.gz'
  path.write_bytes(gzip.compress(_binary(True))[:-12])
  with pytest.raises(UserError, match='truncated'):
    vectors.load_vectors(str(path), ['nowhere'])
  path.write_bytes(b'\x1f\x8b' + b'not gzip' * 4)
  for fmt in (None, 'glove'):
    with pytest.raises(UserError, match='damaged'):
      vectors.load_vectors(str(path), ['a'], fmt=fmt)
  path = _write(tmp_path, 'w2v.txt', b'5 2\na 1 2\nb 3 4\n')
  with pytest.raises(UserError, match='promises 5 vectors, the file holds 2'):
    vectors.load_vectors(path, ['nowhere'])


def test_file_record_names_the_file_and_what_trained_it(tmp_path, monkeypatch):
  path = _write(tmp_path, 'w2v.txt', b'2 3\nthe 1 2 3\ncat 4 5 6\n')
  digest = hashlib.sha256(open(path, 'rb').read()).hexdigest()
  cache = str(tmp_path / 'cache')
  record = vectors.file_record(path, cache)
  assert record == {'path': os.path.abspath(path), 'bytes': 24, 'sha256': digest}
  # word2vec's own record beside the file joins it, but only for the file it describes.
  trained = {'sha256': digest, 'corpus': {'name': 'imdb'}, 'hyperparameters': {'dim': 3},
             'versions': {'gensim': 'x'}, 'seconds': {'total': 1.0}}
  with open(path + '.json', 'w') as f:
    json.dump(trained, f)
  assert vectors.file_record(path, cache)['trained_by'] == {
      'corpus': {'name': 'imdb'}, 'hyperparameters': {'dim': 3}, 'versions': {'gensim': 'x'}}
  with open(path + '.json', 'w') as f:
    json.dump(dict(trained, sha256='0' * 64), f)
  assert 'trained_by' not in vectors.file_record(path, cache)
  # The digest is hashed once per (path, size, mtime); a rewritten file is hashed again.
  monkeypatch.setattr(vectors.raw_lib, 'sha256_file', lambda p: 1 / 0)
  assert vectors.file_record(path, cache)['sha256'] == digest
  _write(tmp_path, 'w2v.txt', b'1 3\nthe 1 2 3\n')
  monkeypatch.undo()
  assert vectors.file_record(path, cache)['sha256'] == hashlib.sha256(
      b'1 3\nthe 1 2 3\n').hexdigest()
  with pytest.raises(UserError, match='no such vectors file'):
    vectors.file_record(str(tmp_path / 'nowhere.txt'), cache)


def test_cache_reused_and_invalidated(tmp_path, monkeypatch, capsys):
  path = _write(tmp_path, 'glove.txt', _text_lines(False))
  cache = str(tmp_path / 'cache')
  first = vectors.load_vectors_cached(path, WORDS, cache)
  np.testing.assert_array_equal(first[0], vectors.load_vectors(path, WORDS)[0])
  assert len([f for f in os.listdir(cache) if f.endswith('.npz')]) == 1
  assert not [f for f in os.listdir(cache) if f.endswith('.tmp')]

  def no_reading(*args, **kwargs):
    raise AssertionError('the vectors file was read again')

  monkeypatch.setattr(vectors, '_open', no_reading)
  again = vectors.load_vectors_cached(path, WORDS, cache)
  np.testing.assert_array_equal(again[0], first[0])
  np.testing.assert_array_equal(again[1], first[1])
  assert again[0].dtype == np.float32 and again[1].dtype == bool
  for changed in [dict(words=WORDS[:-1]), dict(lowercase=True), dict(fmt='glove')]:
    with pytest.raises(AssertionError, match='read again'):
      vectors.load_vectors_cached(path, changed.pop('words', WORDS), cache, **changed)
  monkeypatch.undo()
  # Rewriting the file (new size and mtime) misses the cache.
  _write(tmp_path, 'glove.txt', b'the 4 5 6\n')
  os.utime(path, ns=(1, 1))
  matrix, found = vectors.load_vectors_cached(path, ['the', 'cat'], cache)
  np.testing.assert_array_equal(matrix, [[4, 5, 6], [0, 0, 0]])
  # A damaged entry is recomputed.
  key = vectors.cache_key(path, ['the', 'cat'])
  entry = os.path.join(cache, f'glove.txt.{key}.npz')
  with open(entry, 'wb') as f:
    f.write(b'garbage')
  matrix, _ = vectors.load_vectors_cached(path, ['the', 'cat'], cache)
  np.testing.assert_array_equal(matrix, [[4, 5, 6], [0, 0, 0]])
  with np.load(entry) as z:
    assert str(z['key']) == key
  # Bytes flipped inside the matrix (a bad disk): the zip's CRC-32 catches them; one
  # line says so and the entry is rebuilt, never read as vectors.
  body = bytearray(open(entry, 'rb').read())
  offset = bytes(body).index(np.float32(5).tobytes())
  body[offset:offset + 4] = np.float32(7).tobytes()
  with open(entry, 'wb') as f:
    f.write(bytes(body))
  matrix, _ = vectors.load_vectors_cached(path, ['the', 'cat'], cache)
  np.testing.assert_array_equal(matrix, [[4, 5, 6], [0, 0, 0]])
  assert 'the vectors cache' in capsys.readouterr().err


def test_embedding_matrix_policies():
  words = ('<pad>', '<unk>', 'a', 'b', 'c')
  vecs = np.arange(15, dtype=np.float32).reshape(5, 3) + 1
  found = np.array([True, False, True, False, True])
  zero = vectors.embedding_matrix(words, vecs, found, oov='zero')
  assert zero.dtype == np.float32
  np.testing.assert_array_equal(zero, [[0] * 3, [0] * 3, vecs[2], [0] * 3, vecs[4]])
  rand = vectors.embedding_matrix(words, vecs, found, scale=0.1, rng_seed=3)
  assert rand.dtype == np.float32
  np.testing.assert_array_equal(rand, vectors.embedding_matrix(words, vecs, found,
                                                               scale=0.1, rng_seed=3))
  assert not rand[0].any()
  np.testing.assert_array_equal(rand[[2, 4]], vecs[[2, 4]])
  table = np.random.default_rng(3).uniform(-0.1, 0.1, (5, 3)).astype(np.float32)
  np.testing.assert_array_equal(rand[[1, 3]], table[[1, 3]])
  assert np.abs(rand[[1, 3]]).max() <= 0.1 and np.abs(rand[[1, 3]]).min() > 0
  other = vectors.embedding_matrix(words, vecs, found, scale=0.1, rng_seed=4)
  assert not np.array_equal(other[1], rand[1])
  # The <unk> row takes a pretrained vector when there is one; <pad> never does.
  all_found = vectors.embedding_matrix(words, vecs, np.ones(5, bool))
  np.testing.assert_array_equal(all_found[1:], vecs[1:])
  assert not all_found[0].any()
  with pytest.raises(UserError, match='expected one of'):
    vectors.embedding_matrix(words, vecs, found, oov='normal')


def test_vocabulary_round_trip(tmp_path):
  from seedsweep.inputs.vocabulary import Vocabulary  # pylint: disable=g-import-not-at-top
  vocab = Vocabulary.build([['the', 'cat', 'sat'], ['the', 'dog']])
  path = _write(tmp_path, 'glove.txt.gz', _text_lines(False))
  matrix, found = vectors.load_vectors(path, vocab.words)
  table = vectors.embedding_matrix(vocab.words, matrix, found)
  index = vocab.index
  np.testing.assert_array_equal(table[index['the']], VECS['the'])
  np.testing.assert_array_equal(table[index['cat']], VECS['cat'])
  assert table.shape == (len(vocab), DIM) and not table[0].any()
