"""What a model module declares, so that one file adds a model (docs/design.md, "How
to add a model").

A module of ``models/`` that defines ``MODELS`` (``{config.model.name: Named}``) is a
model family: :data:`seedsweep.models.REGISTRY` is the union of every family's
``MODELS`` (:mod:`seedsweep.declared` scans the package), and the tests read their
tables from it (each name's small and paper sizes). A family may also define
``PAPER_CONFIGS`` (a :class:`PaperConfigs`): its paper configs (``experiments/``) as
the tests run them, its golden runs among them.
"""
import dataclasses
from typing import Any, Callable, Mapping, Optional, Tuple


@dataclasses.dataclass(frozen=True)
class Named:
  """One registered name: the class, the fields the name fixes, and the sizes the tests
  build it at (``small``: a few units, every test file's; ``paper``: its paper's, with
  ``embed_dim=300``: tests/test_models.py's initialisation at full size)."""
  cls: type
  small: Mapping[str, Any]
  paper: Mapping[str, Any]
  fixed: Mapping[str, Any] = dataclasses.field(default_factory=dict)
  # The config's model fields (a dict) checked together beyond their types: one
  # UserError line (dclstm's dh >= 1 when dl > 0), or None.
  check: Optional[Callable[[Mapping[str, Any]], None]] = None


@dataclasses.dataclass(frozen=True)
class PaperConfigs:
  """A family's paper configs as the tests run them, each ``(experiments file, arg)``:
  ``golden`` ``{golden run name: config reference}`` (tests/golden_runs.py, to the
  bit), ``trained`` end to end under vmap, ``traced`` built on their data and their
  steps traced (tests/test_experiments.py). Every file of ``experiments/`` but the
  ``_common`` ones is named by some family (tests/test_declared.py)."""
  golden: Mapping[str, str] = dataclasses.field(default_factory=dict)
  trained: Tuple[Tuple[str, str], ...] = ()
  traced: Tuple[Tuple[str, str], ...] = ()


def paper_configs(family) -> PaperConfigs:
  """Model module ``family``'s :class:`PaperConfigs`; none declared: an empty one."""
  return getattr(family, 'PAPER_CONFIGS', PaperConfigs())
