"""Files written whole or not at all: the one temp-file-and-rename write every layer
uses (run outputs, reports, the vectors cache, trained word vectors).

A bottom module beside ``errors`` (the only module of seedsweep it imports), so the
data layer can use it as well as the run loop. Also the checks of paths a user
names: a folder where a file is expected, or the reverse, is one line.
"""
import contextlib
import os
import re
import secrets
from typing import Callable, List, Optional

from seedsweep.errors import UserError


def refuse_folder(path: str, where: str, expected: str) -> None:
  """UserError ``<where>=<path> is a folder`` when ``path`` is one (``where``: the flag
  or field that named it; ``expected``: the file it should be)."""
  if os.path.isdir(path):
    raise UserError(f'{where}={path} is a folder; expected {expected}')


def refuse_file(path: str, where: str, expected: str) -> None:
  """UserError ``<where>=<path> is a file`` when ``path`` exists and is not a folder."""
  if os.path.exists(path) and not os.path.isdir(path):
    raise UserError(f'{where}={path} is a file; expected {expected}')


@contextlib.contextmanager
def atomic_write(path: str, mode: str = 'w', *,
                 before_rename: Optional[Callable[[], None]] = None, **open_args):
  """A file to write that replaces ``path`` only once the block ends without error.

  The bytes go to a temporary file of a unique name in ``path``'s folder (so two
  processes writing the same file never share one), reach the disk (``fsync``), get
  the permissions a plain ``open`` would give, and are renamed onto ``path``: a reader
  sees the old file or the new one, never half of one, and an error (or a kill) in
  the block leaves the old file as it was. ``before_rename`` runs between the last
  byte and the rename (the fault-injection tests' hook).
  """
  folder = os.path.dirname(os.path.abspath(path))
  # Made as a plain open makes a file (0o666 less the umask), under a name no other
  # writer takes (O_EXCL; the writer's pid and a random part).
  tmp = os.path.join(folder, f'.{os.path.basename(path)}.{os.getpid()}.'
                             f'{secrets.token_hex(8)}.tmp')
  fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666)
  try:
    with os.fdopen(fd, mode, **open_args) as f:
      yield f
      f.flush()
      os.fsync(f.fileno())
    if before_rename is not None:
      before_rename()
    os.replace(tmp, path)
  finally:
    if os.path.exists(tmp):
      os.unlink(tmp)


# An atomic write's temporary file: .<name>.<writer pid>.<random>.tmp
_TEMPORARY = re.compile(r'^\..+\.(\d+)\.[A-Za-z0-9_]+\.tmp$')


def remove_orphaned_temporaries(folder: str, skip=()) -> List[str]:
  """Deletes the atomic writes' temporary files under ``folder`` (not in the
  subfolders named in ``skip``) whose writer is gone (a kill between the last byte
  and the rename leaves one); the paths deleted."""
  removed = []
  for where, dirs, names in os.walk(folder):
    dirs[:] = [d for d in dirs if d not in skip]
    for name in names:
      match = _TEMPORARY.match(name)
      if match and not _alive(int(match[1])):
        path = os.path.join(where, name)
        with contextlib.suppress(FileNotFoundError):
          os.unlink(path)
          removed.append(path)
  return removed


def _alive(pid: int) -> bool:
  try:
    os.kill(pid, 0)
  except ProcessLookupError:
    return False
  except PermissionError:  # another user's process
    return True
  return True
