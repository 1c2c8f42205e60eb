"""Pretrained word vectors in experiments: ``config.data.vectors``.

``path`` names a GloVe (.txt/.gz/.zip) or word2vec (text/binary) file; ``''`` = no
vectors (random embeddings, the models' own initialiser). With a file, every distinct
token of the dataset is looked up once (streamed, cached; inputs/vectors.py), then:

* ``only_found``: only words with a vector may enter a vocabulary (DC-Bi-LSTM:
  "words not in the pre-trained set are abandoned"; with ``config.data.oov='delete'``
  they are deleted from the input);
* ``add_eval_words``: dev/test words with a vector join the vocabulary after the
  training words (C-LSTM), so they keep their pretrained vector;
* each seed's initial embedding table: the pretrained vector where found, else
  ``oov_init``: 'random' keeps the model's own per-seed initialiser (U(-0.25, 0.25)
  for the models here), 'zero' zeros; ``<pad>`` is zeros;
* ``static``: the embedding table is not trained (the optimizer leaves it alone).
"""
from typing import Dict, Sequence, Tuple

import numpy as np

from seedsweep.config import checks as config_checks
from seedsweep.inputs import vectors as vectors_lib


def lookup(data_config, words: Sequence[str],
           cache_dir: str) -> Tuple[np.ndarray, np.ndarray]:
  """``(matrix [n, d], found [n])`` for ``words`` from ``config.data.vectors.path``
  (set: a run without vectors does not come here, inputs/encoded.py)."""
  v = data_config.vectors
  return vectors_lib.load_vectors_cached(v.path, words, cache_dir,
                                         fmt=v.format or None,
                                         lowercase=bool(v.lowercase))


def tables(vocabs, index: Dict[str, int], matrix: np.ndarray, found: np.ndarray,
           data_config) -> Tuple[np.ndarray, np.ndarray]:
  """Each view's pretrained rows: ``(table float32 [views, max_vocab, d], use bool
  [views, max_vocab])``.

  ``use`` marks the rows that replace the model's own (per-seed random) initial
  embedding: words with a vector, ``<pad>`` (zeros), and with ``oov_init='zero'``
  every other row too (zeros). Rows past a view's vocabulary are zeros and used.
  """
  oov_init = data_config.vectors.oov_init
  config_checks.one_of('data.vectors.oov_init', oov_init, vectors_lib.OOV_INITS)
  size = max(len(vocab) for vocab in vocabs)
  table = np.zeros((len(vocabs), size, matrix.shape[1]), np.float32)
  use = np.ones((len(vocabs), size), bool)
  for i, vocab in enumerate(vocabs):
    rows = np.array([index.get(w, -1) for w in vocab.words])
    hit = (rows >= 0) & found[np.maximum(rows, 0)]
    hit[0] = False  # <pad>: zeros below
    table[i, :len(vocab)][hit] = matrix[rows[hit]]
    if oov_init == 'random':
      use[i, :len(vocab)] = hit
      use[i, 0] = True
  return table, use

