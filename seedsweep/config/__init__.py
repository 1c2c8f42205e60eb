"""The bottom layer beside :mod:`seedsweep.errors`: configs and what is done to them.

* :mod:`seedsweep.config.base`   the base config every experiment file overrides
  (every field declared once: its default, check, ...) and the helpers experiment
  files share
* :mod:`seedsweep.config.fields` how a field is declared (``Field``, its checks)
* :mod:`seedsweep.config.checks` validation before anything is built; JSON form; the
  tables derived from the declarations
* :mod:`seedsweep.config.keys`   dotted keys (``model.hidden``): get, set, format
"""
