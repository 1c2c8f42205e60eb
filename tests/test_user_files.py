"""Your own data (config.data.name='files'): TSV/JSONL parsing, errors with file and
line, and any model training on it through config alone."""
import json

import numpy as np
import pytest

from seedsweep.config import base
from seedsweep import data as data_lib
from seedsweep.data import demo_grammar
from seedsweep.data import user_files
from seedsweep.errors import UserError
from tests.conftest import run_launch


def write_tsv(path, examples, tags=False):
  with open(path, 'w', encoding='utf-8') as f:
    for text, label in examples:
      extra = '\t' + ' '.join('T' for _ in text.split()) if tags else ''
      f.write(f'{"pos" if label else "neg"}\t{text}{extra}\n')


def test_tsv_and_jsonl_with_tags(tmp_path):
  tsv = tmp_path / 'a.tsv'
  tsv.write_text('good\tvery nice film\nbad\tawful\n\n', encoding='utf-8')
  assert user_files.read_file(str(tsv)) == [('very nice film', 'good', None),
                                            ('awful', 'bad', None)]
  jsonl = tmp_path / 'a.jsonl'
  jsonl.write_text(json.dumps({'text': 'fly to boston', 'label': 'flight',
                               'tags': ['O', 'O', 'B-city']}) + '\n' +
                   json.dumps({'text': 'fares', 'label': 'fare', 'tags': 'O'}) + '\n')
  assert user_files.read_file(str(jsonl))[0] == ('fly to boston', 'flight', 'O O B-city')


@pytest.mark.parametrize('name, content, message', [
    ('x.tsv', 'good\tnice\nonly-one-field\n', r'x.tsv:2: 1 tab-separated fields'),
    ('x.tsv', 'good\tnice film\tO\n', r'x.tsv:1: 1 tags for 2 tokens'),
    ('x.jsonl', '{"text": "a", "label": "b"}\n{"text": "a"\n', r'x.jsonl:2: not valid JSON'),
    ('x.jsonl', '{"text": "a"}\n', r'x.jsonl:1: expected an object with "text" and'),
    ('x.csv', 'a,b\n', r"unknown extension '.csv'"),
])
def test_malformed_files_name_file_and_line(tmp_path, name, content, message):
  path = tmp_path / name
  path.write_text(content, encoding='utf-8')
  with pytest.raises(UserError, match=message):
    user_files.read_file(str(path))


def test_files_dataset_builds_from_config_and_encodes_tags(tmp_path, monkeypatch):
  monkeypatch.setenv('SEEDSWEEP_TFDS_DIR', str(tmp_path / 'tfds'))
  jsonl = tmp_path / 'train.jsonl'
  jsonl.write_text('\n'.join(json.dumps({'text': t, 'label': l, 'tags': g}) for t, l, g in [
      ('fly to boston', 'flight', 'O O B-city'), ('fares to denver', 'fare',
                                                  'O O B-city'),
      ('cheapest fare', 'fare', 'O O')]) + '\n')
  config = base.get_base_config().data
  config.name = 'files'
  config.files.train = str(jsonl)
  dataset = data_lib.load_dataset(config)
  assert dataset.label_names == ('fare', 'flight') and dataset.sizes() == {'train': 3}
  assert dataset.tag_names == ('B-city', 'O')
  np.testing.assert_array_equal(dataset.tags[:3], [1, 1, 0])
  config.files.train = ''
  with pytest.raises(UserError, match='config.data.files.train'):
    data_lib.load_dataset(config)


def test_any_model_trains_on_user_files_through_config_alone(tmp_path):
  for split, n in (('train', 400), ('dev', 100), ('test', 100)):
    write_tsv(tmp_path / f'{split}.tsv', demo_grammar.generate_split(split)[:n])
  out = run_launch('--config=experiments/demo.py:quick', f'--workdir={tmp_path / "run"}',
                   '--config.data.name=files', '--config.seeds=(1,2)',
                   f'--config.data.files.train={tmp_path / "train.tsv"}',
                   f'--config.data.files.dev={tmp_path / "dev.tsv"}',
                   f'--config.data.files.test={tmp_path / "test.tsv"}',
                   '--config.train.num_epochs=1', '--config.train.progress=False',
                   env={'SEEDSWEEP_TFDS_DIR': str(tmp_path / 'tfds')})
  assert out.returncode == 0, out.stderr[-3000:]
  results = json.loads((tmp_path / 'run' / 'results.json').read_text())
  assert len(results['metrics']['test_accuracy']) == 2
  assert results['provenance']['data']['sizes'] == {'train': 400, 'dev': 100,
                                                    'test': 100}
