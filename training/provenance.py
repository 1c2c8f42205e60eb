"""What produced a result: library versions, git commit, devices."""
import importlib.metadata
import os
import platform
import subprocess

import jax

PACKAGES = ('jax', 'jaxlib', 'flax', 'optax', 'orbax-checkpoint', 'ml_collections',
            'tensorflow-datasets', 'numpy', 'absl-py')
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def library_versions() -> dict:
  versions = {'python': platform.python_version()}
  for name in PACKAGES:
    try:
      versions[name] = importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
      versions[name] = None
  return versions


def git_commit() -> str:
  """``HEAD`` of this checkout, with ``+dirty`` when files differ; '' without git."""
  def git(*args):
    return subprocess.run(['git', '-C', REPO_ROOT, *args], capture_output=True,
                          text=True, timeout=10, check=False)
  try:
    head = git('rev-parse', 'HEAD')
    if head.returncode != 0:
      return ''
    dirty = git('status', '--porcelain', '--untracked-files=no').stdout.strip()
    return head.stdout.strip() + ('+dirty' if dirty else '')
  except (OSError, subprocess.SubprocessError):
    return ''


def devices() -> dict:
  return {'backend': jax.default_backend(), 'count': jax.device_count(),
          'kind': jax.devices()[0].device_kind}
