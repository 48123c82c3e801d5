"""One operator for a fleet: what one ``segue operator`` costs as StreamApps grow.

Issue 27, item 6; docs/benchmarks.md, "One operator for a fleet".
"""
