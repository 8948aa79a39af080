"""Memory planning: liveness, placement, pools, tiling, and the plan (plan.py's docstring).

Import the modules themselves; this package's namespace is kept empty, so that a light user
(schedule.py needs liveness only) does not load the rest.
"""
