"""Fleet: a registry of adopter projects and the same status or update across all of them.

``registry`` reads and writes the projects file, ``selection`` picks projects from it,
``units`` holds the per-project unit of work (a pure function of a project path and
options, returning a JSON-able result), ``isolation`` prepares a branch or worktree for one
project, ``runner`` fans the units out and applies in registry order, and ``summary``
words the outcome. See docs/fleet.md.
"""
