"""The workdir's lock is :func:`seedsweep.run.workdir.hold` (issue 80: a file of one
function merged into the workdir's); this name stays for run/prepare.py's import
until it names ``workdir.hold``, and is then deleted."""
from seedsweep.run.workdir import hold  # pylint: disable=unused-import
