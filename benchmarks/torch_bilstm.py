r"""The PyTorch baseline of benchmarks/compare.py: one seed of a plain Bi-LSTM loop.

  python benchmarks/torch_bilstm.py --data=DATA.npz --seed=1 --epochs=1

What a PyTorch user writes in an afternoon for the framework's Bi-LSTM protocol
(experiments/bilstm.py): 300-d embeddings from U(-0.25, 0.25), ``nn.LSTM`` of 150
units per direction over packed sequences, mean pooling over real tokens, dropout 0.5,
a linear layer, Adam 1e-3, batch 50, a fresh shuffle every epoch, dev and test
evaluated after every epoch (batch 500, ``no_grad``). It reads the token ids that
compare.py exported from the framework's own dataset, so both sides see the same
examples and vocabulary. Prints one JSON line with its timings and accuracies.

Needs ``torch`` (``pip install -e ".[bench]"``); never imported by the framework.
"""
import argparse
import json
import os
import resource
import time

import numpy as np
import torch
from torch import nn


class BiLSTMClassifier(nn.Module):
  """embedding -> Bi-LSTM -> masked mean -> dropout -> linear."""

  def __init__(self, vocab_size: int, num_classes: int, embed_dim: int = 300,
               hidden: int = 150, dropout: float = 0.5):
    super().__init__()
    self.embedding = nn.Embedding(vocab_size, embed_dim)
    nn.init.uniform_(self.embedding.weight, -0.25, 0.25)
    self.lstm = nn.LSTM(embed_dim, hidden, batch_first=True, bidirectional=True)
    self.dropout = nn.Dropout(dropout)
    self.out = nn.Linear(2 * hidden, num_classes)

  def forward(self, tokens, lengths):
    """``tokens [batch, time]`` (right-padded), ``lengths [batch]`` -> logits."""
    packed = nn.utils.rnn.pack_padded_sequence(self.embedding(tokens), lengths,
                                               batch_first=True, enforce_sorted=False)
    hs, _ = self.lstm(packed)
    hs, _ = nn.utils.rnn.pad_packed_sequence(hs, batch_first=True,
                                             total_length=tokens.shape[1])
    mask = (torch.arange(tokens.shape[1])[None] < lengths[:, None]).float()
    pooled = (hs * mask[..., None]).sum(1) / lengths[:, None].float()
    return self.out(self.dropout(pooled))


def batches(split, order, size):
  """Yields ``(tokens, lengths, labels)`` tensors, each batch padded to its longest."""
  tokens, lengths, labels = split
  for start in range(0, len(order), size):
    idx = order[start:start + size]
    n = lengths[idx]
    yield (torch.from_numpy(tokens[idx, :max(int(n.max()), 1)]),
           torch.from_numpy(np.maximum(n, 1)), torch.from_numpy(labels[idx]))


def accuracy(model, split) -> float:
  model.eval()
  correct = 0
  with torch.no_grad():
    for tokens, lengths, labels in batches(split, np.arange(len(split[1])), 500):
      correct += int((model(tokens, lengths).argmax(-1) == labels).sum())
  model.train()
  return 100.0 * correct / len(split[1])


def main():
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--data', required=True, help='.npz written by compare.py')
  parser.add_argument('--seed', type=int, default=1)
  parser.add_argument('--epochs', type=int, default=1)
  args = parser.parse_args()
  start = time.perf_counter()
  torch.set_num_threads(len(os.sched_getaffinity(0)))
  torch.manual_seed(args.seed)
  rng = np.random.default_rng(args.seed)
  arrays = np.load(args.data)
  splits = {s: (arrays[f'{s}_tokens'], arrays[f'{s}_lengths'], arrays[f'{s}_labels'])
            for s in ('train', 'dev', 'test')}
  model = BiLSTMClassifier(int(arrays['vocab_size']), int(arrays['num_classes']))
  optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
  loss_fn = nn.CrossEntropyLoss()
  timing = {'train': 0.0, 'eval': 0.0}
  for _ in range(args.epochs):
    t = time.perf_counter()
    order = rng.permutation(len(splits['train'][1]))
    for tokens, lengths, labels in batches(splits['train'], order, 50):
      optimizer.zero_grad()
      loss_fn(model(tokens, lengths), labels).backward()
      optimizer.step()
    timing['train'] += time.perf_counter() - t
    t = time.perf_counter()
    dev, test = accuracy(model, splits['dev']), accuracy(model, splits['test'])
    timing['eval'] += time.perf_counter() - t
  timing['total'] = time.perf_counter() - start
  print(json.dumps({'seed': args.seed, 'dev_accuracy': dev, 'test_accuracy': test,
                    'timing': timing, 'threads': torch.get_num_threads(),
                    'peak_rss_mib': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                                   / 1024}))


if __name__ == '__main__':
  main()
