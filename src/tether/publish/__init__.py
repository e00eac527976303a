"""The publisher's side: what an upstream repository runs to ship a release.

- ``config``: ``tether.toml``, the publisher's settings, validated at the edge.
- ``manifest``: ``tether.toml`` + the repository's tracked files -> ``.tether/manifest.json``.
- ``pack``: the manifest's files -> a reproducible ``<name>-v<V>.tar.gz`` and its ``.sha256``.

The adopter's side of a changelog (``tether changelog``) is ``tether.flows.changelog``.
Nothing here prints; the CLI renders the values returned. This package may import
``model``, ``engine``, ``profiles`` and the single-purpose modules beside them (``git``,
``fsio``, ``checksums``, ...), never ``flows``, ``cli`` or ``report``.
"""
