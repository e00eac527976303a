"""The deterministic half of a review gate for the shell a framework ships.

``scope`` says which files a review covers, ``shell`` runs shellcheck and tether's own
lenses over them, ``sidecar`` records a reviewer's findings, and ``clearance`` ties a
verdict to a digest of exactly the committed bytes that were reviewed. docs/audit.md
describes the commands and the finding vocabulary.
"""
