"""Pretrained word vectors (GloVe, word2vec) streamed into a vocabulary's embedding table.

``load_vectors(path, vocab.words)`` reads a vectors file once, line by line (record by
record for word2vec binary), and keeps only the vectors of the requested words, so its
memory is bounded by the kept vectors, never by the file (GloVe 840B is 5.6 GB).
``load_vectors_cached`` stores that filtered matrix as an .npz and reuses it;
``embedding_matrix`` turns it into the initial embedding table [V, d].

Formats: 'glove' (``word v1 ... vd`` lines), 'word2vec_text' (a ``count dim`` header,
then such lines) and 'word2vec_binary'; plain, gzip or a zip of one member, detected
from the bytes (:func:`detect_format`). The rule: a word matches as UTF-8 bytes and
its first occurrence in the file wins (:func:`load_vectors`).
"""
import contextlib
import gzip
import hashlib
import json
import os
import zipfile
import zlib
from typing import BinaryIO, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from seedsweep import files
from seedsweep import notices
from seedsweep.inputs import raw as raw_lib
from seedsweep.errors import UserError

FORMATS = ('glove', 'word2vec_text', 'word2vec_binary')
OOV_INITS = ('random', 'zero')
GLOVE_URL = 'https://nlp.stanford.edu/projects/glove/'
WORD2VEC_URL = 'https://code.google.com/archive/p/word2vec/'

_CHUNK = 1 << 20  # binary records are read in chunks of this many bytes
_MAX_WORD_BYTES = 1 << 16  # a binary record whose word exceeds this is malformed
_SNIFF_BYTES = 1 << 16
_FLOAT_TEXT = frozenset(b'0123456789+-.eE \t\r\n')
_BOM = b'\xef\xbb\xbf'
_CACHE_VERSION = 1  # bump when the cached arrays' meaning changes


def _missing(path: str) -> UserError:
  return UserError(
      f'{path}: no such vectors file. Download pretrained vectors, e.g. GloVe '
      f'(glove.840B.300d.zip) from {GLOVE_URL} or word2vec GoogleNews '
      f'(GoogleNews-vectors-negative300.bin.gz) from {WORD2VEC_URL}, and pass its path.')


@contextlib.contextmanager
def _open(path: str) -> Iterator[Tuple[BinaryIO, str]]:
  """Yields (a binary stream of the decompressed contents, a name for messages)."""
  if not os.path.isfile(path):
    raise _missing(path)
  with open(path, 'rb') as f:
    magic = f.read(4)
  if magic[:2] == b'\x1f\x8b':
    with gzip.open(path, 'rb') as stream:
      yield stream, path
  elif magic == b'PK\x03\x04':
    try:
      archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile as e:
      raise UserError(f'{path}: not a readable zip file ({e})') from e
    with archive:
      members = [m.filename for m in archive.infolist() if not m.is_dir()]
      texts = [m for m in members if m.lower().endswith('.txt')]
      chosen = texts if len(texts) == 1 else members if len(members) == 1 else []
      if not chosen:
        raise UserError(f'{path}: expected a zip holding one .txt vectors file; '
                        f'it holds {members}')
      with archive.open(chosen[0]) as stream:
        yield stream, f'{path}[{chosen[0]}]'
  else:
    with open(path, 'rb', buffering=_CHUNK) as stream:
      yield stream, path


def _parse_header(line: bytes, where: str) -> Tuple[int, int]:
  """``count dim`` -> (count, dim), or UserError naming line 1."""
  fields = line.strip().split()
  try:
    count, dim = (int(f) for f in fields)
    if count < 0 or dim < 1:
      raise ValueError
  except ValueError:
    raise UserError(f'{where} line 1: expected a word2vec header "count dim" (two '
                    f'integers, dim >= 1), got {line[:80]!r}') from None
  return count, dim


def _is_header(line: bytes) -> bool:
  fields = line.strip().split()
  return len(fields) == 2 and all(f.isdigit() for f in fields)


def detect_format(path: str) -> str:
  """The format of a vectors file: 'glove', 'word2vec_text' or 'word2vec_binary'.

  1. a name ending in ``.bin`` (or ``.bin.gz``) is 'word2vec_binary';
  2. otherwise, a first line of exactly two integers ``count dim`` is a word2vec
     header: the file is 'word2vec_text' if its second line ends in ``dim``
     space-separated fields of float text (digits, sign, '.', 'e'), else
     'word2vec_binary';
  3. anything else is 'glove' (its first line gives ``dim``).

  Pass ``fmt`` to :func:`load_vectors` for a GloVe file whose first line is two
  integers.
  """
  path = os.fspath(path)
  files.refuse_folder(path, 'config.data.vectors.path', 'a vectors file')
  name = path.lower()
  if name.endswith('.gz'):
    name = name[:-3]
  if name.endswith('.bin'):
    if not os.path.isfile(path):
      raise _missing(path)
    return 'word2vec_binary'
  with _open(path) as (stream, where):
    try:
      head = stream.readline(_SNIFF_BYTES)
      if not _is_header(head.removeprefix(_BOM)):
        return 'glove'
      dim = int(head.split()[1])
      sample = stream.read(_SNIFF_BYTES)
    except (OSError, EOFError, zlib.error) as e:
      raise UserError(f'{where}: could not read the vectors file ({e}); it is damaged '
                      f'or truncated') from e
  if not sample.strip():
    return 'word2vec_text'
  fields = sample.split(b'\n', 1)[0].rstrip(b' \r').rsplit(b' ', dim)
  text = len(fields) == dim + 1 and all(_FLOAT_TEXT.issuperset(f) for f in fields[1:])
  return 'word2vec_text' if text else 'word2vec_binary'


class _Wanted:
  """The requested words: ``index`` utf-8 bytes -> row of the unique-word table."""

  def __init__(self, words: Sequence[str], lowercase: bool):
    if isinstance(words, (str, bytes)):
      raise TypeError('words must be a sequence of strings, not one string')
    self.index: Dict[bytes, int] = {}
    self.rows: List[int] = []
    for w in words:
      if not isinstance(w, str):
        raise TypeError(f'words must be strings; got {type(w).__name__} {w!r}')
      self.rows.append(self.index.setdefault(w.encode('utf-8', 'surrogatepass'),
                                             len(self.index)))
    self.lowercase = lowercase
    self.table: Optional[np.ndarray] = None
    self.found: Optional[np.ndarray] = None
    self.remaining = len(self.index)

  def start(self, dim: int):
    """Makes the zero table ``[unique words, dim]`` float32 and the found mask
    ``[unique words]`` once the file's dimension is known."""
    self.table = np.zeros((len(self.index), dim), np.float32)
    self.found = np.zeros(len(self.index), bool)

  def key(self, word: bytes) -> bytes:
    """The lookup key of a word of the file: lower-cased (as UTF-8) when ``lowercase``."""
    if not self.lowercase:
      return word
    if word.isascii():
      return word.lower()
    return word.decode('utf-8', 'replace').lower().encode('utf-8', 'surrogatepass')

  def result(self) -> Tuple[np.ndarray, np.ndarray]:
    """``(table float32 [words, dim], found bool [words])`` in the order the words were
    requested, repeats included."""
    if len(self.rows) == len(self.index):  # no repeated words: rows are 0..n-1
      return self.table, self.found
    return self.table[self.rows], self.found[self.rows]


def _floats(fields: List[bytes], where: str, lineno: int, dim: int) -> np.ndarray:
  try:
    return np.array(fields, np.float64).astype(np.float32)
  except ValueError:
    for f in fields:
      try:
        float(f)
      except ValueError:
        raise UserError(f'{where} line {lineno}: expected {dim} float values after '
                        f'the word, got {f[:40]!r}') from None
    raise


def _read_text(stream: BinaryIO, where: str, wanted: _Wanted,
               header: bool) -> int:
  """Reads GloVe / word2vec text lines into ``wanted``; returns dim."""
  lineno, dim, count = 0, None, None
  if header:
    lineno = 1
    count, dim = _parse_header(stream.readline(_SNIFF_BYTES).removeprefix(_BOM), where)
    wanted.start(dim)
  index, found, table = wanted.index, wanted.found, wanted.table
  key = wanted.key if wanted.lowercase else None
  vectors_read = 0
  for line in stream:
    lineno += 1
    s = line.rstrip(b' \r\n')
    if not s:
      continue
    if dim is None:  # GloVe: the first line sets dim
      s = s.removeprefix(_BOM)
      dim = s.count(b' ')
      if dim < 1:
        raise UserError(f'{where} line {lineno}: expected "word v1 ... vd" separated '
                        f'by single spaces, got {s[:80]!r}')
      wanted.start(dim)
      index, found, table = wanted.index, wanted.found, wanted.table
    if wanted.remaining == 0:
      break
    vectors_read += 1
    n = s.count(b' ')
    if n == dim:
      cut = s.find(b' ')
    elif n > dim:  # a word with spaces (GloVe 840B): the last dim fields are the vector
      cut = len(s.rsplit(b' ', dim)[0])
    else:
      raise UserError(f'{where} line {lineno}: expected a word and {dim} float values '
                      f'(the dim of {"the header" if header else "line 1"}), got '
                      f'{n} value{"s" * (n != 1)}')
    word = s[:cut]
    i = index.get(key(word) if key else word)
    if i is None or found[i]:
      continue
    table[i] = _floats(s[cut + 1:].split(b' '), where, lineno, dim)
    found[i] = True
    wanted.remaining -= 1
  if dim is None:
    raise UserError(f'{where}: empty vectors file; expected "word v1 ... vd" lines')
  if header and wanted.remaining and vectors_read < count:
    raise UserError(f'{where}: truncated: the header promises {count} vectors, the file '
                    f'holds {vectors_read}')
  return dim


def _read_binary(stream: BinaryIO, where: str, wanted: _Wanted) -> int:
  """Reads word2vec binary records into ``wanted``; returns dim."""
  count, dim = _parse_header(stream.readline(_SNIFF_BYTES), where)
  wanted.start(dim)
  index, found, table = wanted.index, wanted.found, wanted.table
  key = wanted.key if wanted.lowercase else None
  nbytes = 4 * dim
  buf, pos = b'', 0
  for record in range(1, count + 1):
    if wanted.remaining == 0:
      break
    while True:
      cut = buf.find(b' ', pos, pos + _MAX_WORD_BYTES)
      if cut >= 0 and len(buf) >= cut + 1 + nbytes:
        break
      if cut < 0 and len(buf) - pos > _MAX_WORD_BYTES:
        raise UserError(f'{where} record {record}: no space after the word within '
                        f'{_MAX_WORD_BYTES} bytes; is this a word2vec binary file?')
      chunk = stream.read(_CHUNK)
      if not chunk:
        raise UserError(f'{where}: truncated at record {record} of {count} (the header '
                        f'promises {count} words of {dim} float32 each)')
      buf, pos = buf[pos:] + chunk, 0
    word = buf[pos:cut].lstrip(b'\r\n')
    pos = cut + 1 + nbytes
    i = index.get(key(word) if key else word)
    if i is None or found[i]:
      continue
    table[i] = np.frombuffer(buf, '<f4', dim, cut + 1)
    found[i] = True
    wanted.remaining -= 1
  return dim


def load_vectors(path: str, words: Sequence[str], *, fmt: Optional[str] = None,
                 lowercase: bool = False) -> Tuple[np.ndarray, np.ndarray]:
  """Streams a vectors file, keeping the vectors of ``words`` only.

  Args:
    path: a GloVe / word2vec file (plain, .gz or a .zip holding one .txt).
    words: n strings, e.g. ``vocab.words``.
    fmt: one of FORMATS, or None to detect it (:func:`detect_format`).
    lowercase: match the file's words lower-cased (first occurrence wins).

  Returns:
    (matrix float32 [n, dim], found bool [n]); rows of words not found are zeros.
  """
  path = os.fspath(path)
  if fmt is None:
    fmt = detect_format(path)
  elif fmt not in FORMATS:
    raise UserError(f'vectors format {fmt!r}; expected one of {FORMATS} or None')
  wanted = _Wanted(words, lowercase)
  with _open(path) as (stream, where):
    try:
      if fmt == 'word2vec_binary':
        _read_binary(stream, where, wanted)
      else:
        _read_text(stream, where, wanted, header=fmt == 'word2vec_text')
    except (OSError, EOFError, zlib.error) as e:
      raise UserError(f'{where}: could not read the {fmt} vectors ({e}); the file '
                      f'is damaged or truncated') from e
  return wanted.result()


def cache_key(path: str, words: Sequence[str], *, fmt: Optional[str] = None,
              lowercase: bool = False) -> str:
  """sha256 hex over (absolute path, size, mtime, words, options, cache version)."""
  path = os.fspath(path)
  try:
    st = os.stat(path)
  except FileNotFoundError:
    raise _missing(path) from None
  h = hashlib.sha256()
  h.update(json.dumps({
      'version': _CACHE_VERSION, 'path': os.path.abspath(path), 'size': st.st_size,
      'mtime_ns': st.st_mtime_ns, 'fmt': fmt, 'lowercase': bool(lowercase),
  }, sort_keys=True).encode())
  h.update(json.dumps(list(words), ensure_ascii=False).encode('utf-8', 'surrogatepass'))
  return h.hexdigest()


def load_vectors_cached(path: str, words: Sequence[str], cache_dir: str, *,
                        fmt: Optional[str] = None,
                        lowercase: bool = False) -> Tuple[np.ndarray, np.ndarray]:
  """``load_vectors`` through an .npz cache in ``cache_dir``.

  The cache file ``<cache_dir>/<basename>.<cache_key>.npz`` holds ``matrix``, ``found``
  and ``key``. ``cache_key`` covers the vectors file's absolute path, size and mtime, the
  words (in order) and the options, so editing or replacing the file, or changing the
  vocabulary, misses the cache. It is written whole or not at all
  (``seedsweep.files.atomic_write``), so concurrent runs never see half a file; an unreadable
  entry is recomputed. Old entries are never deleted.

  Returns:
    (matrix float32 [n, dim], found bool [n]), as ``load_vectors``.
  """
  path = os.fspath(path)
  key = cache_key(path, words, fmt=fmt, lowercase=lowercase)
  cache_file = os.path.join(cache_dir, f'{os.path.basename(path)}.{key}.npz')
  if os.path.isfile(cache_file):
    try:
      with np.load(cache_file, allow_pickle=False) as z:
        if str(z['key']) == key:
          return z['matrix'], z['found']
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError) as e:
      # A damaged entry (the zip's CRC-32 catches flipped bytes): said, rebuilt.
      notices.say(f'warning: the vectors cache {cache_file} is damaged '
                  f'({type(e).__name__}: {str(e)[:80]}); rebuilding it')
  matrix, found = load_vectors(path, words, fmt=fmt, lowercase=lowercase)
  try:
    os.makedirs(cache_dir, exist_ok=True)
    with files.atomic_write(cache_file, 'wb') as f:
      np.savez(f, matrix=matrix, found=found, key=np.array(key))
  except OSError as e:
    raise UserError(f'{cache_dir}: cannot write the vectors cache ({e}); expected a '
                    f'writable directory') from e
  return matrix, found


def file_record(path: str, cache_dir: str) -> dict:
  """What names a vectors file in a run's provenance: ``{'path', 'bytes', 'sha256'}``,
  plus ``'trained_by'`` (corpus, hyperparameters, versions) from the record that
  ``python -m seedsweep.data.word2vec`` writes beside its output (``FILE.json``), when
  that record's sha256 is this file's.

  The digest is kept in ``cache_dir`` under the file's absolute path, size and mtime, so
  a large file (GloVe 840B: 5.6 GB) is hashed once, not at every run's start.
  """
  path = os.path.abspath(os.fspath(path))
  try:
    st = os.stat(path)
  except FileNotFoundError:
    raise _missing(path) from None
  key = hashlib.sha256(json.dumps(
      [path, st.st_size, st.st_mtime_ns]).encode()).hexdigest()[:16]
  digest_file = os.path.join(cache_dir, f'{os.path.basename(path)}.{key}.sha256')
  try:
    with open(digest_file) as f:
      digest = f.read().strip()
  except OSError:
    digest = ''
  if len(digest) != 64:
    try:
      digest = raw_lib.sha256_file(path)
      os.makedirs(cache_dir, exist_ok=True)
      with files.atomic_write(digest_file) as f:
        f.write(digest + '\n')
    except OSError as e:
      raise UserError(f'{path}: cannot hash the vectors file into {cache_dir} ({e}); '
                      'expected a readable file and a writable cache directory') from e
  record = {'path': path, 'bytes': st.st_size, 'sha256': digest}
  try:
    with open(path + '.json') as f:
      trained = json.load(f)
  except (OSError, ValueError):
    trained = None
  if isinstance(trained, dict) and trained.get('sha256') == digest:
    record['trained_by'] = {k: trained[k] for k in ('corpus', 'hyperparameters',
                                                    'versions') if k in trained}
  return record


def embedding_matrix(vocab_words: Sequence[str], vectors: np.ndarray, found: np.ndarray,
                     *, oov: str = 'random', scale: float = 0.25,
                     rng_seed: int = 0) -> np.ndarray:
  """The initial embedding table [V, d] (float32) of a vocabulary.

  Args:
    vocab_words: the V vocabulary words (index 0 = <pad>, 1 = <unk>).
    vectors: float [V, d], aligned with ``vocab_words`` (``load_vectors`` output).
    found: bool [V], which rows of ``vectors`` hold pretrained vectors.
    oov: rows not found: 'random' = U(-scale, scale), 'zero' = zeros. The <unk> row
      follows the same policy; the <pad> row (0) is always zeros.
    scale: half-width of the uniform draw.
    rng_seed: seed of ``np.random.default_rng``. One [V, d] table is drawn in
      vocabulary order and row i is used for word i, so a word's random vector does not
      depend on which other words were found.

  Returns:
    float32 [V, d].
  """
  if oov not in OOV_INITS:
    raise UserError(f'embedding oov initialisation {oov!r}; expected one of {OOV_INITS}')
  if scale < 0:
    raise UserError(f'embedding oov scale {scale}; expected >= 0')
  vectors = np.asarray(vectors)
  found = np.asarray(found, bool)
  v = len(vocab_words)
  if vectors.ndim != 2 or vectors.shape[0] != v or found.shape != (v,):
    raise ValueError(f'vectors {vectors.shape} and found {found.shape} must have '
                     f'{v} rows, one per vocabulary word')
  if oov == 'random':
    out = np.random.default_rng(rng_seed).uniform(-scale, scale, vectors.shape)
    out = out.astype(np.float32)
  else:
    out = np.zeros(vectors.shape, np.float32)
  out[found] = vectors[found]
  if v:
    out[0] = 0.0
  return out
