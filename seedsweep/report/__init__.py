"""Reports from a folder of runs: collected, summarised, rendered; plots beside them.

* :mod:`~seedsweep.report.tables` report.md, report.csv, report.tex (``write_report``)
* :mod:`~seedsweep.report.plots`  the report's figures
"""
