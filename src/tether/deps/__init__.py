"""Dependencies across many projects: scan, align, gate, apply, summarise.

``manifests`` reads a project's package.json files, pnpm-workspace.yaml and pyproject.toml
into occurrences (one declared version at one place); ``npmspec`` and ``pyspec`` say which
declared ranges can be rewritten and how; ``registries`` fetches each package once per run;
``targets`` picks each occurrence's target for the chosen level; ``align`` groups the
occurrences by package and applies the conflict policy; ``overrides`` and ``gate`` carry
the person's decisions; ``apply`` edits the files in place and runs the installs;
``summary`` words the outcome; ``engines`` handles the Node and package-manager level;
``snapshot`` records and checks a tree's file hashes; ``flow`` and ``commands`` are the
library calls the command line makes. The registry, selection, run folder and isolation are
shared with the fleet in ``tether.runs``. See docs/deps.md.
"""
