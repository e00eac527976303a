"""Fleet: the same status or update across the registered projects.

``units`` holds the per-project unit of work (a pure function of a project path and
options, returning a JSON-able result), ``runner`` fans the units out and applies in
registry order, ``flow`` is the one library call per command, and ``summary`` words the
outcome. The registry, selection, run folder and isolation are shared with deps in
``tether.runs``. See docs/fleet.md.
"""
