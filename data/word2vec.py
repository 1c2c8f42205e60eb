r"""Word vectors trained by the framework: word2vec (gensim) on a corpus, written in the
word2vec text format that inputs/vectors.py reads (``count dim`` header, then ``word v1
... vd`` lines), with ``FILE.json`` beside it recording how it was made.

  python -m seedsweep.data.word2vec --corpus=imdb --dim=300 --out=FILE
  python -m seedsweep.data.word2vec --corpus=sentences.txt --out=FILE [--epochs=5
      --seed=1 --min_count=5 --window=5 --tokens=ptb --lowercase]

gensim is an optional extra: ``pip install 'seedsweep[word2vec]'``. Corpora
(``--corpus``): ``imdb`` (the 50,000 labelled IMDB reviews), ``imdb_train`` (its
25,000 training reviews only) or a UTF-8 file, one document per line, tokens
separated by spaces. The rule: a corpus must never hold the test sentences of the
dataset the vectors are evaluated on (an IMDB experiment uses ``imdb_train``).

Tokens (``--tokens``) must match the dataset's vocabulary or its words find no
vector: ``ptb`` (the default: split as the Penn Treebank does, as SST and TREC are;
:func:`ptb_split`) or ``imdb`` (the corpus's own tokens, data/imdb.py's for the IMDB
corpora: IMDB, MR, Subj).

The same corpus, flags, versions and BLAS kernels give the same file byte for byte;
``--blas_core`` (default ``portable``: OpenBLAS's Haswell kernels) pins the kernels
across CPUs. The manual: docs/data.md, "Training word vectors".
"""
import argparse
import collections
import hashlib
import json
import os
import platform
import sys
import time
import zlib
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from seedsweep import files
from seedsweep.config import keys
from seedsweep.data import imdb
from seedsweep.errors import UserError
from seedsweep.inputs import raw as raw_lib

CORPORA = ('imdb', 'imdb_train')
TOKENS = ('imdb', 'ptb')
INSTALL = "pip install 'seedsweep[word2vec]' (or pip install gensim threadpoolctl)"
VALUE_FORMAT = '%.6g'
# gensim's cython routines take at most this many tokens of a sentence (and of a job).
MAX_SENTENCE_TOKENS = 10000

DEFAULTS = dict(dim=300, window=5, min_count=5, epochs=5, seed=1, tokens='ptb',
                lowercase=True, algorithm='cbow')
# --algorithm: word2vec's two architectures (gensim's ``sg`` 0 / 1).
ALGORITHMS = {'cbow': 0, 'skipgram': 1}
# The instruction sets (as /proc/cpuinfo names them) that OpenBLAS's x86-64 cores
# need: a forced core is loaded whether or not the CPU has them (pin_blas_core).
_AVX512 = ('avx512f', 'avx512cd', 'avx512bw', 'avx512dq', 'avx512vl')
CORE_INSTRUCTIONS = {
    'sandybridge': ('avx',), 'bulldozer': ('avx',), 'piledriver': ('avx', 'fma'),
    'steamroller': ('avx', 'fma'), 'excavator': ('avx', 'avx2', 'fma'),
    'haswell': ('avx2', 'fma'), 'zen': ('avx2', 'fma'), 'skylakex': _AVX512,
    'cooperlake': _AVX512 + ('avx512_bf16',),
}
# gensim's own defaults, fixed here so that a gensim release cannot change them
# silently, and recorded in FILE.json: negative sampling, one worker thread.
GENSIM_SETTINGS = dict(hs=0, negative=5, ns_exponent=0.75, cbow_mean=1,
                       sample=1e-3, alpha=0.025, min_alpha=0.0001, workers=1)

# --- tokens ----------------------------------------------------------------------

_CLITICS = ("n't", "'s", "'re", "'ve", "'ll", "'d", "'m")
_SPLIT_WORDS = {'cannot': ('can', 'not')}
# Tokens that keep a following period in the treebank (SST: Mr. Ms. vs. No. Jr. ...).
_ABBREVIATIONS = frozenset(
    'mr mrs ms dr st jr sr vs inc co bros prof rev gen sen mt lt sgt col capt '
    'etc al jan feb mar apr aug sept sep oct nov dec'.split())
_REPLACE = {'\u2026': '...', '\u2014': '--', '\u201c': '``', '\u201d': "''"}


def _split_clitic(token: str) -> Sequence[str]:
  low = token.lower()
  if low in _SPLIT_WORDS:
    first, _ = _SPLIT_WORDS[low]
    return token[:len(first)], token[len(first):]
  for clitic in _CLITICS:
    if low.endswith(clitic) and len(token) > len(clitic):
      return token[:-len(clitic)], token[-len(clitic):]
  return (token,)


def ptb_split(tokens: Sequence[str]) -> List[str]:
  """One document's tokens split and normalised as the Penn Treebank tokenises
  (``--tokens=ptb``); tokens that are PTB's already (``n't``, ``...``, quotes) stay
  as they are.

  Clitics split off (``don't`` -> ``do n't``, ``can't`` -> ``ca n't``, ``it's`` ->
  ``it 's``; ``'re 've 'll 'd 'm`` alike), ``cannot`` -> ``can not``, double quotes
  -> PTB's opening and closing quotes (two backquotes, two apostrophes; alternating
  within a document), runs of ``.`` -> ``...`` and of ``-`` -> ``--``, ``…`` ->
  ``...``, ``—`` -> ``--``, the period kept on titles and initials (``Mr.``, ``vs.``,
  ``J.``), ``’`` -> ``'``.
  """
  out: List[str] = []
  opening = True  # the next '"' opens a quotation
  for token in tokens:
    token = _REPLACE.get(token, token).replace('\u2019', "'")
    previous = out[-1] if out else ''
    if token == '"':
      out.append('``' if opening else "''")
      opening = not opening
    elif token == '.' and previous in ('.', '...'):
      out[-1] = '...'
    elif token == '-' and previous in ('-', '--'):
      out[-1] = '--'
    elif token == '.' and (previous.lower() in _ABBREVIATIONS or (
        len(previous) == 1 and previous.isupper() and previous not in 'AI')):
      out[-1] = previous + '.'
    else:
      out.extend(_split_clitic(token))
  return out


def space_tokens(line: str) -> List[str]:
  """A pre-tokenised line's tokens: split on ASCII spaces (as vocabulary.tokenize_texts),
  empty tokens dropped."""
  return [t for t in line.split(' ') if t]


def document_tokens(text: str, *, tokens: str, lowercase: bool,
                    pretokenized: bool) -> List[str]:
  """One document's tokens: ``space_tokens`` for a pre-tokenised line, else
  data/imdb.py's tokenizer; then PTB splits (``tokens='ptb'``) and lower-casing."""
  words = space_tokens(text) if pretokenized else imdb.tokenize(text)
  if tokens == 'ptb':
    words = ptb_split(words)
  if lowercase:
    words = [w.lower() for w in words]
  return words


# --- corpus ----------------------------------------------------------------------


def _data_root(corpus: str, data_root: Optional[str]) -> str:
  root = data_root or raw_lib.root()
  if not root:
    raise UserError(f'--corpus={corpus} needs the raw data: set ${raw_lib.ENV} (or '
                    f'--data_dir) to the folder holding imdb/{imdb.ARCHIVE}')
  return root


def corpus_source(corpus: str, data_root: Optional[str] = None) -> str:
  """The file a corpus is read from (checked to exist)."""
  if corpus in CORPORA:
    path = imdb.archive_path(os.path.join(_data_root(corpus, data_root), 'imdb'))
    if not os.path.isfile(path):
      raise UserError(f'--corpus={corpus}: {path} not found; expected the IMDB archive '
                      f'imdb/{imdb.ARCHIVE} under the data root '
                      f'${raw_lib.ENV} (or --data_dir)')
    return path
  if not os.path.isfile(corpus):
    raise UserError(
        f'--corpus={corpus}: no such file{keys.did_you_mean(corpus, CORPORA)}; expected '
        f'one of {", ".join(CORPORA)} or a UTF-8 text file with one sentence or '
        'document per line')
  return corpus


def _file_lines(path: str) -> List[str]:
  lines = []
  with open(path, 'rb') as f:
    for number, line in enumerate(f, 1):
      try:
        text = line.decode('utf-8').rstrip('\r\n')
      except UnicodeDecodeError as e:
        raise UserError(f'{path}:{number}: not UTF-8 ({e.reason} at byte {e.start}); '
                        'expected a UTF-8 text file for --corpus') from None
      if text.strip(' '):
        lines.append(text)
  return lines


def corpus_documents(corpus: str, data_root: Optional[str] = None,
                     max_documents: int = 0) -> List[str]:
  """The corpus's documents as text: IMDB reviews (``<br />`` removed; train before
  test, each split in member-name order) or a file's non-blank lines; the first
  ``max_documents`` only when > 0."""
  path = corpus_source(corpus, data_root)
  if corpus in CORPORA:
    splits = ('train', 'test') if corpus == 'imdb' else ('train',)
    by_split = imdb.read_splits_with_ratings(os.path.dirname(path), splits)
    texts = [text for split in splits for text, _, _ in by_split[split]]
  else:
    texts = _file_lines(path)
  return texts[:max_documents] if max_documents > 0 else texts


def corpus_sentences(corpus: str, *, tokens: str = DEFAULTS['tokens'],
                     lowercase: bool = DEFAULTS['lowercase'],
                     data_root: Optional[str] = None,
                     max_documents: int = 0) -> List[List[str]]:
  """The corpus as token lists, one per document (module docstring: corpora, tokens);
  documents without a token are left out."""
  if tokens not in TOKENS:
    raise UserError(f'--tokens={tokens}; expected one of {", ".join(TOKENS)}')
  pretokenized = corpus not in CORPORA
  sentences = (document_tokens(text, tokens=tokens, lowercase=lowercase,
                               pretokenized=pretokenized)
               for text in corpus_documents(corpus, data_root, max_documents))
  return [s for s in sentences if s]


# --- training --------------------------------------------------------------------


def stable_hash(text: str) -> int:
  """A string hash that is the same in every process (Python's ``hash`` is salted by
  PYTHONHASHSEED): gensim's ``hashfxn``."""
  return zlib.crc32(text.encode('utf-8', 'surrogatepass'))


def _gensim():
  try:
    import gensim  # pylint: disable=g-import-not-at-top
    from gensim.models import word2vec  # pylint: disable=g-import-not-at-top
  except ImportError:
    raise UserError(f'training word vectors needs gensim: {INSTALL}') from None
  return gensim, word2vec


# --blas_core=portable (the default): OpenBLAS's Haswell kernels (AVX2 and FMA), which
# every x86-64 CPU since Intel's Haswell and AMD's Zen runs, so the same command gives
# the same bytes on all of them (checked 2026-11-28: a Sapphire Rapids gave the bytes
# a Zen 5 gave with its own choice, Haswell). Elsewhere OpenBLAS's own choice.
PORTABLE_CORE = 'Haswell'


def resolve_blas_core(core: str, flags: Optional[frozenset]) -> str:
  """The OpenBLAS core ``--blas_core`` names: 'portable' -> PORTABLE_CORE where this
  CPU runs it (else '', OpenBLAS's own choice), 'native' -> '', a name as it is."""
  if core == 'native':
    return ''
  if core != 'portable':
    return core
  needed = CORE_INSTRUCTIONS[PORTABLE_CORE.lower()]
  x86 = platform.machine().lower() in ('x86_64', 'amd64')
  runs = x86 and flags is not None and all(f in flags for f in needed)
  return PORTABLE_CORE if runs else ''


def pin_blas_core(core: str) -> None:
  """``--blas_core``: OpenBLAS reads OPENBLAS_CORETYPE when it loads, so this must
  run before gensim imports scipy's BLAS in this process ('' leaves OpenBLAS's own
  choice). OpenBLAS loads a forced core without asking the CPU, so a core whose
  instructions this CPU lacks is refused here, not left to die on an illegal
  instruction in gensim's loop."""
  if not core:
    return
  if not core.isalnum():
    raise UserError(f'--blas_core={core!r}; expected an OpenBLAS core name such as '
                    'Haswell or SkylakeX')
  check_cpu_runs_core(core, cpu_flags())
  os.environ['OPENBLAS_CORETYPE'] = core


def cpu_flags(path: str = '/proc/cpuinfo') -> Optional[frozenset]:
  """The instruction-set flags of this CPU (Linux x86: the first 'flags' line of
  /proc/cpuinfo), or None where they cannot be read (another OS or architecture)."""
  try:
    with open(path, encoding='utf-8', errors='replace') as f:
      for line in f:
        name, _, value = line.partition(':')
        if name.strip() == 'flags':
          return frozenset(value.split())
  except OSError:
    pass
  return None


def check_cpu_runs_core(core: str, flags: Optional[frozenset]) -> None:
  """A UserError when this CPU lacks an instruction set OpenBLAS's ``core`` kernels
  use (CORE_INSTRUCTIONS); cores not listed there, or unknown flags (None), are left
  to check_blas_core after loading."""
  needed = CORE_INSTRUCTIONS.get(core.lower())
  if flags is None or needed is None:
    return
  missing = [flag for flag in needed if flag not in flags]
  if missing:
    raise UserError(f'--blas_core={core}: this CPU lacks {", ".join(missing)} '
                    '(/proc/cpuinfo flags), which that core\'s kernels use; expected '
                    'a core this CPU runs: --blas_core=portable (the default: the same '
                    'bytes on every CPU with AVX2 and FMA) or native (this CPU\'s own '
                    'choice, and the record says so)')


def check_blas_core(core: str, blas: Sequence[Dict[str, str]]) -> None:
  """A UserError unless the OpenBLAS gensim's loop calls runs ``core``: scipy's own
  copy where scipy ships one (numpy's, loaded earlier, may run another core), else
  every OpenBLAS of ``blas`` (blas_record)."""
  if not core:
    return
  openblas = [b for b in blas if b['api'] == 'openblas']
  checked = [b for b in openblas if _ships_with_scipy(b)] or openblas
  cores = [b['core'] for b in checked]
  if not cores or any(c.lower() != core.lower() for c in cores):
    raise UserError(f'--blas_core={core}: OpenBLAS runs core {", ".join(cores) or "?"}'
                    '; expected the named core (one this CPU has the instructions '
                    'for, set before BLAS is loaded: a fresh process)')


def _ships_with_scipy(library: Dict[str, str]) -> bool:
  """Whether a blas_record entry lies in scipy's folders (scipy.libs, the
  scipy_openblas32 package): the copy gensim calls through scipy.linalg."""
  return any(part.startswith('scipy') for part in library.get('folder', '').split('/'))


def blas_record() -> List[Dict[str, str]]:
  """The BLAS libraries this process has loaded (gensim's through scipy among
  them): library, version, the folder it lies in (its last two parts) and the core
  (kernel set) each picked for this CPU, which decides the vectors' bits (module
  docstring, Determinism)."""
  try:
    import threadpoolctl  # pylint: disable=g-import-not-at-top
  except ImportError:
    raise UserError(f'recording the BLAS kernel needs threadpoolctl: {INSTALL}'
                    ) from None
  return [{'library': info.get('prefix', ''), 'api': info.get('internal_api', ''),
           'file': os.path.basename(info.get('filepath') or ''),
           'folder': _last_folders(info.get('filepath') or ''),
           'version': info.get('version') or '',
           'core': info.get('architecture') or ''}
          for info in threadpoolctl.threadpool_info() if info.get('user_api') == 'blas']


def _last_folders(path: str, parts: int = 2) -> str:
  """'site-packages/scipy.libs' of '/.../site-packages/scipy.libs/libx.so'."""
  folders = os.path.dirname(path).replace(os.sep, '/').split('/')
  return '/'.join(folders[-parts:])


def check_hyperparameters(dim: int, window: int, min_count: int, epochs: int,
                          seed: int, algorithm: str = DEFAULTS['algorithm']) -> None:
  """UserError naming the flag, unless ``algorithm`` is one of :data:`ALGORITHMS`, ``seed``
  is in ``[0, 2**32)`` and the other values are integers >= 1."""
  if algorithm not in ALGORITHMS:
    raise UserError(f'--algorithm={algorithm!r}; expected one of {", ".join(ALGORITHMS)}')
  for flag, value, least in (('dim', dim, 1), ('window', window, 1),
                             ('min_count', min_count, 1), ('epochs', epochs, 1),
                             ('seed', seed, 0)):
    if (not isinstance(value, (int, np.integer)) or isinstance(value, bool)
        or value < least):
      raise UserError(f'--{flag}={value}; expected an integer >= {least}')
  if seed >= 2**32:
    raise UserError(f'--seed={seed}; expected an integer in [0, 2**32)')


def check_corpus(sentences: Sequence[Sequence[str]], min_count: int) -> None:
  """UserError for a corpus without a token, or without a word seen ``min_count``
  times."""
  counts = collections.Counter(w for s in sentences for w in s)
  if not counts:
    raise UserError('the corpus is empty: no token to train word vectors on; expected '
                    'at least one non-blank line (document)')
  word, most = counts.most_common(1)[0]
  if most < min_count:
    raise UserError(f'--min_count={min_count}: no word of the corpus occurs that often '
                    f'(the most frequent, {word!r}, occurs {most} times); expected a '
                    'larger corpus or a smaller --min_count')


def _pieces(sentences: Iterable[Sequence[str]]) -> List[Sequence[str]]:
  """Sentences cut into pieces of at most MAX_SENTENCE_TOKENS tokens."""
  out = []
  for s in sentences:
    if len(s) <= MAX_SENTENCE_TOKENS:
      out.append(s)
    else:
      out.extend(s[i:i + MAX_SENTENCE_TOKENS]
                 for i in range(0, len(s), MAX_SENTENCE_TOKENS))
  return out


class _Progress:
  """A gensim callback: one line per epoch on stderr."""

  def __init__(self, epochs: int, stream):
    self.epochs, self.stream, self.epoch, self.start = epochs, stream, 0, 0.0

  def on_train_begin(self, model):
    """Starts the clock."""
    del model
    self.start = time.perf_counter()

  def on_epoch_begin(self, model):
    """Nothing: the line is written at the epoch's end."""
    del model

  def on_epoch_end(self, model):
    """Writes ``epoch k/n: seconds`` since training began."""
    del model
    self.epoch += 1
    if self.stream is not None:
      print(f'  epoch {self.epoch}/{self.epochs}: '
            f'{time.perf_counter() - self.start:.1f} s', file=self.stream, flush=True)

  def on_train_end(self, model):
    """Nothing."""
    del model


def train_vectors(sentences: Sequence[Sequence[str]], dim: int = DEFAULTS['dim'],
                  window: int = DEFAULTS['window'],
                  min_count: int = DEFAULTS['min_count'],
                  epochs: int = DEFAULTS['epochs'], seed: int = DEFAULTS['seed'],
                  algorithm: str = DEFAULTS['algorithm'],
                  progress=None) -> Tuple[List[str], np.ndarray]:
  """word2vec (gensim, one worker; ``algorithm`` 'cbow' or 'skipgram') on
  ``sentences``: ``(words, float32 [n, dim])``, words by decreasing count.
  ``progress``: a stream for one line per epoch, or None."""
  check_hyperparameters(dim, window, min_count, epochs, seed, algorithm)
  check_corpus(sentences, min_count)
  return _fit(sentences, dim, window, min_count, epochs, seed, algorithm, progress)


def _fit(sentences, dim, window, min_count, epochs, seed, algorithm, progress):
  """:func:`train_vectors` on checked inputs."""
  _, word2vec = _gensim()
  sentences = _pieces(sentences)
  model = word2vec.Word2Vec(vector_size=dim, window=window, min_count=min_count,
                            seed=seed, hashfxn=stable_hash, epochs=epochs,
                            sg=ALGORITHMS[algorithm], **GENSIM_SETTINGS)
  model.build_vocab(sentences)
  model.train(sentences, total_examples=len(sentences), epochs=epochs,
              callbacks=[_Progress(epochs, progress)])
  return list(model.wv.index_to_key), np.asarray(model.wv.vectors, np.float32)


# --- files -----------------------------------------------------------------------


def check_out(path: str, flag: str = 'out') -> str:
  """``path`` made absolute; UserError unless its directory exists and it is not one."""
  path = os.path.abspath(path)
  folder = os.path.dirname(path)
  if not os.path.isdir(folder):
    raise UserError(f'--{flag}={path}: the directory {folder} does not exist; create '
                    'it first')
  if os.path.isdir(path):
    raise UserError(f'--{flag}={path} is a directory; expected a file name')
  return path


def _atomic(path: str):
  """A binary file written whole or not at all onto ``path`` (checked first)."""
  return files.atomic_write(check_out(path), 'wb')


def write_word2vec_text(path: str, words: Sequence[str], matrix: np.ndarray) -> str:
  """Writes ``count dim`` then ``word v1 ... vd`` lines (values ``VALUE_FORMAT``),
  atomically; returns the file's sha256."""
  matrix = np.asarray(matrix, np.float32)
  if matrix.ndim != 2 or matrix.shape[0] != len(words):
    raise ValueError(f'matrix {matrix.shape} must have one row per word ({len(words)})')
  bad = [w for w in words if not w or ' ' in w or '\n' in w]
  if bad:
    raise ValueError(f'word {bad[0]!r}: words must be non-empty, without spaces or '
                     'line breaks')
  row_format = ' '.join([VALUE_FORMAT] * matrix.shape[1])
  h = hashlib.sha256()
  with _atomic(path) as f:
    lines = [f'{len(words)} {matrix.shape[1]}\n']
    rows = matrix.tolist()
    for start in range(0, max(len(words), 1), 4096):
      lines += [f'{w} {row_format % tuple(r)}\n'
                for w, r in zip(words[start:start + 4096], rows[start:start + 4096])]
      data = ''.join(lines).encode('utf-8')
      h.update(data)
      f.write(data)
      lines = []
  return h.hexdigest()


def train_file(corpus: str, out: str, *, dim: int = DEFAULTS['dim'],
               window: int = DEFAULTS['window'], min_count: int = DEFAULTS['min_count'],
               epochs: int = DEFAULTS['epochs'], seed: int = DEFAULTS['seed'],
               tokens: str = DEFAULTS['tokens'], lowercase: bool = DEFAULTS['lowercase'],
               algorithm: str = DEFAULTS['algorithm'],
               data_root: Optional[str] = None, max_documents: int = 0,
               blas_core: str = 'portable', progress=None) -> Dict:
  """Reads ``corpus``, trains, writes ``out`` and ``out + '.json'``; returns the
  record written to the JSON file. ``blas_core``: :func:`resolve_blas_core`."""
  requested, blas_core = blas_core, resolve_blas_core(blas_core, cpu_flags())
  start = time.perf_counter()
  check_hyperparameters(dim, window, min_count, epochs, seed, algorithm)
  if not isinstance(max_documents, int) or max_documents < 0:
    raise UserError(f'--max_documents={max_documents}; expected an integer >= 0 '
                    '(0 = every document)')
  check_out(out)
  pin_blas_core(blas_core)
  gensim, _ = _gensim()
  blas = blas_record()
  check_blas_core(blas_core, blas)
  source = corpus_source(corpus, data_root)
  sentences = corpus_sentences(corpus, tokens=tokens, lowercase=lowercase,
                               data_root=data_root, max_documents=max_documents)
  num_tokens = sum(map(len, sentences))
  check_corpus(sentences, min_count)
  read_s = time.perf_counter() - start
  if progress is not None:
    print(f'{corpus}: {len(sentences)} documents, {num_tokens} tokens '
          f'({read_s:.1f} s); training {epochs} epochs', file=progress, flush=True)
  words, matrix = _fit(sentences, dim, window, min_count, epochs, seed, algorithm,
                       progress)
  train_s = time.perf_counter() - start - read_s
  digest = write_word2vec_text(out, words, matrix)
  source_sha = raw_lib.sha256_file(source)
  record = {
      'vectors': os.path.abspath(out), 'sha256': digest, 'format': 'word2vec_text',
      'vocabulary_size': len(words), 'dim': dim,
      'corpus': {
          'name': corpus if corpus in CORPORA else 'file',
          'source': os.path.abspath(source), 'source_sha256': source_sha,
          'documents': len(sentences), 'tokens': num_tokens,
          'max_documents': max_documents,
      },
      'hyperparameters': {
          'dim': dim, 'window': window, 'min_count': min_count, 'epochs': epochs,
          'seed': seed, 'tokens': tokens, 'lowercase': lowercase,
          'algorithm': algorithm, 'sg': ALGORITHMS[algorithm], **GENSIM_SETTINGS,
          'max_sentence_tokens': MAX_SENTENCE_TOKENS, 'value_format': VALUE_FORMAT,
      },
      'versions': {'gensim': gensim.__version__, 'numpy': np.__version__,
                   'python': platform.python_version()},
      'blas': blas, 'blas_core': blas_core, 'blas_core_requested': requested,
      'seconds': {'read': round(read_s, 2), 'train': round(train_s, 2),
                  'total': round(time.perf_counter() - start, 2)},
  }
  if corpus in CORPORA:
    recorded = imdb.SHA256.get(f'imdb/{imdb.ARCHIVE}')
    record['corpus']['source_matches_recorded'] = source_sha == recorded
  with _atomic(out + '.json') as f:
    f.write((json.dumps(record, indent=1) + '\n').encode())
  return record


class _Formatter(argparse.RawDescriptionHelpFormatter,
                 argparse.ArgumentDefaultsHelpFormatter):
  """The module docstring as it is written, and each flag's default."""


def main(argv=None) -> int:
  """``python -m seedsweep.data.word2vec``: trains vectors on ``--corpus`` and writes
  ``--out`` with its JSON record; the exit status (1 after a UserError's message)."""
  parser = argparse.ArgumentParser(prog='python -m seedsweep.data.word2vec',
                                   description=__doc__, formatter_class=_Formatter)
  parser.add_argument('--corpus', default='imdb',
                      help=f'{" | ".join(CORPORA)} | FILE.txt (one sentence or document '
                      'per line, tokens separated by spaces)')
  parser.add_argument('--out', required=True, help='the vectors file to write; FILE.json '
                      'records how it was made')
  parser.add_argument('--dim', type=int, default=DEFAULTS['dim'],
                      help="the vectors' dimension")
  parser.add_argument('--epochs', type=int, default=DEFAULTS['epochs'],
                      help='passes over the corpus')
  parser.add_argument('--seed', type=int, default=DEFAULTS['seed'],
                      help='the seed of every random draw')
  parser.add_argument('--min_count', type=int, default=DEFAULTS['min_count'],
                      help='words seen fewer times get no vector')
  parser.add_argument('--window', type=int, default=DEFAULTS['window'],
                      help='context words on each side')
  parser.add_argument('--algorithm', choices=tuple(ALGORITHMS),
                      default=DEFAULTS['algorithm'],
                      help='cbow: predict a word from its context; skipgram: the '
                      'context from the word (slower, better for rare words)')
  parser.add_argument('--tokens', choices=TOKENS, default=DEFAULTS['tokens'],
                      help='imdb: the corpus\'s own tokens; ptb: split as the Penn '
                      'Treebank (SST, TREC)')
  parser.add_argument('--lowercase', action=argparse.BooleanOptionalAction,
                      default=DEFAULTS['lowercase'], help='lower-case every token')
  parser.add_argument('--max_documents', type=int, default=0,
                      help='the first N documents only (0 = all)')
  parser.add_argument('--data_dir', help='raw data root (overrides $SEEDSWEEP_DATA)')
  parser.add_argument('--blas_core', default='portable',
                      help="OpenBLAS's kernels: 'portable' (Haswell's, the same bytes "
                      "on every x86-64 CPU with AVX2 and FMA; elsewhere OpenBLAS's "
                      "own choice), 'native' (OpenBLAS's choice for this CPU) or a "
                      "core's name (e.g. SkylakeX, which needs AVX-512)")
  args = parser.parse_args(argv)
  try:
    record = train_file(args.corpus, args.out, dim=args.dim, window=args.window,
                        min_count=args.min_count, epochs=args.epochs, seed=args.seed,
                        tokens=args.tokens, lowercase=args.lowercase,
                        algorithm=args.algorithm, data_root=args.data_dir,
                        max_documents=args.max_documents,
                        blas_core=args.blas_core, progress=sys.stderr)
  except UserError as e:
    print(f'error: {e}', file=sys.stderr)
    return 1
  print(f'{args.out}: {record["vocabulary_size"]} words x {args.dim} '
        f'({record["corpus"]["tokens"]} tokens, {record["seconds"]["total"]:.1f} s); '
        f'{args.out}.json')
  return 0


if __name__ == '__main__':
  sys.exit(main())
