"""predict reads what training reads (issue 78, item 6): CSV, TSV, JSONL and Parquet
with their header and columns, one answer per input row in input order (an empty row
an empty answer), the gold label beside each answer and an accuracy line; on a real
run of the demo."""
import csv
import json
import os
import sys

import pytest

import seedsweep
from seedsweep import data
from seedsweep.data import user_files
from seedsweep.errors import UserError
from seedsweep.run import loop
from seedsweep.run import predict
from tests.conftest import run_launch
from tests.conftest import small_config

ROWS = 30


@pytest.fixture(scope='module')
def run(tmp_path_factory):
  """A trained run of the demo (2 seeds, 2 epochs) and the first test examples."""
  folder = tmp_path_factory.mktemp('predict')
  config = small_config(seeds=(1, 2), epochs=2)
  workdir = str(folder / 'run')
  loop.train(config, workdir, print_fn=lambda *_: None)
  texts, labels = data.read_split(config.data, 'test')
  return workdir, texts[:ROWS], labels[:ROWS], folder


def _said():
  lines = []
  return lines, lines.append


@pytest.mark.slow
def test_a_csv_with_a_header_gets_one_answer_per_row_in_order_with_its_gold(run):
  workdir, texts, labels, folder = run
  path = folder / 'texts.csv'
  with open(path, 'w', encoding='utf-8', newline='') as f:
    writer = csv.writer(f)
    writer.writerow(['label', 'text'])
    for i, (text, label) in enumerate(zip(texts, labels)):
      writer.writerow([label, text])
      if i == 9:
        f.write('\n')  # a blank row
      if i == 19:
        writer.writerow([label, ''])  # a labelled row without text
  direct = predict.predict(None, workdir, texts, print_fn=lambda *_: None)
  lines, say = _said()
  result = seedsweep.predict(workdir, print_fn=say, input_file=str(path))
  rows = result['rows']
  assert len(rows) == ROWS + 2
  answered = [r for r in rows if r['text']]
  assert [r['text'] for r in answered] == texts  # the header is no text, no label in one
  assert [r['label'] for r in answered] == direct['labels']
  assert [r['gold'] for r in answered] == labels
  assert rows[10] == {'line': 12, 'text': '', 'label': None}
  assert rows[21]['label'] is None and rows[21]['gold'] == labels[19]
  assert [r['line'] for r in rows[:3]] == [2, 3, 4]
  ensemble = 100 * sum(p == y for p, y in zip(direct['labels'], labels)) / ROWS
  assert result['gold']['accuracy'] == pytest.approx(ensemble)
  assert result['gold']['rows'] == ROWS
  assert any(l.startswith(f'accuracy on the {ROWS} rows with a gold label: '
                          f'{ensemble:.2f}') for l in lines)


@pytest.mark.slow
def test_tsv_jsonl_and_text_files_keep_their_rows_in_place(run):
  workdir, texts, labels, folder = run
  direct = predict.predict(None, workdir, texts[:6], print_fn=lambda *_: None)
  (folder / 'plain.txt').write_text('\n'.join(texts[:3]) + '\n\n' + '\n'.join(texts[3:6])
                                    + '\n', encoding='utf-8')
  (folder / 'rows.tsv').write_text(''.join(f'{l}\t{t}\n' for t, l in zip(
      texts[:6], labels[:6])), encoding='utf-8')
  (folder / 'rows.jsonl').write_text(''.join(
      json.dumps({'text': t, 'label': l}) + '\n' + ('\n' if i == 2 else '')
      for i, (t, l) in enumerate(zip(texts[:6], labels[:6]))), encoding='utf-8')
  for name, blank in (('plain', 3), ('rows', None), ('rows', 3)):
    path = folder / (name + ('.txt' if name == 'plain' else '.tsv' if blank is None
                             else '.jsonl'))
    rows, result = predict.predict_file(None, workdir, str(path), lambda *_: None)
    records = predict.row_records(rows, result)
    labelled = [r for r in records if r['text']]
    assert [r['label'] for r in labelled] == direct['labels'], path
    assert len(records) == 6 + (blank is not None)
    if blank is not None:
      assert records[blank]['text'] == '' and records[blank]['label'] is None
      assert records[blank]['line'] == blank + 1
    assert ('gold' in result) == (name == 'rows')


@pytest.mark.slow
def test_the_command_writes_one_line_per_input_row_and_the_accuracy(run):
  workdir, texts, labels, folder = run
  path = folder / 'command.tsv'
  path.write_text('sentence\tlabel\n' + ''.join(
      f'{t}\t{l}\n' + ('\n' if i == 4 else '') for i, (t, l) in enumerate(
          zip(texts[:10], labels[:10]))), encoding='utf-8')
  out = run_launch('--mode=predict', f'--workdir={workdir}', f'--input={path}',
                   '--output=-')
  assert out.returncode == 0, out.stderr[-3000:]
  records = [json.loads(l) for l in out.stdout.splitlines()]
  assert len(records) == 11 and records[5] == {'line': 7, 'text': '', 'label': None}
  assert [r['gold'] for r in records if r['text']] == labels[:10]
  assert 'accuracy on the 10 rows with a gold label: ' in out.stderr


@pytest.mark.slow
def test_a_parquet_file_gets_one_answer_per_row_with_its_gold(run):
  """A Parquet table (Hugging Face datasets' format) as training reads it: the
  ``sentence`` column, the label beside each answer, a null text an empty row."""
  pa = pytest.importorskip('pyarrow')
  pq = pytest.importorskip('pyarrow.parquet')
  workdir, texts, labels, folder = run
  path = str(folder / 'texts.parquet')
  pq.write_table(pa.table({'idx': list(range(11)),
                           'sentence': texts[:5] + [None] + texts[5:10],
                           'label': labels[:5] + ['negative'] + labels[5:10]}), path)
  direct = predict.predict(None, workdir, texts[:10], print_fn=lambda *_: None)
  lines, say = _said()
  result = seedsweep.predict(workdir, print_fn=say, input_file=path)
  rows = result['rows']
  assert [r['line'] for r in rows] == list(range(1, 12))
  assert rows[5] == {'line': 6, 'text': '', 'label': None, 'gold': 'negative'}
  answered = [r for r in rows if r['text']]
  assert [r['text'] for r in answered] == texts[:10]
  assert [r['label'] for r in answered] == direct['labels']
  assert [r['gold'] for r in answered] == labels[:10]
  ensemble = 100 * sum(p == y for p, y in zip(direct['labels'], labels)) / 10
  assert result['gold']['accuracy'] == pytest.approx(ensemble)
  assert any(l.startswith(f'accuracy on the 10 rows with a gold label: {ensemble:.2f}')
             for l in lines)


def test_parquet_inputs_take_the_training_columns_and_need_pyarrow(tmp_path,
                                                                   monkeypatch):
  pa = pytest.importorskip('pyarrow')
  pq = pytest.importorskip('pyarrow.parquet')
  path = str(tmp_path / 'named.parquet')
  pq.write_table(pa.table({'review': ['a fine film', ''], 'stars': [5, 1]}), path)
  assert user_files.read_inputs(path, user_files.Columns('review', 'stars')) == [
      user_files.InputRow(1, 'a fine film', '5'), user_files.InputRow(2, '', '1')]
  assert user_files.read_inputs(path, user_files.Columns('review', '')) == [
      user_files.InputRow(1, 'a fine film', None), user_files.InputRow(2, '', None)]
  with pytest.raises(UserError, match=r"^.*named.parquet: columns \['review', 'stars'\]; "
                     r'expected a text column text/sentence '
                     r'\(config.data.files.text_column\)$'):
    user_files.read_inputs(path)
  monkeypatch.setitem(sys.modules, 'pyarrow.parquet', None)  # as if not installed
  with pytest.raises(UserError, match=r"^.*named.parquet: reading Parquet needs "
                     r"pyarrow: pip install 'seedsweep\[parquet\]'$"):
    user_files.read_inputs(path, user_files.Columns('review', ''))


def test_input_files_are_read_by_the_training_column_rules(tmp_path):
  path = tmp_path / 'named.csv'
  path.write_text('id,review,stars\n1,a fine film,5\n2,,1\n', encoding='utf-8')
  rows = user_files.read_inputs(str(path), user_files.Columns('review', 'stars'))
  assert rows == [user_files.InputRow(2, 'a fine film', '5'),
                  user_files.InputRow(3, '', '1')]
  with pytest.raises(UserError, match=r"named.csv:1: the header .* has no text column "
                     r"'review'"):
    path.write_text('id,text\n1,a film\n', encoding='utf-8')
    user_files.read_inputs(str(path), user_files.Columns('review', ''))
  bad = tmp_path / 'bad.jsonl'
  bad.write_text('{"text": "fine"}\n{"sentence": "no text key"}\n', encoding='utf-8')
  with pytest.raises(UserError, match=r'bad.jsonl:2: expected an object with "text"'):
    user_files.read_inputs(str(bad))
  empty = tmp_path / 'empty.txt'
  empty.write_text('\n\n', encoding='utf-8')
  with pytest.raises(UserError, match='no text in it'):
    user_files.read_inputs(str(empty))
  wide = tmp_path / 'wide.tsv'
  wide.write_text('a\tb\tc\td\n', encoding='utf-8')
  with pytest.raises(UserError, match=r"wide.tsv:1: the first row \['a', 'b', 'c', 'd'\] "
                     r'\(4 TAB-separated fields\) is no headerless row text, '
                     r'label<TAB>text\[<TAB>tags\], and as a header it has no text '
                     r"column 'text'/'sentence'; set config.data.files.text_column"):
    user_files.read_inputs(str(wide))


def test_predict_reads_its_input_with_the_runs_encoding_and_checks(tmp_path):
  """The run's config.data.files (its columns, its encoding) reads the input; a
  run stored before the encoding field read UTF-8; a text is never cut at a comma."""
  workdir = tmp_path / 'run'
  workdir.mkdir()
  stored = workdir / 'config.json'
  stored.write_text(json.dumps({'data': {'files': {'text_column': 'review'}}}))
  assert predict.columns_of(None, str(workdir)) == user_files.Columns('review', '')
  stored.write_text(json.dumps({'data': {'files': {'encoding': 'cp1252'}}}))
  path = tmp_path / 'texts.csv'
  path.write_bytes('text\nun café\n"un film, long"\n'.encode('cp1252'))
  columns = predict.columns_of(None, str(workdir))
  assert predict.read_inputs(str(path), columns) == [
      user_files.InputRow(2, 'un café', None),
      user_files.InputRow(3, 'un film, long', None)]
  config = small_config()
  config.data.files.encoding = 'cp1252'
  assert predict.columns_of(config, str(workdir)) == columns
  with pytest.raises(UserError, match=r'texts.csv:2: not utf-8 text'):
    predict.read_inputs(str(path))
  path.write_text('text\nun café\nun film, long\n', encoding='cp1252')
  with pytest.raises(UserError, match=r"texts.csv:3: 2 comma-separated fields, but the "
                     r"header \(line 1\) has 1 \('text'\); a comma in a text splits it"):
    predict.read_inputs(str(path), columns)
