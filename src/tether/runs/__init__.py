"""What every command over many registered projects shares (``fleet``, ``deps``, ``projects``).

``registry`` reads and writes the projects file; ``selection`` picks projects from it
(``--projects``, ``--keyword``) and says when none is left; ``projects`` holds the library
side of ``tether projects``; ``rundir`` is the run folder (one log per project and the whole
summary); ``isolation`` puts one project's changes in place, on a new branch or in a new
worktree; ``sections`` builds the summary sections both commands report the same way (failed
projects, missing paths, isolation). See docs/fleet.md and docs/deps.md.
"""
